import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaType } from '../../../bundle/oci/content.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { escapeNonASCII, helmAnnotations, helmChartArtifact, helmConfigJSON, helmRepository, pushHelmChart } from '../../../bundle/oci/helm.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { readAll } from '../../../bundle/oci/store.js';
import { gzipBytes } from '../../../bundle/image/gzip.js';
import { tarStream } from '../../../bundle/image/tar.js';

export async function chartTgz(chartYaml: string, name = 'demo', mtime = 1700000000): Promise<Buffer> {
  const tarBytes = await readAll(
    tarStream(
      [
        { path: `${name}/Chart.yaml`, type: 'file', content: chartYaml },
        { path: `${name}/values.yaml`, type: 'file', content: 'replicas: 1\n' },
        { path: `${name}/templates/cm.yaml`, type: 'file', content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' },
      ],
      { mtime },
    ),
  );
  return gzipBytes(tarBytes);
}

const CHART = `apiVersion: v2
name: demo
version: 1.2.3+build.7
appVersion: "1.2.3"
description: |
  A demo
  chart <with> & symbols
home: https://example.com
sources: [https://src.example/a, https://src.example/b]
maintainers:
  - {name: Ada, email: ada@example.com}
  - {name: Bob}
kubeVersion: ">=1.28.0-0"
type: application
annotations:
  org.opencontainers.image.title: ignored
  example.com/flag: "true"
`;

describe('oci/helm: chart artifacts as helm push writes them', () => {
  it('writes the config as Go would marshal chart.Metadata', () => {
    assert.equal(
      helmConfigJSON({ apiVersion: 'v2', name: 'n', version: '1.0.0', description: 'a\nb', annotations: { z: '1', a: '2' }, deprecated: false, keywords: [] }),
      '{"name":"n","version":"1.0.0","description":"a b","apiVersion":"v2","annotations":{"a":"2","z":"1"}}',
    );
    assert.equal(helmConfigJSON({ apiVersion: 'v2', name: 'n', version: '1', description: '<&>' }), '{"name":"n","version":"1","description":"\\u003c\\u0026\\u003e","apiVersion":"v2"}');
  });
  it('sets the OCI annotations Helm sets, keeping title and version from the chart', () => {
    const a = helmAnnotations({ apiVersion: 'v2', name: 'demo', version: '1.0.0', maintainers: [{ name: 'Ada', email: 'a@x' }, { name: 'Bob' }], sources: ['s1', 's2'], annotations: { 'org.opencontainers.image.version': 'no', k: 'v' } }, '2024-01-01T00:00:00Z');
    assert.deepEqual(a, {
      k: 'v',
      'org.opencontainers.image.authors': 'Ada (a@x), Bob',
      'org.opencontainers.image.created': '2024-01-01T00:00:00Z',
      'org.opencontainers.image.source': 's1',
      'org.opencontainers.image.title': 'demo',
      'org.opencontainers.image.version': '1.0.0',
    });
    assert.equal(escapeNonASCII('é😀'), '\\u00e9\\ud83d\\ude00');
  });
  it('builds config, layer and manifest (no mediaType field), tag with + as _', async () => {
    const tgz = await chartTgz(CHART);
    const art = await helmChartArtifact(tgz);
    assert.equal(art.tag, '1.2.3_build.7');
    assert.equal(art.config.descriptor.mediaType, MediaType.HelmConfig);
    assert.equal(art.layers[0]!.descriptor.mediaType, MediaType.HelmChartContent);
    assert.equal(art.layers[0]!.descriptor.digest, sha256(tgz), 'the archive is stored unchanged');
    const manifest = JSON.parse(art.manifest.bytes.toString());
    assert.deepEqual(Object.keys(manifest), ['schemaVersion', 'config', 'layers', 'annotations']);
    assert.equal(manifest.annotations['org.opencontainers.image.created'], '2023-11-14T22:13:20Z', 'created defaults to the archive entry mtime');
    assert.equal(manifest.annotations['org.opencontainers.image.title'], 'demo');
    assert.equal(manifest.annotations['org.opencontainers.image.description'], 'A demo\nchart <with> & symbols\n');
    assert.equal(manifest.annotations['example.com/flag'], 'true');
    assert.equal(JSON.parse(art.config.bytes.toString()).description, 'A demo chart <with> & symbols ');
    assert.deepEqual((await helmChartArtifact(tgz)).manifest.bytes, art.manifest.bytes, 'deterministic');
    assert.equal(helmRepository('olmpub/charts/', 'demo'), 'olmpub/charts/demo');
  });
  it('pushes into a store with the version tag', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'olmpub-helm-'));
    try {
      const store = new OciLayoutStore(dir);
      const art = await pushHelmChart(await chartTgz(CHART), store);
      assert.deepEqual(await store.tags(), ['1.2.3_build.7']);
      assert.deepEqual(await store.resolve('1.2.3_build.7'), art.manifest.descriptor);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('rejects archives without Chart.yaml or required fields', async () => {
    await assert.rejects(helmChartArtifact(await chartTgz('apiVersion: v2\nname: x\n')), /version is required/);
    await assert.rejects(helmChartArtifact(Buffer.from('not gzip')), /cannot be read/);
  });
});
