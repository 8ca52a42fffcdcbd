import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/env.js';
import { CATALOG_COMMANDS } from '../../../cli/commands/catalog.js';
import { main } from '../../../cli/main.js';

const TPL = join(REPO_ROOT, 'test/fixtures/catalogs/templates');
const FIX = join(REPO_ROOT, 'test/fixtures/catalogs');

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

/** Runs `olmpub catalog <verb> ...` in-process through the CLI's own entry point, capturing both streams. */
async function olmpub(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(args, { stdout: stdout as unknown as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('olmpub catalog (CLI)', function () {
  this.timeout(30_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-catcli-'));
    for (const f of ['inference-operator.yaml', 'icon.svg', 'bundles.yaml']) await copyFile(join(TPL, f), join(dir, f));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('offers the six catalog commands, each explained with examples', async () => {
    assert.deepEqual(CATALOG_COMMANDS.map((c) => `${c.noun} ${c.verb}`), ['catalog render', 'catalog validate', 'catalog graph', 'catalog promote', 'catalog deprecate', 'catalog upgrades']);
    for (const c of CATALOG_COMMANDS) assert.ok(c.examples && c.examples.length >= 2 && c.description, c.verb);
    const help = await olmpub(['catalog', 'upgrades', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: olmpub catalog upgrades \[DIR\] \[options\]/);
    assert.match(help.stdout, /Examples:\n  olmpub catalog upgrades --from 1\.0\.0/);
  });

  it('render writes the golden catalog; validate passes it (text and -o json)', async () => {
    const out = join(dir, 'out');
    const r = await olmpub(['catalog', 'render', '-t', join(dir, 'inference-operator.yaml'), '--bundle-info', join(dir, 'bundles.yaml'), '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /stable-v1 \(default\)\s+1\.0\.1/);
    assert.equal(await readFile(join(out, 'inference-operator/catalog.json'), 'utf8'), await readFile(join(FIX, 'valid/rendered-template/catalog/inference-operator/catalog.json'), 'utf8'));
    const v = await olmpub(['catalog', 'validate', out]);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /valid \(1 package, 15 channels, 5 bundles\)/);
    const j = JSON.parse((await olmpub(['catalog', 'validate', out, '-o', 'json'])).stdout) as { passed: boolean };
    assert.equal(j.passed, true);
  });

  it('render refuses a template without bundle facts (exit 1) unless stand-ins are allowed', async () => {
    const r = await olmpub(['catalog', 'render', '-t', join(dir, 'inference-operator.yaml'), '--out', join(dir, 'preview')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /inference-operator\.yaml:20: no bundle information for version 0\.9\.0/);
    assert.equal((await olmpub(['catalog', 'render', '-t', join(dir, 'inference-operator.yaml'), '--out', join(dir, 'preview'), '--allow-missing-bundles', '-o', 'json'])).code, 0);
  });

  it('validate prints the tree and exits 1 on a broken catalog; -o json gives {passed, error}', async () => {
    const d = join(FIX, 'invalid/two-heads/catalog');
    const r = await olmpub(['catalog', 'validate', d]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /└── foo\/catalog\.yaml:2: invalid package "foo"[\s\S]*multiple channel heads found in graph: foo\.v1\.1\.0, foo\.v1\.2\.0/);
    const j = JSON.parse((await olmpub(['catalog', 'validate', d, '-o', 'json'])).stdout) as { passed: boolean; error: { message: string; children: unknown[] } };
    assert.equal(j.passed, false);
    assert.match(j.error.message, /multiple channel heads/);
    const v1 = await olmpub(['catalog', 'validate', join(FIX, 'invalid/olmv1-gvk-required/catalog'), '--opm-rules']);
    assert.equal(v1.code, 0, 'opm rules only');
    assert.equal((await olmpub(['catalog', 'validate', join(dir, 'nope')])).code, 2);
  });

  it('graph prints Mermaid and writes SVG and HTML files', async () => {
    const r = await olmpub(['catalog', 'graph', join(FIX, 'valid/rendered-template/catalog'), '--svg', join(dir, 'g.svg'), '--html', join(dir, 'g.html')]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.startsWith('graph LR\n'));
    assert.match(await readFile(join(dir, 'g.svg'), 'utf8'), /^<svg xmlns/);
    assert.match(await readFile(join(dir, 'g.html'), 'utf8'), /<title>Upgrade graph: inference-operator<\/title>/);
    const preview = await olmpub(['catalog', 'graph', '--template', join(dir, 'inference-operator.yaml')]);
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /subgraph inference-operator-stable-v1\["stable-v1"\]/);
  });

  it('promote and deprecate edit the template; upgrades explains the answer', async () => {
    const t = join(dir, 'inference-operator.yaml');
    const p = await olmpub(['catalog', 'promote', '1.1.0', '--to', 'stable', '-t', t]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /version 1\.1\.0: fast → stable\n\s+channel stable-v1: head 1\.0\.1 → 1\.1\.0/);
    assert.match(await readFile(t, 'utf8'), /version: 1\.1\.0\n.*\n    stage: stable/);
    const d = await olmpub(['catalog', 'deprecate', '--channel', 'candidate-v0', '-m', 'use stable-v1', '-t', t, '-o', 'json']);
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual((JSON.parse(d.stdout) as { summary: string[] }).summary, ['channel candidate-v0 deprecated']);
    assert.equal((await olmpub(['catalog', 'deprecate', '--channel', 'x', '--bundle', '1.0.0', '-m', 'm', '-t', t])).code, 2);
    assert.equal((await olmpub(['catalog', 'promote', '1.1.0', '--to', 'fast', '-t', t])).code, 1, 'demotion refused');
    const u = await olmpub(['catalog', 'upgrades', '--template', t, '--from', '1.0.0', '--channel', 'stable-v1']);
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /→ OLM v1 upgrades to 1\.1\.0 \(inference-operator\.v1\.1\.0\)\n    because stable-v1: skips inference-operator\.v1\.0\.0/);
    const none = await olmpub(['catalog', 'upgrades', join(FIX, 'valid/rendered-template/catalog'), '--from', '1.0.1', '--version', '<1.0.0', '-o', 'json']);
    assert.equal(none.code, 1);
    assert.match((JSON.parse(none.stdout) as { error: string }).error, /no bundles found for package "inference-operator" matching version "<1\.0\.0"/);
  });
});
