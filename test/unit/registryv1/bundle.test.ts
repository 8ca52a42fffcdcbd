import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { V1Deployment } from '@kubernetes/client-node';
import { OlmpubError } from '../../../lib/errors.js';
import { readTar } from '../../../bundle/image/tar.js';
import { installManifests } from '../../../bundle/manifests/index.js';
import {
  ALLOWED_KINDS,
  BundleAnnotation,
  MAX_BUNDLE_GZIP_BYTES,
  buildRegistryV1Bundle,
  bundleYAML,
  checkRegistryV1,
  validateRegistryV1,
  writeBundleImage,
  type BundleFile,
  type ClusterServiceVersion,
} from '../../../bundle/registryv1/index.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { readAll } from '../../../bundle/oci/store.js';
import { schemaErrors } from '../operator/fixtures.js';

const IMAGE = `quay.io/olmpub/inference-operator@sha256:${'e'.repeat(64)}`;
const build = (extra: Partial<Parameters<typeof buildRegistryV1Bundle>[0]> = {}) =>
  buildRegistryV1Bundle({ version: '0.4.0', image: IMAGE, permissions: [], created: new Date('2026-05-01T12:00:00Z'), ...extra });

const CSV_PATH = 'manifests/inference-operator.clusterserviceversion.yaml';

/** The bundle files with the CSV edited. */
function withCSV(files: BundleFile[], edit: (csv: ClusterServiceVersion) => void): BundleFile[] {
  return files.map((f) => {
    if (f.path !== CSV_PATH) return f;
    const csv = YAML.parse(f.content) as ClusterServiceVersion;
    edit(csv);
    return { path: f.path, content: bundleYAML(csv) };
  });
}
const codes = (files: BundleFile[]) => validateRegistryV1(files).map((e) => e.code);

describe('registry+v1 bundle', () => {
  const bundle = build();
  const csv = bundle.csv;

  it('has a flat manifests/ with the CSV, the CRD and the objects OLM does not generate, and metadata/annotations.yaml', () => {
    assert.deepEqual(bundle.files.map((f) => f.path), [
      'manifests/inference-operator-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml',
      'manifests/inference-operator-metrics_v1_service.yaml',
      CSV_PATH,
      'manifests/inference-operator_networking.k8s.io_v1_networkpolicy.yaml',
      'manifests/inference-operator_policy_v1_poddisruptionbudget.yaml',
      'manifests/inference.olmpub.dev_inferenceservices.yaml',
      'metadata/annotations.yaml',
    ]);
    for (const m of bundle.manifests) {
      assert.ok(ALLOWED_KINDS.includes(String(m.object.kind)), String(m.object.kind));
      assert.equal((m.object.metadata as { namespace?: string }).namespace, undefined, 'OLM places objects in the install namespace');
    }
    assert.deepEqual(YAML.parse(bundle.files.at(-1)!.content), {
      annotations: {
        [BundleAnnotation.defaultChannel]: 'stable',
        [BundleAnnotation.channels]: 'stable',
        [BundleAnnotation.manifests]: 'manifests/',
        [BundleAnnotation.mediatype]: 'registry+v1',
        [BundleAnnotation.metadata]: 'metadata/',
        [BundleAnnotation.package]: 'inference-operator',
      },
    });
    assert.ok(build({ serviceMonitor: true }).files.some((f) => f.path.endsWith('_monitoring.coreos.com_v1_servicemonitor.yaml')));
  });

  it('has a CSV whose install strategy and permissions are the model’s Deployment and roles', () => {
    assert.equal(csv.metadata.name, 'inference-operator.v0.4.0');
    assert.equal(csv.spec.version, '0.4.0');
    assert.equal(csv.spec.install.strategy, 'deployment');
    const model = installManifests({ image: IMAGE, version: '0.4.0', managedBy: 'olm', watchNamespacesFromOLM: true, webhook: { mountCertSecret: false }, certManager: { enabled: false }, permissions: [] });
    assert.deepEqual(csv.spec.install.spec.deployments, [{ name: 'inference-operator', label: model.deployment.metadata.labels, spec: model.deployment.spec }]);
    const pod = (csv.spec.install.spec.deployments[0]!.spec as V1Deployment['spec'])!.template.spec!;
    assert.ok(!pod.volumes!.some((v) => v.secret), 'OLM mounts the webhook certificate itself');
    assert.deepEqual(pod.containers[0]!.env![1]!.valueFrom, { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } });
    assert.deepEqual(csv.spec.install.spec.permissions, [{ serviceAccountName: 'inference-operator', rules: model.one('leader-election-role')!.rules }]);
    assert.deepEqual(csv.spec.install.spec.clusterPermissions, [
      { serviceAccountName: 'inference-operator', rules: [...(model.one('manager-cluster-role')!.rules as unknown[]), ...(model.one('metrics-auth-cluster-role')!.rules as unknown[])] },
    ]);
  });

  it('declares AllNamespaces only (a conversion webhook allows nothing else in OLM v1), the webhooks and the owned APIs', () => {
    assert.deepEqual(csv.spec.installModes.filter((m) => m.supported).map((m) => m.type), ['AllNamespaces']);
    const [validating, conversion] = csv.spec.webhookdefinitions!;
    assert.equal(validating!.type, 'ValidatingAdmissionWebhook');
    assert.equal(validating!.webhookPath, '/validate-inference-olmpub-dev-v1-inferenceservice');
    assert.equal(validating!.sideEffects, 'None');
    assert.equal(validating!.deploymentName, 'inference-operator');
    assert.deepEqual(conversion, {
      type: 'ConversionWebhook',
      generateName: 'cinferenceservice.inference.olmpub.dev',
      deploymentName: 'inference-operator',
      containerPort: 9443,
      targetPort: 9443,
      webhookPath: '/convert',
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      conversionCRDs: ['inferenceservices.inference.olmpub.dev'],
    });
    assert.deepEqual(csv.spec.customresourcedefinitions.owned.map((o) => [o.name, o.version, o.kind]), [
      ['inferenceservices.inference.olmpub.dev', 'v1', 'InferenceService'],
      ['inferenceservices.inference.olmpub.dev', 'v1alpha1', 'InferenceService'],
    ]);
    for (const o of csv.spec.customresourcedefinitions.owned) assert.ok(o.displayName && o.description.length > 10);
    assert.deepEqual(csv.spec.relatedImages, [{ name: 'inference-operator', image: IMAGE }]);
    assert.equal(csv.spec.apiservicedefinitions, undefined);
  });

  it('has the OperatorHub annotations, a deterministic createdAt and a valid alm-examples sample', () => {
    const a = csv.metadata.annotations;
    assert.equal(a.createdAt, '2026-05-01T12:00:00Z');
    assert.equal(a['olm.skipRange'], '<0.4.0');
    assert.equal(a.containerImage, IMAGE);
    assert.ok(a.capabilities && a.categories && a.description);
    const examples = JSON.parse(a['alm-examples']!) as unknown[];
    assert.equal(examples.length, 1);
    assert.deepEqual(schemaErrors('v1', examples[0]), [], 'the sample is valid against the CRD schema');
    assert.match(bundle.files.find((f) => f.path === CSV_PATH)!.content, /createdAt: "2026-05-01T12:00:00Z"/, 'quoted for YAML 1.1 readers');
    assert.equal(build({ skipRange: null }).csv.metadata.annotations['olm.skipRange'], undefined);
    assert.equal(build({ replaces: 'inference-operator.v0.3.0' }).csv.spec.replaces, 'inference-operator.v0.3.0');
    assert.deepEqual(JSON.stringify(build().files), JSON.stringify(bundle.files), 'same options, same files');
  });

  it('passes every OLM v1 check', async () => {
    assert.deepEqual(validateRegistryV1(bundle.files).map((e) => e.message), []);
    const { gzipBytes } = await checkRegistryV1(bundle.files);
    assert.ok(gzipBytes > 1000 && gzipBytes < MAX_BUNDLE_GZIP_BYTES);
  });
});

describe('registry+v1 bundle: OLM v1 limits', () => {
  const files = build().files;

  it('manifests/ flat, one CSV, allowed kinds, no stray files', () => {
    const crd = files.find((f) => f.path.startsWith('manifests/inference.olmpub.dev'))!;
    assert.ok(codes([...files, { path: 'manifests/extra/crd.yaml', content: crd.content }]).includes('bundle-manifests-not-flat'));
    assert.ok(codes([...files, { path: 'manifests/.hidden.yaml', content: crd.content }]).includes('bundle-hidden-file'));
    const csv = files.find((f) => f.path === CSV_PATH)!;
    assert.ok(codes([...files, { path: 'manifests/second.clusterserviceversion.yaml', content: csv.content }]).includes('bundle-csv-count'));
    assert.ok(codes(files.filter((f) => f !== csv)).includes('bundle-csv-count'));
    assert.ok(codes([...files, { path: 'manifests/dep.yaml', content: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n' }]).includes('bundle-kind-not-allowed'));
    assert.ok(codes([...files, { path: 'manifests/bad.yaml', content: 'a: [' }]).includes('bundle-unparsable-manifest'));
    assert.ok(codes([...files, { path: 'README.md', content: 'x' }]).includes('bundle-unexpected-file'));
    assert.ok(codes([...files, { path: 'metadata/dependencies.yaml', content: 'dependencies: []' }]).includes('bundle-dependencies'));
    assert.ok(codes([...files, { path: 'metadata/properties.yaml', content: 'properties: [{type: olm.package.required, value: {packageName: x, versionRange: ">=1"}}]' }]).includes('bundle-dependencies'));
  });

  it('annotations: package, channels, media type', () => {
    const ann = (edit: (a: Record<string, string>) => void) =>
      files.map((f) => {
        if (f.path !== 'metadata/annotations.yaml') return f;
        const a = YAML.parse(f.content).annotations;
        edit(a);
        return { path: f.path, content: bundleYAML({ annotations: a }) };
      });
    assert.ok(codes(ann((a) => delete a[BundleAnnotation.package])).includes('bundle-no-package'));
    assert.ok(codes(ann((a) => (a[BundleAnnotation.channels] = ''))).includes('bundle-no-channels'));
    assert.ok(codes(ann((a) => (a[BundleAnnotation.defaultChannel] = 'fast'))).includes('bundle-bad-default-channel'));
    assert.ok(codes(ann((a) => (a[BundleAnnotation.mediatype] = 'helm+v1'))).includes('bundle-bad-mediatype'));
    assert.ok(codes(files.filter((f) => f.path !== 'metadata/annotations.yaml')).includes('bundle-no-annotations'));
  });

  it('install modes, APIServices, names and versions', () => {
    assert.ok(codes(withCSV(files, (c) => (c.spec.installModes = c.spec.installModes.map((m) => ({ ...m, supported: m.type === 'OwnNamespace' }))))).includes('bundle-no-all-namespaces'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.installModes[0]!.supported = true))).includes('bundle-conversion-install-modes'), 'OwnNamespace next to a conversion webhook');
    assert.ok(!codes(withCSV(files, (c) => {
      c.spec.installModes[0]!.supported = true;
      c.spec.webhookdefinitions = c.spec.webhookdefinitions!.filter((w) => w.type !== 'ConversionWebhook');
    })).includes('bundle-conversion-install-modes'), 'without a conversion webhook, OwnNamespace is fine');
    assert.ok(codes(withCSV(files, (c) => (c.spec.apiservicedefinitions = { owned: [{ name: 'v1.example.com' }] }))).includes('bundle-apiservice'));
    assert.ok(codes(withCSV(files, (c) => (c.metadata.name = 'inference-operator.v9.9.9'))).includes('bundle-bad-csv-name'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.version = 'one'))).includes('bundle-bad-csv-version'));
    assert.ok(codes(withCSV(files, (c) => (c.metadata.annotations['olm.skipRange'] = '>>nope'))).includes('bundle-bad-skip-range'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.minKubeVersion = '1.30'))).includes('bundle-bad-min-kube-version'));
  });

  it('webhook definitions', () => {
    const hooks = (edit: (w: NonNullable<ClusterServiceVersion['spec']['webhookdefinitions']>) => void) => codes(withCSV(files, (c) => edit(c.spec.webhookdefinitions!)));
    assert.ok(hooks((w) => ((w[0]!.rules as { apiGroups: string[] }[])[0]!.apiGroups = ['*'])).includes('bundle-webhook-forbidden-rule'));
    assert.ok(hooks((w) => ((w[0]!.rules as { apiGroups: string[]; resources: string[] }[])[0] = { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'] })).includes('bundle-webhook-forbidden-rule'));
    assert.ok(hooks((w) => (w[0]!.deploymentName = 'missing')).includes('bundle-webhook-deployment'));
    assert.ok(hooks((w) => (w[0]!.generateName = 'Not_A_Name')).includes('bundle-webhook-name'));
    assert.ok(hooks((w) => (w[0]!.sideEffects = 'Some')).includes('bundle-webhook-side-effects'));
    assert.ok(hooks((w) => w.push({ ...w[1]!, generateName: 'other.inference.olmpub.dev' })).includes('bundle-conversion-crd-shared'));
    assert.ok(hooks((w) => (w[1]!.conversionCRDs = ['others.example.com'])).includes('bundle-conversion-crd-not-owned'));
    assert.ok(hooks((w) => w.push({ ...w[0]! })).includes('bundle-webhook-duplicate'));
  });

  it('owned CRDs both ways, digests, alm-examples, least privilege', () => {
    const crd = files.find((f) => f.path.startsWith('manifests/inference.olmpub.dev'))!;
    assert.ok(codes(files.filter((f) => f !== crd)).includes('bundle-owned-crd-missing'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.customresourcedefinitions.owned = []))).includes('bundle-crd-not-owned'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.customresourcedefinitions.owned[0]!.version = 'v2'))).includes('bundle-owned-crd-version'));
    assert.ok(codes(withCSV(files, (c) => (c.spec.relatedImages = [{ name: 'x', image: 'quay.io/x:latest' }]))).includes('bundle-image-not-pinned'));
    assert.ok(codes(withCSV(files, (c) => ((c.spec.install.spec.deployments[0]!.spec as V1Deployment['spec'])!.template.spec!.containers[0]!.image = 'quay.io/x:1'))).includes('bundle-image-not-pinned'));
    assert.ok(codes(withCSV(files, (c) => (c.metadata.annotations['alm-examples'] = '[{'))).includes('bundle-bad-alm-examples'));
    assert.ok(codes(withCSV(files, (c) => (c.metadata.annotations['alm-examples'] = JSON.stringify([{ apiVersion: 'apps/v1', kind: 'Deployment' }])))).includes('bundle-alm-example-not-owned'));
    assert.ok(codes(withCSV(files, (c) => c.spec.install.spec.clusterPermissions![0]!.rules.push({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }))).includes('bundle-rbac-wildcard-verb'));
    assert.ok(codes(withCSV(files, (c) => c.spec.install.spec.permissions![0]!.rules.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }))).includes('bundle-rbac-cluster-wide-secrets'), 'AllNamespaces turns permissions into ClusterRoles');
    assert.ok(codes([...files, { path: 'manifests/sa.yaml', content: 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: inference-operator}\n' }]).includes('bundle-service-account-conflict'));
  });

  it('refuses a bundle over 1 MiB gzipped, with every problem in one error tree', async () => {
    const noise = randomBytes(1100 * 1024).toString('base64');
    const big = [...files, { path: 'manifests/big_v1_configmap.yaml', content: bundleYAML({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { noise } }) }];
    await assert.rejects(checkRegistryV1(big), (e: unknown) => {
      assert.ok(e instanceof OlmpubError);
      assert.equal(e.code, 'bundle-invalid');
      assert.deepEqual(e.children.map((c) => c.code), ['bundle-too-large']);
      return true;
    });
  });
});

describe('registry+v1 bundle image', function () {
  this.timeout(20_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-bundle-image-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds /manifests and /metadata in one layer, the annotations as labels, and the same digest every time', async () => {
    const bundle = build();
    const a = await writeBundleImage(bundle, { store: new OciLayoutStore(join(dir, 'a')), tag: 'v0.4.0', created: 1000 });
    const b = await writeBundleImage(build(), { store: new OciLayoutStore(join(dir, 'b')), tag: 'v0.4.0', created: 1000 });
    assert.equal(a.manifest.descriptor.digest, b.manifest.descriptor.digest);
    assert.deepEqual(a.config.json.config?.Labels, bundle.annotations);
    assert.equal(a.manifest.json.layers.length, 1);
    const store = new OciLayoutStore(join(dir, 'a'));
    const layer = await readAll(await store.fetchBlob(a.manifest.json.layers[0]!));
    const entries = await readTar(layer, { gzip: true });
    const names = entries.map((e) => e.name);
    const contents = new Map(entries.filter((e) => e.type === 'file').map((e) => [e.name, e.content.toString('utf8')]));
    assert.deepEqual(names.filter((n) => !n.endsWith('/')).sort(), bundle.files.map((f) => f.path).sort());
    for (const f of bundle.files) assert.equal(contents.get(f.path), f.content);
    const other = await writeBundleImage(build({ version: '0.4.1' }), { store, tag: 'v0.4.1', created: 1000 });
    assert.notEqual(other.manifest.descriptor.digest, a.manifest.descriptor.digest);
  });
});
