import assert from 'node:assert/strict';
import { extensionManifests, needsServiceAccount, parseOlmVersion, CATALOG_NAME_LABEL } from '../../../catalog/extension/index.js';
import { OlmpubError } from '../../../lib/errors.js';
import YAML from 'yaml';
import { renderReleaseArtifacts } from '../../../bundle/release.js';
import { permissionObjectName, renderRegistryV1Files } from '../../../bundle/registryv1/index.js';
import { deriveInstallerRole } from '../../../bundle/rbac/index.js';

const DIGEST_REF = 'quay.io/acme/inference-catalog@sha256:' + 'a'.repeat(64);
const bundleObjects = [
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op' }, spec: {} },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op' } },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'op' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
  },
];
const byKind = (m: ReturnType<typeof extensionManifests>, kind: string) => m.files.flatMap((f) => f.objects).filter((o) => o.kind === kind);

describe('extension manifests', () => {
  it('pins a digest-referenced catalog without polling and selects it from the ClusterExtension', () => {
    const m = extensionManifests({ catalogImage: DIGEST_REF, channels: ['stable-v1'], version: '>=1.0.0 <2.0.0' });
    const [catalog] = byKind(m, 'ClusterCatalog');
    assert.deepEqual((catalog as any).spec.source.image, { ref: DIGEST_REF });
    const [ce] = byKind(m, 'ClusterExtension') as any[];
    assert.equal(ce.spec.namespace, 'inference-operator-system');
    assert.deepEqual(ce.spec.source.catalog.channels, ['stable-v1']);
    assert.equal(ce.spec.source.catalog.version, '>=1.0.0 <2.0.0');
    assert.equal(ce.spec.source.catalog.selector.matchLabels[CATALOG_NAME_LABEL], (catalog as any).metadata.name);
    assert.equal(ce.spec.install.preflight.crdUpgradeSafety.enforcement, 'Strict');
    assert.equal(m.warnings.length, 0);
  });

  it('polls a tag-referenced catalog and warns about it', () => {
    const m = extensionManifests({ catalogImage: 'quay.io/acme/catalog:latest', pollIntervalMinutes: 5 });
    assert.equal((byKind(m, 'ClusterCatalog')[0] as any).spec.source.image.pollIntervalMinutes, 5);
    assert.match(m.warnings.join('\n'), /polled every 5 min/);
  });

  it('refuses a poll interval with a digest reference, as the ClusterCatalog CEL rule would', () => {
    assert.throws(() => extensionManifests({ catalogImage: DIGEST_REF, pollIntervalMinutes: 5 }), (e: OlmpubError) => e.code === 'poll-with-digest');
  });

  it('emits ValidatingAdmissionPolicy guardrails and no ServiceAccount for OLM 1.11', () => {
    const m = extensionManifests({ catalogImage: DIGEST_REF });
    assert.equal(m.serviceAccountMode, false);
    assert.equal(byKind(m, 'ServiceAccount').length, 0);
    assert.equal((byKind(m, 'ClusterExtension')[0] as any).spec.serviceAccount, undefined);
    const policies = byKind(m, 'ValidatingAdmissionPolicy') as any[];
    assert.equal(policies.length, 2);
    assert.equal(byKind(m, 'ValidatingAdmissionPolicyBinding').length, 2);
    const ext = policies.find((p) => p.spec.matchConstraints.resourceRules[0].resources[0] === 'clusterextensions');
    assert.match(ext.spec.matchConditions[0].expression, /packageName == "inference-operator"/, 'scoped to our package only');
    assert.ok(ext.spec.validations.some((v: any) => /SelfCertified/.test(v.expression)));
    const cat = policies.find((p) => p.spec.matchConstraints.resourceRules[0].resources[0] === 'clustercatalogs');
    assert.match(cat.spec.validations[0].expression, /quay\.io\/acme\/inference-catalog@/);
  });

  it('emits the installer ServiceAccount and derived RBAC for OLM 1.10', () => {
    const m = extensionManifests({ catalogImage: DIGEST_REF, olmVersion: '1.10', bundleObjects });
    assert.equal(m.serviceAccountMode, true);
    const [sa] = byKind(m, 'ServiceAccount') as any[];
    assert.equal(sa.metadata.namespace, 'inference-operator-system');
    assert.equal((byKind(m, 'ClusterExtension')[0] as any).spec.serviceAccount.name, sa.metadata.name);
    const role = byKind(m, 'ClusterRole').find((r: any) => r.metadata.name === sa.metadata.name) as any;
    assert.ok(role, 'the installer ClusterRole');
    const flat = JSON.stringify(role.rules);
    assert.match(flat, /deployments/);
    assert.match(flat, /configmaps/, 'it holds what the bundle grants (escalation)');
    assert.match(flat, /clusterextensions\/finalizers/);
    assert.equal(byKind(m, 'ValidatingAdmissionPolicy').length, 0);
  });

  it('for OLM 1.10 derives the installer RBAC from what OLM renders from registry+v1 bundle files (OLM names)', async function () {
    this.timeout(60_000); // the bundle build gzips the CRDs
    const a = await renderReleaseArtifacts({ version: '1.2.0', image: `ghcr.io/x/y@sha256:${'c'.repeat(64)}`, created: 0 });
    const m = extensionManifests({ catalogImage: DIGEST_REF, olmVersion: '1.10', bundleFiles: a.bundle.files, bundleObjects });
    const rendered = renderRegistryV1Files(a.bundle.files, { installNamespace: 'inference-operator-system', olmVersion: '1.10' });
    const expected = deriveInstallerRole({ objects: rendered, extensionName: 'inference-operator', installNamespace: 'inference-operator-system' }, { name: 'inference-operator-installer' });
    const role = byKind(m, 'ClusterRole').find((r: any) => r.metadata.name === 'inference-operator-installer') as any;
    assert.deepEqual(role.rules, expected.clusterRole.rules, 'bundleFiles win over bundleObjects');
    const csv = a.bundle.csv;
    assert.match(JSON.stringify(role.rules), new RegExp(permissionObjectName(csv.metadata.name, csv.spec.install.spec.clusterPermissions![0]!).replace(/\./g, '\\.')));
  });

  it('requires bundle objects for OLM 1.10', () => {
    assert.throws(() => extensionManifests({ catalogImage: DIGEST_REF, olmVersion: '1.10' }), (e: OlmpubError) => e.code === 'missing-bundle-objects' && e.exitCode === 2);
  });

  it('writes a kustomization listing every file, deterministically', () => {
    const a = extensionManifests({ catalogImage: DIGEST_REF });
    const b = extensionManifests({ catalogImage: DIGEST_REF });
    assert.deepEqual([...a.rendered], [...b.rendered]);
    const kustomization = YAML.parse(a.rendered.get('kustomization.yaml')!);
    assert.deepEqual(kustomization.resources.sort(), [...a.rendered.keys()].filter((k) => k !== 'kustomization.yaml').sort());
  });

  it('rejects bad names and references with a hint', () => {
    assert.throws(() => extensionManifests({ catalogImage: DIGEST_REF, namespace: 'Bad_NS' }), (e: OlmpubError) => e.code === 'bad-name' && !!e.hint);
    assert.throws(() => extensionManifests({ catalogImage: 'Not A Ref' }), (e: OlmpubError) => e.code === 'bad-catalog-image');
  });

  it('knows which OLM versions need a ServiceAccount', () => {
    assert.equal(needsServiceAccount('1.10'), true);
    assert.equal(needsServiceAccount('1.9.2'), true);
    assert.equal(needsServiceAccount('1.11'), false);
    assert.equal(needsServiceAccount('v2.0'), false);
    assert.throws(() => parseOlmVersion('eleven'), OlmpubError);
  });
});
