/** `olmpub crd diff` on real files and directories: exit codes, messages and JSON output. */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { crdDiff } from '../../../cli/commands/crd.js';
import type { CommandContext } from '../../../cli/command.js';
import { OlmpubError } from '../../../lib/errors.js';

const crdYAML = (name: string, properties: string, extra = '') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${name}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
${properties}${extra}
`;

async function runDiff(args: string[], output: CommandContext['output'] = 'text'): Promise<{ code: number; out: string }> {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (c: Buffer) => (out += c.toString()));
  const code = await crdDiff.run({ values: {}, positionals: args, output, stdout: stream as unknown as NodeJS.WriteStream, stderr: stream as unknown as NodeJS.WriteStream });
  return { code: code ?? 0, out };
}

describe('olmpub crd diff', () => {
  let dir: string;
  const A = '              a: {type: string}\n';
  const B = '              b: {type: integer, minimum: 0}\n';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-crd-diff-'));
    await writeFile(join(dir, 'old.yaml'), crdYAML('widgets.example.com', A + B));
    await writeFile(join(dir, 'added-optional.yaml'), crdYAML('widgets.example.com', A + B + '              c: {type: string}\n'));
    await writeFile(join(dir, 'removed.yaml'), crdYAML('widgets.example.com', A));
    await mkdir(join(dir, 'old-dir/sub'), { recursive: true });
    await mkdir(join(dir, 'new-dir'), { recursive: true });
    // Directories: multi-document files, other kinds ignored, JSON accepted.
    await writeFile(join(dir, 'old-dir/sub/crds.yaml'), `${crdYAML('widgets.example.com', A + B)}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n${crdYAML('gadgets.example.com', A)}`);
    await writeFile(join(dir, 'new-dir/widgets.json'), JSON.stringify((await import('yaml')).parse(crdYAML('widgets.example.com', A + B))));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('passes on an added optional field (exit 0)', async () => {
    const r = await runDiff([join(dir, 'old.yaml'), join(dir, 'added-optional.yaml')]);
    assert.equal(r.code, 0);
    assert.match(r.out, /✓ widgets\.example\.com {2}compatible changes only/);
  });

  it('fails on a removed field with OLM\'s message (exit 1)', async () => {
    const r = await runDiff([join(dir, 'old.yaml'), join(dir, 'removed.yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.out, /validating upgrade for CRD "widgets\.example\.com": existingFieldRemoval: crd\/widgets\.example\.com version\/v1 field\/\^\.spec\.b may not be removed/);
    assert.match(r.out, /CRD upgrade is unsafe/);
  });

  it('matches CRDs by name across directories; a CRD only in OLD fails as removed', async () => {
    const r = await runDiff([join(dir, 'old-dir'), join(dir, 'new-dir')], 'json');
    assert.equal(r.code, 1);
    const data = JSON.parse(r.out) as { passed: boolean; crds: { name: string; status: string; messages: string[] }[] };
    assert.equal(data.passed, false);
    assert.deepEqual(data.crds.map((c) => `${c.name}:${c.status}`), ['gadgets.example.com:removed', 'widgets.example.com:unchanged']);
  });

  it('a CRD only in NEW passes', async () => {
    const r = await runDiff([join(dir, 'new-dir'), join(dir, 'old-dir')], 'json');
    const data = JSON.parse(r.out) as { passed: boolean; crds: { name: string; status: string }[] };
    assert.equal(r.code, 0);
    assert.deepEqual(data.crds.map((c) => c.status), ['added', 'unchanged']);
  });

  it('usage errors: wrong argument count, missing path', async () => {
    await assert.rejects(runDiff([join(dir, 'old.yaml')]), (e: OlmpubError) => e.kind === 'usage');
    await assert.rejects(runDiff([join(dir, 'nope.yaml'), join(dir, 'old.yaml')]), (e: OlmpubError) => e.kind === 'usage' && /no such file/.test(e.message));
  });
});
