import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/env.js';
import { OlmpubError, formatErrorTree } from '../../../lib/errors.js';
import { bundleInfoFromDir, bundleInfosFromDirs, editTemplateFile, readBundleInfoFile, renderTemplateFile } from '../../../catalog/io.js';

const TPL = join(REPO_ROOT, 'test/fixtures/catalogs/templates');

const CSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: inference-operator.v1.2.0
  annotations:
    capabilities: Basic Install
spec:
  version: 1.2.0
  displayName: Inference Operator
  description: Serves models.
  installModes:
    - type: AllNamespaces
      supported: true
  customresourcedefinitions:
    owned:
      - name: inferenceservices.inference.olmpub.dev
        version: v1
        kind: InferenceService
  relatedImages:
    - name: model-server
      image: quay.io/olmpub/server@sha256:${'5'.repeat(64)}
  install:
    strategy: deployment
    spec:
      deployments:
        - name: manager
          spec:
            template:
              spec:
                initContainers:
                  - name: init
                    image: quay.io/olmpub/init@sha256:${'6'.repeat(64)}
                containers:
                  - name: manager
                    image: quay.io/olmpub/inference-operator@sha256:${'7'.repeat(64)}
                  - name: sidecar
                    image: quay.io/olmpub/server@sha256:${'5'.repeat(64)}
`;
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inferenceservices.inference.olmpub.dev
spec:
  group: inference.olmpub.dev
  names: {kind: InferenceService, plural: inferenceservices}
  scope: Namespaced
  versions:
    - name: v1alpha1
      served: true
      storage: false
    - name: v1
      served: true
      storage: true
`;

describe('catalog/io: bundle facts, template files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-catio-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function bundleDir(name: string): Promise<string> {
    const b = join(dir, 'bundles', name);
    await mkdir(join(b, 'manifests'), { recursive: true });
    await mkdir(join(b, 'metadata'), { recursive: true });
    await writeFile(join(b, 'manifests', 'inference-operator.clusterserviceversion.yaml'), CSV);
    await writeFile(join(b, 'manifests', 'crd.yaml'), CRD);
    await writeFile(join(b, 'metadata', 'annotations.yaml'), 'annotations:\n  operators.operatorframework.io.bundle.package.v1: inference-operator\n');
    await writeFile(join(b, 'metadata', 'properties.yaml'), 'properties:\n  - type: example.com/tier\n    value: gold\n');
    return b;
  }

  it('derives bundle facts from a registry+v1 directory as opm render does', async () => {
    const info = await bundleInfoFromDir(await bundleDir('v1.2.0'));
    assert.equal(info.name, 'inference-operator.v1.2.0');
    assert.equal(info.version, '1.2.0');
    assert.deepEqual(info.properties.map((p) => p.type), ['example.com/tier', 'olm.gvk', 'olm.gvk', 'olm.csv.metadata']);
    assert.deepEqual(info.properties.filter((p) => p.type === 'olm.gvk').map((p) => (p.value as { version: string }).version), ['v1', 'v1alpha1']);
    const meta = info.properties.find((p) => p.type === 'olm.csv.metadata')!.value as Record<string, unknown>;
    assert.deepEqual(Object.keys(meta), ['annotations', 'crdDescriptions', 'description', 'displayName', 'installModes']);
    assert.deepEqual(info.relatedImages.map((r) => r.name || r.image.split('@')[0]), ['model-server', 'quay.io/olmpub/inference-operator', 'quay.io/olmpub/init']);
    assert.deepEqual((await bundleInfosFromDirs([join(dir, 'bundles')])).map((b) => b.name), ['inference-operator.v1.2.0']);
  });

  it('rejects a directory without exactly one CSV', async () => {
    const b = await bundleDir('broken');
    await writeFile(join(b, 'manifests', 'second.yaml'), CSV);
    await assert.rejects(bundleInfoFromDir(b), /holds 2 ClusterServiceVersions/);
    await assert.rejects(bundleInfoFromDir(dir), /has no manifests\/ directory/);
  });

  it('reads bundle-info files (a list or {bundles}) strictly', async () => {
    const list = await readBundleInfoFile(join(TPL, 'bundles.yaml'));
    assert.equal(list.length, 5);
    await writeFile(join(dir, 'b.yaml'), '- name: foo.v1.0.0\n  version: 1.0.0\n  properties: []\n  relatedImages: []\n');
    assert.deepEqual(await readBundleInfoFile(join(dir, 'b.yaml')), [{ name: 'foo.v1.0.0', version: '1.0.0', properties: [], relatedImages: [] }]);
    await writeFile(join(dir, 'bad.yaml'), '- name: foo.v1.0.0\n  version: 1.0.0\n  props: []\n');
    await assert.rejects(readBundleInfoFile(join(dir, 'bad.yaml')), /bundles\[0\]: unknown field "props"/);
  });

  it('renders a template file: icon embedded, validated, written atomically', async () => {
    for (const f of ['inference-operator.yaml', 'icon.svg']) await copyFile(join(TPL, f), join(dir, f));
    const out = join(dir, 'out');
    const r = await renderTemplateFile(join(dir, 'inference-operator.yaml'), { bundles: await readBundleInfoFile(join(TPL, 'bundles.yaml')), outDir: out });
    assert.deepEqual(r.files, ['inference-operator/catalog.json']);
    const text = await readFile(join(out, 'inference-operator/catalog.json'), 'utf8');
    assert.ok(text.includes(`"base64data": "${(await readFile(join(TPL, 'icon.svg'))).toString('base64')}"`));
    assert.equal(text, await readFile(join(REPO_ROOT, 'test/fixtures/catalogs/valid/rendered-template/catalog/inference-operator/catalog.json'), 'utf8'));
  });

  it('does not write anything when rendering fails', async () => {
    for (const f of ['inference-operator.yaml', 'icon.svg']) await copyFile(join(TPL, f), join(dir, f));
    await assert.rejects(renderTemplateFile(join(dir, 'inference-operator.yaml'), { outDir: join(dir, 'out') }), (err: unknown) => /no bundle information for version 0\.9\.0/.test(formatErrorTree(err as OlmpubError)));
    assert.deepEqual((await readdir(dir)).sort(), ['icon.svg', 'inference-operator.yaml']);
  });

  it('edits a template file in place (comments kept), or only checks it with dryRun', async () => {
    const path = join(dir, 't.yaml');
    await copyFile(join(TPL, 'inference-operator.yaml'), path);
    const before = await readFile(path, 'utf8');
    const dry = await editTemplateFile(path, { kind: 'promote', version: '1.1.0', to: 'stable' }, { dryRun: true });
    assert.equal(dry.changed, true);
    assert.equal(await readFile(path, 'utf8'), before);
    await editTemplateFile(path, { kind: 'promote', version: '1.1.0', to: 'stable' });
    const after = await readFile(path, 'utf8');
    assert.equal(after, before.replace(/(version: 1\.1\.0\n.*\n\s+stage: )fast/, '$1stable'));
    assert.ok(after.startsWith('# Catalog template for the inference-operator package'));
    assert.deepEqual((await readdir(dir)).sort(), ['t.yaml'], 'no temporary files left');
  });
});
