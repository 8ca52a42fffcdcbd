/** `olmpub rbac check` on real files: least privilege, declared == used, installer role, preflight report. */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import YAML from 'yaml';
import { rbacCheck } from '../../../cli/commands/rbac.js';
import type { CommandContext } from '../../../cli/command.js';
import { deriveInstallerRole, PREFLIGHT_HEADER } from '../../../bundle/rbac/installer.js';
import { yamlStream } from '../../../lib/canonical.js';
import { OlmpubError } from '../../../lib/errors.js';
import { sampleBundle } from '../../fixtures/rbac/sample-bundle.js';

async function check(values: Record<string, string>, output: CommandContext['output'] = 'text'): Promise<{ code: number; out: string }> {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (c: Buffer) => (out += c.toString()));
  const code = await rbacCheck.run({ values, positionals: [], output, stdout: stream as unknown as NodeJS.WriteStream, stderr: stream as unknown as NodeJS.WriteStream });
  return { code: code ?? 0, out };
}

const GOOD_RULES = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: operator}
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch]
- apiGroups: [example.com]
  resources: [widgets/status]
  verbs: [update]
`;

describe('olmpub rbac check', () => {
  let dir: string;
  const NS = 'demo-system';
  const bundle = sampleBundle('demo', NS);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-rbac-check-'));
    await writeFile(join(dir, 'good.yaml'), GOOD_RULES);
    await writeFile(join(dir, 'wildcard.yaml'), GOOD_RULES.replace('verbs: [update]', 'verbs: ["*"]'));
    await writeFile(join(dir, 'used.yaml'), 'calls:\n- GET /apis/apps/v1/deployments\n- GET /apis/apps/v1/deployments?watch=true\n- GET /apis/apps/v1/namespaces/a/deployments/d\n- PUT /apis/example.com/v1/namespaces/a/widgets/w/status\n');
    await writeFile(
      join(dir, 'audit.log'),
      [
        { kind: 'Event', verb: 'list', objectRef: { apiGroup: 'apps', resource: 'deployments' } },
        { kind: 'Event', verb: 'create', objectRef: { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'a' } },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
    );
    await mkdir(join(dir, 'bundle'));
    await writeFile(join(dir, 'bundle/manifests.yaml'), yamlStream(bundle.objects, false));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('passes narrow rules whose every permission the code uses', async () => {
    const r = await check({ rules: join(dir, 'good.yaml'), used: join(dir, 'used.yaml') });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /✓ least privilege/);
    assert.match(r.out, /✓ declared == used/);
  });

  it('fails a wildcard rule, naming file:line and the rule', async () => {
    const r = await check({ rules: join(dir, 'wildcard.yaml') });
    assert.equal(r.code, 1);
    assert.match(r.out, /wildcard\.yaml:8 ClusterRole\/operator rules\[1\]: verbs contain "\*"/);
  });

  it('fails undeclared calls and unused permissions (audit log input)', async () => {
    const r = await check({ rules: join(dir, 'good.yaml'), used: join(dir, 'audit.log') }, 'json');
    assert.equal(r.code, 1);
    const data = JSON.parse(r.out) as { declaredUsed: { undeclared: { verb: string; resource: string }[]; unused: { rule: { verbs: string[] } }[] } };
    assert.deepEqual(data.declaredUsed.undeclared.map((c) => `${c.verb} ${c.resource}`), ['create leases']);
    assert.deepEqual(data.declaredUsed.unused.map((u) => u.rule.verbs.join(',')), ['get,watch', 'update']);
  });

  it('writes the installer ServiceAccount, ClusterRole and ClusterRoleBinding', async () => {
    const file = join(dir, 'out/installer.yaml');
    const r = await check({ bundle: join(dir, 'bundle'), extension: 'demo', namespace: NS, 'emit-installer-role': file });
    assert.equal(r.code, 0, r.out);
    const docs = YAML.parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as { kind: string; rules?: unknown[] });
    assert.deepEqual(docs.map((d) => d.kind), ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    assert.equal(docs[1]!.rules!.length, deriveInstallerRole({ objects: bundle.objects, extensionName: 'demo', installNamespace: NS }).rules.length);
  });

  it('reports what the ServiceAccount lacks in OLM 1.10\'s preflight format', async () => {
    // The derived role without two rules: the events rule the bundle grants, and the finalizers rule.
    const derived = deriveInstallerRole({ objects: bundle.objects, extensionName: 'demo', installNamespace: NS }).clusterRole;
    const partial = { ...derived, rules: (derived.rules as { resources?: string[] }[]).filter((r) => !['events', 'clusterextensions/finalizers'].includes(r.resources?.[0] ?? '')) };
    await writeFile(join(dir, 'sa.yaml'), yamlStream([partial], false));
    const r = await check({ bundle: join(dir, 'bundle'), extension: 'demo', namespace: NS, 'service-account-rules': join(dir, 'sa.yaml') }, 'json');
    assert.equal(r.code, 1);
    const data = JSON.parse(r.out) as { preflight: { message: string } };
    assert.equal(
      data.preflight.message,
      [
        PREFLIGHT_HEADER,
        '  Namespace:"" APIGroups:[] Resources:[events] Verbs:[create,patch]',
        '  Namespace:"" APIGroups:[olm.operatorframework.io] Resources:[clusterextensions/finalizers] ResourceNames:[demo] Verbs:[update]',
      ].join('\n'),
    );
    // With the derived role the check passes.
    await writeFile(join(dir, 'derived.yaml'), yamlStream([derived], false));
    const ok = await check({ bundle: join(dir, 'bundle'), extension: 'demo', namespace: NS, 'service-account-rules': join(dir, 'derived.yaml') });
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /✓ OLM 1\.10 pre-authorization passes/);
  });

  it('usage errors: --extension without --bundle, rendered manifests without --extension', async () => {
    await assert.rejects(check({ extension: 'x', namespace: 'y' }), (e: OlmpubError) => e.kind === 'usage' && /--bundle/.test(e.message));
    await assert.rejects(check({ extension: 'x' }), (e: OlmpubError) => e.kind === 'usage' && /--namespace/.test(e.message));
    await assert.rejects(check({ bundle: join(dir, 'bundle') }), (e: OlmpubError) => e.kind === 'usage' && /--extension/.test(e.message));
  });
});
