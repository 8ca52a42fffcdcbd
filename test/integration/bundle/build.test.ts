/**
 * `olmpub bundle build --out DIR` end to end, with the operator image built too (no --image): run twice,
 * byte-identical files; the chart passes the real `helm lint --strict`; the bundle image, pushed from the
 * output layout with `olmpub image copy`, is read by the real `opm render`.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, containersEnv, testenv, toolBin } from '../../support/env.js';
import { tree } from '../../support/files.js';

const BIN = join(REPO_ROOT, 'bin/olmpub.js');
const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

function olmpub(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function tool(bin: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { env, maxBuffer: 64 << 20, timeout: 180_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

describe('olmpub bundle build: the whole release, checked by the reference tools', function () {
  this.timeout(600_000);
  let dir: string;
  let summary: { version: string; image: string; chart: { path: string }; images: { bundle: { tag: string; digest: string }; operator?: { tag: string; digest: string } } };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-release-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('builds the operator image, the chart and the bundle; a second run gives byte-identical files', async () => {
    const env = { SOURCE_DATE_EPOCH: '1767225600' };
    const args = ['--image-repository', 'registry.example.com/olmpub/inference-operator'];
    const a = await olmpub(['bundle', 'build', '--out', join(dir, 'a'), ...args, '-o', 'json'], env);
    assert.equal(a.code, 0, a.stderr);
    const b = await olmpub(['bundle', 'build', '--out', join(dir, 'b'), ...args], env);
    assert.equal(b.code, 0, b.stderr);
    summary = JSON.parse(a.stdout);
    assert.equal(summary.version, pkg.version);
    assert.ok(summary.images.operator, 'the operator image was built into the layout');
    assert.equal(summary.image, `registry.example.com/olmpub/inference-operator@${summary.images.operator.digest}`, 'the manifests pin the built image');
    const ta = await tree(join(dir, 'a'));
    const tb = await tree(join(dir, 'b'));
    assert.deepEqual([...ta.keys()].sort(), [...tb.keys()].sort());
    for (const [path, bytes] of ta) assert.ok(bytes.equals(tb.get(path)!), `${path} differs between two builds`);
    const csv = ta.get('bundle/manifests/inference-operator.clusterserviceversion.yaml')!.toString('utf8');
    assert.ok(csv.includes(summary.image), 'the CSV deploys the built image');
  });

  it('helm lint --strict accepts the chart', async () => {
    const r = await tool(join(toolBin('helm'), 'helm'), ['lint', '--strict', summary.chart.path]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /\[(WARNING|ERROR)\]/);
  });

  it('opm render reads the bundle image pushed from the layout', async () => {
    const ref = `${testenv('REGISTRY')}/olmpub-it/release-bundle-${randomBytes(3).toString('hex')}:v${summary.version}`;
    const copied = await olmpub(['image', 'copy', `oci:${join(dir, 'a', 'oci')}:${summary.images.bundle.tag}`, ref, '--plain-http']);
    assert.equal(copied.code, 0, copied.stderr);
    const r = await tool(join(toolBin('opm'), 'opm'), ['render', ref, '--use-http', '-o', 'json'], containersEnv());
    assert.equal(r.code, 0, r.stderr);
    const rendered = JSON.parse(r.stdout) as { name: string; properties: { type: string; value: { version?: string } }[]; relatedImages: { image: string }[] };
    assert.equal(rendered.name, `inference-operator.v${summary.version}`);
    assert.equal(rendered.properties.find((p) => p.type === 'olm.package')!.value.version, summary.version);
    assert.ok(rendered.relatedImages.some((i) => i.image === summary.image));
  });
});
