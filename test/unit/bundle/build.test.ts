/** `olmpub bundle build|validate` and `olmpub chart render` through the real CLI, on temporary directories. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { REPO_ROOT } from '../../support/env.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { tree } from '../../support/files.js';

const BIN = join(REPO_ROOT, 'bin/olmpub.js');
const IMAGE = `ghcr.io/acme/inference-operator@sha256:${'f'.repeat(64)}`;

function olmpub(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('olmpub bundle build (CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-bundle-build-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the chart, the bundle and the images; twice gives byte-identical files', async () => {
    const env = { SOURCE_DATE_EPOCH: '1767225600' };
    const a = olmpub(['bundle', 'build', '--out', join(dir, 'a'), '--version', '1.4.0', '--image', IMAGE, '-o', 'json'], env);
    assert.equal(a.code, 0, a.stderr);
    const b = olmpub(['bundle', 'build', '--out', join(dir, 'b'), '--version', '1.4.0', '--image', IMAGE], env);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /built inference-operator 1\.4\.0/);
    const ta = await tree(join(dir, 'a'));
    const tb = await tree(join(dir, 'b'));
    assert.deepEqual([...ta.keys()].sort(), [...tb.keys()].sort());
    for (const [path, bytes] of ta) assert.ok(bytes.equals(tb.get(path)!), `${path} differs between two builds`);
    for (const p of ['chart/inference-operator-1.4.0.tgz', 'bundle/metadata/annotations.yaml', 'bundle/manifests/inference-operator.clusterserviceversion.yaml', 'oci/index.json', 'oci/oci-layout', '.olmpub-build.json']) {
      assert.ok(ta.has(p), p);
    }
    const summary = JSON.parse(a.stdout);
    assert.equal(summary.version, '1.4.0');
    assert.equal(summary.image, IMAGE);
    assert.equal(summary.bundle.csv, 'inference-operator.v1.4.0');
    const store = new OciLayoutStore(join(dir, 'a', 'oci'));
    assert.deepEqual(await store.tags(), ['bundle-v1.4.0', 'chart-1.4.0']);
    assert.equal((await store.resolve('bundle-v1.4.0')).digest, summary.images.bundle.digest);
    assert.equal((await store.resolve('chart-1.4.0')).digest, summary.images.chart.digest);
    const csv = YAML.parse(ta.get('bundle/manifests/inference-operator.clusterserviceversion.yaml')!.toString('utf8'));
    assert.equal(csv.metadata.annotations.createdAt, '2026-01-01T00:00:00Z', 'createdAt from SOURCE_DATE_EPOCH');

    const c = olmpub(['bundle', 'build', '--out', join(dir, 'c'), '--version', '1.4.0', '--image', IMAGE], { SOURCE_DATE_EPOCH: '1767225601' });
    assert.equal(c.code, 0, c.stderr);
    assert.ok(!(await readFile(join(dir, 'c', 'chart/inference-operator-1.4.0.tgz'))).equals(ta.get('chart/inference-operator-1.4.0.tgz')!), 'the timestamp is an input');
  });

  it('replaces its own output atomically, and nothing else', async () => {
    const out = join(dir, 'replace');
    assert.equal(olmpub(['bundle', 'build', '--out', out, '--version', '1.0.0', '--image', IMAGE]).code, 0);
    const before = await tree(out);
    // Fails validation (the default channel is not a channel) before writing: the old output stays.
    const bad = olmpub(['bundle', 'build', '--out', out, '--version', '2.0.0', '--image', IMAGE, '--channels', 'fast', '--default-channel', 'stable']);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /bundle-bad-default-channel/);
    assert.deepEqual([...(await tree(out)).keys()].sort(), [...before.keys()].sort());
    assert.ok((await readdir(dir)).every((n) => !n.startsWith('.replace.')), 'no temporary directory left behind');
    assert.equal(olmpub(['bundle', 'build', '--out', out, '--version', '2.0.0', '--image', IMAGE]).code, 0);
    assert.ok((await tree(out)).has('chart/inference-operator-2.0.0.tgz'));
    assert.ok(!(await tree(out)).has('chart/inference-operator-1.0.0.tgz'), 'the old build is gone');

    const foreign = join(dir, 'foreign');
    await mkdir(foreign);
    await writeFile(join(foreign, 'precious.txt'), 'keep me');
    const r = olmpub(['bundle', 'build', '--out', foreign, '--image', IMAGE]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bundle-out-not-ours/);
    assert.equal(await readFile(join(foreign, 'precious.txt'), 'utf8'), 'keep me');
  });

  it('needs a digest-pinned operator image and a semver version', () => {
    const repo = olmpub(['bundle', 'build', '--out', join(dir, 'x'), '--image-repository', 'Not A Repo']);
    assert.equal(repo.code, 2);
    assert.match(repo.stderr, /not pinned by digest/);
    const tag = olmpub(['bundle', 'build', '--out', join(dir, 'x'), '--image', 'ghcr.io/acme/op:1.0']);
    assert.equal(tag.code, 2);
    assert.match(tag.stderr, /not pinned by digest/);
    const version = olmpub(['bundle', 'build', '--out', join(dir, 'x'), '--image', IMAGE, '--version', 'v1']);
    assert.equal(version.code, 2);
  });

  it('bundle validate passes the built bundle and fails a broken one', async () => {
    const out = join(dir, 'v');
    assert.equal(olmpub(['bundle', 'build', '--out', out, '--version', '1.0.0', '--image', IMAGE]).code, 0);
    const ok = olmpub(['bundle', 'validate', join(out, 'bundle')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /valid registry\+v1 bundle/);
    const broken = join(dir, 'broken');
    await cp(join(out, 'bundle'), broken, { recursive: true });
    await mkdir(join(broken, 'manifests', 'nested'));
    await writeFile(join(broken, 'manifests', 'nested', 'x.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n');
    await writeFile(join(broken, 'manifests', 'deploy.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n');
    const bad = olmpub(['bundle', 'validate', broken, '-o', 'json']);
    assert.equal(bad.code, 1);
    const codes = (JSON.parse(bad.stdout).error.children as { code: string }[]).map((c) => c.code).sort();
    assert.deepEqual(codes, ['bundle-kind-not-allowed', 'bundle-manifests-not-flat']);
  });

  it('chart render prints the model for the chart values', () => {
    const r = olmpub(['chart', 'render', '--image', IMAGE, '--set', 'webhook.enabled=false', '--set', 'replicas=3', '-n', 'ml']);
    assert.equal(r.code, 0, r.stderr);
    const docs = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind: string; metadata: { namespace?: string }; spec?: { replicas?: number } });
    assert.ok(!docs.some((d) => d.kind === 'ValidatingWebhookConfiguration'));
    const dep = docs.find((d) => d.kind === 'Deployment')!;
    assert.equal(dep.spec!.replicas, 3);
    assert.equal(dep.metadata.namespace, 'ml');
    const json = olmpub(['chart', 'render', '--image', IMAGE, '-o', 'json']);
    assert.equal(JSON.parse(json.stdout).kind, 'List');
    assert.equal(olmpub(['chart', 'render', '--image', IMAGE, '--set', 'oops']).code, 2);
  });
});
