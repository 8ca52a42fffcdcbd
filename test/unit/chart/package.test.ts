import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import YAML from 'yaml';
import { HELM_GZIP_EXTRA, buildChart, chartArchive, helmArchiveOrder, packageChart, readChartArchive } from '../../../bundle/chart/index.js';
import { helmChartArtifact } from '../../../bundle/oci/helm.js';
import { OlmpubError } from '../../../lib/errors.js';
import { IMAGE } from './chart.test.js';

describe('helm chart: archive', function () {
  this.timeout(20_000);
  const chart = buildChart({ version: '0.3.0', image: IMAGE, permissions: [] });

  it('is laid out as helm package lays it out', async () => {
    const tgz = await chartArchive(chart, { mtime: 1_700_000_000 });
    const entries = await readChartArchive(tgz);
    assert.ok(entries.length === chart.files.length, 'one entry per file, no directory entries');
    for (const e of entries) {
      assert.equal(e.type, 'file', e.name);
      assert.ok(e.name.startsWith('inference-operator/'), e.name);
      assert.equal(e.mode, 0o644, e.name);
      assert.equal(e.mtime, 1_700_000_000, e.name);
      assert.equal(e.uid, 0);
      assert.equal(e.gid, 0);
    }
    const names = entries.map((e) => e.name.slice('inference-operator/'.length));
    assert.deepEqual(names.slice(0, 3), ['Chart.yaml', 'values.yaml', 'values.schema.json']);
    const firstOther = names.findIndex((n) => !n.startsWith('templates/') && !['Chart.yaml', 'values.yaml', 'values.schema.json'].includes(n));
    assert.ok(names.slice(3, firstOther).every((n) => n.startsWith('templates/')), 'templates come next');
    assert.ok(names.slice(firstOther).every((n) => !n.startsWith('templates/')), 'then the other files');
    assert.deepEqual(names.slice(firstOther), ['README.md', 'crds/inferenceservices.inference.olmpub.dev.yaml']);
    for (const e of entries) assert.deepEqual(e.content.toString('utf8'), String(chart.files.find((f) => `inference-operator/${f.path}` === e.name)!.content));
  });

  it('has the gzip header helm package writes (extra field, "Helm" comment, no mtime)', async () => {
    const tgz = await chartArchive(chart, { mtime: 0 });
    assert.deepEqual([...tgz.subarray(0, 4)], [0x1f, 0x8b, 0x08, 0x14], 'FEXTRA | FCOMMENT');
    assert.equal(tgz.readUInt32LE(4), 0, 'no modification time');
    assert.equal(tgz[9], 0xff, 'OS unknown, as Go writes');
    const xlen = tgz.readUInt16LE(10);
    assert.deepEqual(tgz.subarray(12, 12 + xlen), HELM_GZIP_EXTRA);
    assert.equal(tgz.subarray(12 + xlen, 12 + xlen + 5).toString('latin1'), 'Helm\0');
    assert.ok(gunzipSync(tgz).length > 0, 'a standard gzip reader accepts it');
  });

  it('is deterministic: same inputs, same bytes; another mtime, other bytes', async () => {
    const a = await chartArchive(chart, { mtime: 42 });
    const b = await chartArchive(buildChart({ version: '0.3.0', image: IMAGE, permissions: [] }), { mtime: 42 });
    assert.ok(a.equals(b));
    const c = await chartArchive(chart, { mtime: 43 });
    assert.ok(!a.equals(c));
  });

  it('is what helm push pushes: the OCI artifact reads Chart.yaml and its mtime back', async () => {
    const tgz = await chartArchive(chart, { mtime: 1_700_000_000 });
    const artifact = await helmChartArtifact(tgz);
    assert.equal(artifact.metadata.name, 'inference-operator');
    assert.equal(artifact.metadata.version, '0.3.0');
    assert.equal(artifact.manifest.json.annotations!['org.opencontainers.image.created'], '2023-11-14T22:13:20Z');
    assert.equal(YAML.parse(String(chart.files.find((f) => f.path === 'Chart.yaml')!.content)).kubeVersion, artifact.metadata.kubeVersion);
  });

  it('orders files as Helm does and refuses paths outside the chart', async () => {
    const order = helmArchiveOrder([{ path: 'crds/a.yaml', content: '' }, { path: 'templates/b.yaml', content: '' }, { path: 'values.yaml', content: '' }, { path: 'Chart.yaml', content: '' }, { path: 'README.md', content: '' }, { path: 'Chart.lock', content: '' }, { path: 'values.schema.json', content: '' }]);
    assert.deepEqual(order.map((f) => f.path), ['Chart.yaml', 'Chart.lock', 'values.yaml', 'values.schema.json', 'templates/b.yaml', 'README.md', 'crds/a.yaml']);
    for (const path of ['../x', '/abs', 'a//b', 'a/./b']) {
      await assert.rejects(packageChart('demo', [{ path: 'Chart.yaml', content: 'x' }, { path, content: 'x' }]), (e: unknown) => e instanceof OlmpubError && e.code === 'chart-bad-path', path);
    }
    await assert.rejects(packageChart('demo', [{ path: 'values.yaml', content: 'x' }]), /Chart\.yaml/);
    await assert.rejects(packageChart('Demo', [{ path: 'Chart.yaml', content: 'x' }]), /DNS-1123/);
  });
});
