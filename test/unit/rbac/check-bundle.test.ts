/**
 * `olmpub rbac check` on the operator itself: the install manifests model with no arguments, our own
 * registry+v1 bundle (built in-process with renderReleaseArtifacts) passes, and the same bundle with a
 * wildcard rule injected into its CSV fails with exit 1 and a finding naming the CSV file, line and rule.
 * With --extension/--namespace the installer role is derived from what OLM renders from the bundle, so it
 * names OLM's hashed ClusterRoles.
 */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import YAML from 'yaml';
import type { CommandContext } from '../../../cli/command.js';
import { modelRbacObjects, rbacCheck } from '../../../cli/commands/rbac.js';
import { renderReleaseArtifacts, type ReleaseArtifacts } from '../../../bundle/release.js';
import { lintCSVPermissions, permissionObjectName, readRegistryV1, renderRegistryV1, type ClusterServiceVersion } from '../../../bundle/registryv1/index.js';
import { breakdownRule, deriveInstallerRole, ruleFromObject, scopedRulesOf } from '../../../bundle/rbac/index.js';

const IMAGE = `ghcr.io/x/y@sha256:${'0123456789abcdef'.repeat(4)}`;
const CSV_PATH = 'manifests/inference-operator.clusterserviceversion.yaml';

async function check(values: Record<string, string>, output: CommandContext['output'] = 'text'): Promise<{ code: number; out: string }> {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (c: Buffer) => (out += c.toString()));
  const code = await rbacCheck.run({ values, positionals: [], output, stdout: stream as unknown as NodeJS.WriteStream, stderr: stream as unknown as NodeJS.WriteStream });
  return { code: code ?? 0, out };
}

async function writeBundle(dir: string, files: { path: string; content: string }[]): Promise<void> {
  for (const f of files) {
    await mkdir(dirname(join(dir, f.path)), { recursive: true });
    await writeFile(join(dir, f.path), f.content);
  }
}

describe('olmpub rbac check on the operator and its bundle', function () {
  this.timeout(60_000); // building the bundle gzips the CRDs
  let dir: string;
  let artifacts: ReleaseArtifacts;
  let wildcardRule: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-rbac-bundle-'));
    artifacts = await renderReleaseArtifacts({ version: '1.2.0', image: IMAGE, created: 0 });
    await writeBundle(join(dir, 'ours'), artifacts.bundle.files);
    // The same bundle with verbs ["*"] on one clusterPermissions rule.
    const files = artifacts.bundle.files.map((f) => {
      if (f.path !== CSV_PATH) return f;
      const csv = YAML.parse(f.content) as ClusterServiceVersion;
      const rules = csv.spec.install.spec.clusterPermissions![0]!.rules;
      wildcardRule = rules.findIndex((r) => r.resources?.includes('deployments'));
      assert.ok(wildcardRule >= 0);
      rules[wildcardRule]!.verbs = ['*'];
      return { ...f, content: YAML.stringify(csv, { lineWidth: 0 }) };
    });
    await writeBundle(join(dir, 'wildcard'), files);
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('with no arguments checks the install manifests model and passes', async () => {
    const r = await check({});
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /checking the operator's RBAC from the install manifests model/);
    assert.match(r.out, /✓ least privilege/);
    assert.match(r.out, /rbac check passed/);
  });

  it('declared == used on the model: passes when the calls exercise every rule, fails naming the declaration otherwise', async () => {
    const scoped = scopedRulesOf(modelRbacObjects());
    const calls = scoped.flatMap((s) =>
      breakdownRule(s.rule).map((p) =>
        p.nonResourceURLs ? { verb: p.verbs[0], path: p.nonResourceURLs[0] } : { verb: p.verbs[0], group: p.apiGroups![0], resource: p.resources![0], ...(s.namespace ? { namespace: s.namespace } : {}) },
      ),
    );
    await writeFile(join(dir, 'all-calls.yaml'), YAML.stringify({ calls }));
    const ok = await check({ used: join(dir, 'all-calls.yaml') });
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /✓ declared == used/);

    const fewer = calls.filter((c) => !('resource' in c) || c.resource !== 'httproutes');
    await writeFile(join(dir, 'fewer-calls.yaml'), YAML.stringify({ calls: fewer }));
    const bad = await check({ used: join(dir, 'fewer-calls.yaml') });
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, /ClusterRole\/inference-operator-manager rules\[\d+\] \(declared at [^)]*reconciler\.[jt]s:\d+\): \{APIGroups:\["gateway\.networking\.k8s\.io"\], Resources:\["httproutes"\].* is never used/);
  });

  it('passes on our own registry+v1 bundle', async () => {
    const r = await check({ bundle: join(dir, 'ours') });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /checking the registry\+v1 bundle .* \(ClusterServiceVersion inference-operator\.v1\.2\.0/);
    assert.match(r.out, /✓ least privilege/);
    assert.deepEqual(lintCSVPermissions({ path: CSV_PATH, object: artifacts.bundle.csv as never }), []);
  });

  it('fails with exit 1 on the bundle with a wildcard rule, naming the CSV file, line and rule', async () => {
    const r = await check({ bundle: join(dir, 'wildcard') });
    assert.equal(r.code, 1, r.out);
    const csvFile = join(dir, 'wildcard', CSV_PATH);
    const lines = (await readFile(csvFile, 'utf8')).split('\n');
    const m = new RegExp(`${csvFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+) ClusterServiceVersion inference-operator\\.v1\\.2\\.0 spec\\.install\\.spec\\.clusterPermissions\\[0\\]\\.rules\\[${wildcardRule}\\] \\(ServiceAccount inference-operator\\): verbs contain "\\*": .*Resources:\\["deployments"\\].* \\[wildcard-verb\\]`).exec(r.out);
    assert.ok(m, r.out);
    assert.match(lines[Number(m[1]) - 1]!, /apiGroups|- /, 'the line is the rule in the CSV');
    assert.match(r.out, /hint: list the verbs the code calls/);
    assert.match(r.out, /rbac check failed/);
    const json = JSON.parse((await check({ bundle: join(dir, 'wildcard') }, 'json')).out) as { passed: boolean; leastPrivilege: { findings: { code: string; field: string; index: number }[] } };
    assert.equal(json.passed, false);
    assert.deepEqual(json.leastPrivilege.findings.map((f) => [f.code, f.field, f.index]), [['wildcard-verb', 'clusterPermissions', wildcardRule]]);
  });

  it('derives the installer role from the objects OLM renders (hashed ClusterRole names), and writes it', async () => {
    const file = join(dir, 'installer.yaml');
    const r = await check({ bundle: join(dir, 'ours'), extension: 'inference', namespace: 'inference-system', 'emit-installer-role': file });
    assert.equal(r.code, 0, r.out);
    const docs = YAML.parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; rules?: unknown[] });
    assert.deepEqual(docs.map((d) => d.kind), ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    assert.deepEqual(docs[0]!.metadata, { name: 'inference-installer', namespace: 'inference-system' });

    const rendered = renderRegistryV1(readRegistryV1(artifacts.bundle.files), { installNamespace: 'inference-system', olmVersion: '1.10' });
    const expected = deriveInstallerRole({ objects: rendered, extensionName: 'inference', installNamespace: 'inference-system' }, { name: 'inference-installer' });
    assert.deepEqual(docs[1]!.rules, expected.clusterRole.rules);
    const csv = artifacts.bundle.csv;
    const hashed = permissionObjectName(csv.metadata.name, csv.spec.install.spec.clusterPermissions![0]!);
    const clusterRoleNames = (docs[1]!.rules ?? []).map(ruleFromObject).find((x) => x.resources?.includes('clusterroles') && x.resourceNames)?.resourceNames;
    assert.ok(clusterRoleNames?.includes(hashed), `the role names OLM's ClusterRole ${hashed}: ${JSON.stringify(clusterRoleNames)}`);
    assert.ok(clusterRoleNames?.includes('inference-operator-metrics-reader'));
    assert.ok(!clusterRoleNames?.some((n) => n === 'inference-operator-manager'), 'not the model names');
  });

  it('usage errors for the registry+v1 bundle: --emit-installer-role needs --extension and --namespace', async () => {
    await assert.rejects(check({ bundle: join(dir, 'ours'), 'emit-installer-role': join(dir, 'x.yaml') }), /need --bundle DIR, --extension NAME and --namespace NS/);
    await assert.rejects(check({ bundle: join(dir, 'ours'), used: join(dir, 'all-calls.yaml') }), /--used compares the operator's own rules/);
  });
});
