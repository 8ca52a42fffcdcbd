/**
 * The registry+v1 bundle image against the REAL opm (built from the Go module proxy): pushed to the test
 * registry with bundle/oci's copy, `opm render <ref> --use-http` reads the package, version, GVKs and the
 * CSV metadata back.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containersEnv, testenv, toolBin } from '../../support/env.js';
import { buildRegistryV1Bundle, checkRegistryV1, writeBundleImage, type RegistryV1Bundle } from '../../../bundle/registryv1/index.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { RegistryClient } from '../../../bundle/oci/remote.js';
import { anonymous } from '../../../bundle/oci/credentials.js';
import { copy } from '../../../bundle/oci/copy.js';

const IMAGE = `registry.example.com/olmpub/inference-operator@sha256:${'b'.repeat(64)}`;

interface Rendered {
  schema: string;
  name: string;
  package: string;
  image: string;
  properties: { type: string; value: Record<string, unknown> }[];
  relatedImages: { name: string; image: string }[];
}

function opm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(toolBin('opm'), 'opm'), args, { env: containersEnv(), maxBuffer: 64 << 20, timeout: 180_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('registry+v1 bundle image with the real opm', function () {
  this.timeout(240_000);
  let dir: string;
  let bundle: RegistryV1Bundle;
  let ref: string;
  let digest: string;
  const client = () => new RegistryClient(testenv('REGISTRY'), { plainHttp: true, credentials: anonymous });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-bundle-opm-'));
    bundle = buildRegistryV1Bundle({ version: '0.9.1', image: IMAGE, channels: ['candidate', 'fast'], replaces: 'inference-operator.v0.9.0', created: new Date('2026-03-01T00:00:00Z') });
    await checkRegistryV1(bundle.files);
    const layout = new OciLayoutStore(join(dir, 'oci'));
    const built = await writeBundleImage(bundle, { store: layout, tag: 'v0.9.1', created: 1_772_323_200 });
    digest = built.manifest.descriptor.digest;
    const repo = `olmpub-it/inference-operator-bundle-${randomBytes(3).toString('hex')}`;
    const c = client();
    try {
      const result = await copy(layout, 'v0.9.1', c.repository(repo), 'v0.9.1');
      assert.equal(result.root.digest, digest);
    } finally {
      c.close();
    }
    ref = `${testenv('REGISTRY')}/${repo}:v0.9.1`;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function render(extra: string[] = []): Promise<Rendered> {
    const r = await opm(['render', ref, '--use-http', '-o', 'json', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Rendered;
  }

  it('opm reads the bundle: name, package, version, GVKs and the related images', async () => {
    const b = await render();
    assert.equal(b.schema, 'olm.bundle');
    assert.equal(b.name, 'inference-operator.v0.9.1');
    assert.equal(b.package, 'inference-operator');
    assert.equal(b.image, ref);
    const pkg = b.properties.filter((p) => p.type === 'olm.package');
    assert.deepEqual(pkg.map((p) => p.value), [{ packageName: 'inference-operator', version: '0.9.1' }]);
    const gvks = b.properties.filter((p) => p.type === 'olm.gvk').map((p) => p.value);
    assert.deepEqual(gvks, [
      { group: 'inference.olmpub.dev', kind: 'InferenceService', version: 'v1' },
      { group: 'inference.olmpub.dev', kind: 'InferenceService', version: 'v1alpha1' },
    ]);
    assert.ok(!b.properties.some((p) => ['olm.package.required', 'olm.gvk.required', 'olm.constraint'].includes(p.type)), 'no dependency properties (OLM v1 refuses them)');
    const objects = b.properties.filter((p) => p.type === 'olm.bundle.object').map((p) => JSON.parse(Buffer.from(String(p.value.data), 'base64').toString('utf8')) as { kind: string });
    assert.deepEqual(objects.map((o) => o.kind).sort(), bundle.manifests.map((m) => String(m.object.kind)).sort(), 'every manifest is read');
    const images = b.relatedImages.map((r) => r.image);
    assert.ok(images.includes(IMAGE), 'the operator image, by digest');
    assert.ok(images.includes(ref), 'the bundle image itself');
  });

  it('opm reads the CSV metadata: display name, install modes, descriptions, annotations', async () => {
    const b = await render(['--migrate-level', 'bundle-object-to-csv-metadata']);
    const meta = b.properties.find((p) => p.type === 'olm.csv.metadata')?.value as Record<string, any>;
    assert.ok(meta, 'an olm.csv.metadata property');
    assert.equal(meta.displayName, 'Inference Operator');
    assert.equal(meta.provider.name, 'olmpub');
    assert.equal(meta.minKubeVersion, '1.30.0');
    assert.deepEqual(meta.installModes.filter((m: { supported: boolean }) => m.supported).map((m: { type: string }) => m.type), ['AllNamespaces']);
    assert.deepEqual(meta.crdDescriptions.owned.map((o: { version: string }) => o.version), ['v1', 'v1alpha1']);
    assert.ok(meta.crdDescriptions.owned.every((o: { description: string; displayName: string }) => o.description && o.displayName));
    assert.equal(meta.annotations['olm.skipRange'], '<0.9.1');
    assert.equal(meta.annotations.createdAt, '2026-03-01T00:00:00Z');
    assert.equal(JSON.parse(meta.annotations['alm-examples'])[0].kind, 'InferenceService');
    assert.deepEqual(meta.keywords, bundle.csv.spec.keywords);
    assert.ok(!b.properties.some((p) => p.type === 'olm.bundle.object'), 'csv metadata instead of whole objects');
  });
});
