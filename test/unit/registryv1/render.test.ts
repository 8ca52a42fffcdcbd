/**
 * The registry+v1 renderer against operator-controller's own expectations:
 * - names: the hashed (Cluster)Role names of upstream's regression fixtures
 *   test/regression/convert/testdata/expected-manifests/{webhook-operator.v0.0.5/all-webhook-types,
 *   argocd-operator.v0.6.0/*} (rendered by internal/operator-controller/rukpak/render/registryv1/registryv1.go),
 *   from the permission sets of those fixtures' CSVs, and util_test.go's ObjectNameForBaseAndSuffix case;
 * - structure: a webhook-operator-like bundle rendered as generators/generators.go does (AllNamespaces
 *   promotion with namespaces get/list/watch, conversion webhook wiring, webhook configurations, the
 *   webhook Service, cert-manager objects from certproviders/certmanager.go, certificate volumes);
 * - our own bundle (renderReleaseArtifacts): every generated name as OLM derives it.
 * The full upstream golden files are compared in test/integration/registryv1/render-golden.test.ts.
 */
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { renderReleaseArtifacts } from '../../../bundle/release.js';
import {
  certProvisionerNames,
  deepHashObject,
  objectNameForBaseAndSuffix,
  permissionObjectName,
  readRegistryV1,
  renderRegistryV1,
  renderRegistryV1Files,
  type BundleFileInput,
} from '../../../bundle/registryv1/index.js';
import type { KubeObject } from '../../../bundle/rbac/authorizer.js';
import { OlmpubError } from '../../../lib/errors.js';

const IMAGE = `ghcr.io/x/y@sha256:${'ab'.repeat(32)}`;

// The permission sets of upstream's webhook-operator.v0.0.5 CSV (test/regression/convert/testdata/bundles).
const WEBHOOK_OPERATOR_CLUSTER_RULES = [
  { apiGroups: ['webhook.operators.coreos.io'], resources: ['webhooktests'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
  { apiGroups: ['webhook.operators.coreos.io'], resources: ['webhooktests/finalizers'], verbs: ['update'] },
  { apiGroups: ['webhook.operators.coreos.io'], resources: ['webhooktests/status'], verbs: ['get', 'patch', 'update'] },
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];
const WEBHOOK_OPERATOR_RULES = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];
const SA = 'webhook-operator-controller-manager';
const CRD_NAME = 'webhooktests.webhook.operators.coreos.io';

function webhookOperatorFiles(extra: { installModes?: unknown[]; others?: KubeObject[] } = {}): BundleFileInput[] {
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'webhook-operator.v0.0.5', annotations: { capabilities: 'Basic Install' } },
    spec: {
      installModes: extra.installModes ?? [
        { type: 'OwnNamespace', supported: false },
        { type: 'SingleNamespace', supported: false },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      install: {
        strategy: 'deployment',
        spec: {
          clusterPermissions: [{ rules: WEBHOOK_OPERATOR_CLUSTER_RULES, serviceAccountName: SA }],
          permissions: [{ rules: WEBHOOK_OPERATOR_RULES, serviceAccountName: SA }],
          deployments: [
            {
              name: 'webhook-operator-controller-manager',
              label: { 'control-plane': 'controller-manager' },
              spec: {
                replicas: 1,
                selector: { matchLabels: { 'control-plane': 'controller-manager' } },
                template: {
                  metadata: { annotations: { 'kubectl.kubernetes.io/default-container': 'manager' }, labels: { 'control-plane': 'controller-manager' } },
                  spec: {
                    serviceAccountName: SA,
                    containers: [
                      {
                        name: 'manager',
                        image: 'quay.io/olmtest/webhook-operator:v0.0.5',
                        volumeMounts: [
                          { mountPath: '/tmp/k8s-webhook-server/serving-certs', name: 'webhook-certs', readOnly: true },
                          { mountPath: '/data', name: 'data' },
                        ],
                      },
                    ],
                    volumes: [
                      { name: 'webhook-certs', secret: { secretName: 'webhook-server-cert' } },
                      { name: 'data', emptyDir: {} },
                    ],
                  },
                },
              },
            },
          ],
        },
      },
      webhookdefinitions: [
        { admissionReviewVersions: ['v1'], containerPort: 443, conversionCRDs: [CRD_NAME], deploymentName: 'webhook-operator-controller-manager', generateName: 'cwebhooktests.kb.io', sideEffects: 'None', targetPort: 9443, type: 'ConversionWebhook', webhookPath: '/convert' },
        { admissionReviewVersions: ['v1'], containerPort: 443, deploymentName: 'webhook-operator-controller-manager', failurePolicy: 'Fail', generateName: 'mwebhooktest-v1.kb.io', rules: [{ apiGroups: ['webhook.operators.coreos.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['webhooktests'] }], sideEffects: 'None', targetPort: 9443, type: 'MutatingAdmissionWebhook', webhookPath: '/mutate-webhook-operators-coreos-io-v1-webhooktest' },
        { admissionReviewVersions: ['v1'], containerPort: 443, deploymentName: 'webhook-operator-controller-manager', failurePolicy: 'Fail', generateName: 'vwebhooktest-v1.kb.io', rules: [{ apiGroups: ['webhook.operators.coreos.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['webhooktests'] }], sideEffects: 'None', targetPort: 9443, type: 'ValidatingAdmissionWebhook', webhookPath: '/validate-webhook-operators-coreos-io-v1-webhooktest' },
      ],
    },
  };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: { group: 'webhook.operators.coreos.io', names: { kind: 'WebhookTest', plural: 'webhooktests' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
  };
  return [
    { path: 'metadata/annotations.yaml', content: 'annotations:\n  operators.operatorframework.io.bundle.package.v1: webhook-operator\n' },
    { path: 'manifests/webhook-operator.clusterserviceversion.yaml', content: YAML.stringify(csv) },
    { path: 'manifests/webhooktests.yaml', content: YAML.stringify(crd) },
    ...(extra.others ?? []).map((o, i) => ({ path: `manifests/other-${i}.yaml`, content: YAML.stringify(o) })),
  ];
}

const key = (o: KubeObject) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const find = (objs: KubeObject[], kind: string, name?: string): Loose => {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata?.name === name));
  assert.ok(o, `${kind} ${name ?? ''} rendered: ${objs.map(key).join(', ')}`);
  return o;
};

describe('registry+v1 rendering as OLM v1 does it', () => {
  describe('generated names', () => {
    it('ObjectNameForBaseAndSuffix cuts the base so base and suffix fit 63 characters (util_test.go)', () => {
      const name = objectNameForBaseAndSuffix('my.object.thing.has.a.really.really.really.really.really.long.name', 'suffix');
      assert.equal(name, 'my.object.thing.has.a.really.really.really.really.really-suffix');
      assert.equal(name.length, 63);
      assert.equal(objectNameForBaseAndSuffix('short', 'service'), 'short-service');
    });

    it('the hashed (Cluster)Role names equal upstream expected-manifests/webhook-operator.v0.0.5/all-webhook-types', () => {
      // 00_clusterrole_webhook-operator.v-119edugfdvz48oyy2ctmbp4ec5c4a7zbv5k03vg4y3ve.yaml (clusterPermissions)
      assert.equal(permissionObjectName('webhook-operator.v0.0.5', { serviceAccountName: SA, rules: WEBHOOK_OPERATOR_CLUSTER_RULES }), 'webhook-operator.v-119edugfdvz48oyy2ctmbp4ec5c4a7zbv5k03vg4y3ve');
      // 01_clusterrole_webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3.yaml (permissions promoted, + namespaces)
      const promoted = [...WEBHOOK_OPERATOR_RULES, { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] }];
      assert.equal(permissionObjectName('webhook-operator.v0.0.5', { serviceAccountName: SA, rules: promoted }), 'webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3');
    });

    it('the hash is over Go field order (verbs first), omits empty lists, and keeps "verbs": null apart from []', () => {
      const a = deepHashObject({ serviceAccountName: 'sa', rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] });
      assert.equal(permissionObjectName('x.v1', { serviceAccountName: 'sa', rules: [{ resources: ['pods'], apiGroups: [''], verbs: ['get'], resourceNames: [] }] }), `x.v1-sa-${a}`);
      assert.notEqual(permissionObjectName('x.v1', { serviceAccountName: 'sa', rules: [] }), permissionObjectName('x.v1', { serviceAccountName: 'sa' }));
      assert.match(a, /^[0-9a-z]{40,44}$/);
      // An empty service account is the namespace's "default" in the name, but hashed as given.
      assert.match(permissionObjectName('x.v1', { rules: [] }), /^x\.v1-default-[0-9a-z]+$/);
    });

    it('webhook Service, certificate and issuer names follow CertProvisionerFor (dots become dashes)', () => {
      assert.deepEqual(certProvisionerNames('my.deployment'), {
        serviceName: 'my-deployment-service',
        certName: 'my-deployment-service-cert',
        issuerName: 'my-deployment-service-cert-selfsigned-issuer',
      });
      const long = certProvisionerNames('a'.repeat(70));
      assert.equal(long.serviceName, `${'a'.repeat(55)}-service`);
      assert.equal(long.certName, `${'a'.repeat(55)}-se-cert`);
      assert.equal(long.issuerName.length, 63);
    });
  });

  describe('a webhook-operator-like bundle, AllNamespaces, cert-manager', () => {
    const NS = 'webhook-system';
    const objects = renderRegistryV1Files(webhookOperatorFiles(), { installNamespace: NS });
    const { serviceName, certName, issuerName } = certProvisionerNames('webhook-operator-controller-manager');

    it('renders the objects in the generators order with OLM names', () => {
      assert.deepEqual(objects.map(key), [
        `ServiceAccount ${NS}/${SA}`,
        'ClusterRole /webhook-operator.v-119edugfdvz48oyy2ctmbp4ec5c4a7zbv5k03vg4y3ve',
        'ClusterRoleBinding /webhook-operator.v-119edugfdvz48oyy2ctmbp4ec5c4a7zbv5k03vg4y3ve',
        'ClusterRole /webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3',
        'ClusterRoleBinding /webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3',
        `CustomResourceDefinition /${CRD_NAME}`,
        `Deployment ${NS}/webhook-operator-controller-manager`,
        `ValidatingWebhookConfiguration ${NS}/vwebhooktest-v1.kb.io`,
        `MutatingWebhookConfiguration ${NS}/mwebhooktest-v1.kb.io`,
        `Service ${NS}/webhook-operator-controller-manager-service`,
        `Issuer ${NS}/${issuerName}`,
        `Certificate ${NS}/${certName}`,
      ]);
    });

    it('promotes permissions to a ClusterRole with get/list/watch on namespaces, bound to the ServiceAccount', () => {
      const role = find(objects, 'ClusterRole', 'webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3');
      assert.deepEqual(role.rules.at(-1), { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] });
      const binding = find(objects, 'ClusterRoleBinding', role.metadata.name);
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: SA, namespace: NS }]);
      assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
    });

    it('wires the conversion webhook into the CRD and asks cert-manager to inject the CA', () => {
      const crd = find(objects, 'CustomResourceDefinition');
      assert.deepEqual(crd.spec.conversion, {
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { namespace: NS, name: serviceName, path: '/convert', port: 443 } }, conversionReviewVersions: ['v1'] },
      });
      assert.equal(crd.metadata.annotations['cert-manager.io/inject-ca-from'], `${NS}/${certName}`);
    });

    it('annotates the Deployment like OLM v0 and replaces the certificate volume', () => {
      const dep = find(objects, 'Deployment');
      assert.equal(dep.spec.revisionHistoryLimit, 1);
      assert.deepEqual(dep.metadata.labels, { 'control-plane': 'controller-manager' });
      assert.deepEqual(dep.spec.template.metadata.annotations, {
        capabilities: 'Basic Install',
        'kubectl.kubernetes.io/default-container': 'manager',
        'olm.targetNamespaces': '',
        'olm.operatorNamespace': NS,
      });
      const pod = dep.spec.template.spec;
      assert.deepEqual(pod.volumes.map((v: { name: string }) => v.name), ['data', 'webhook-cert', 'apiservice-cert']);
      assert.deepEqual(pod.volumes[1].secret, { secretName: certName, items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }] });
      assert.deepEqual(pod.containers[0].volumeMounts, [
        { mountPath: '/data', name: 'data' },
        { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs' },
        { name: 'apiservice-cert', mountPath: '/apiserver.local.config/certificates' },
      ]);
    });

    it('renders the webhook configurations, Service, Issuer and Certificate', () => {
      const vwc = find(objects, 'ValidatingWebhookConfiguration');
      assert.equal(vwc.metadata.annotations['cert-manager.io/inject-ca-from'], `${NS}/${certName}`);
      assert.deepEqual(vwc.webhooks[0].clientConfig, { service: { namespace: NS, name: serviceName, path: '/validate-webhook-operators-coreos-io-v1-webhooktest', port: 443 } });
      assert.equal(vwc.webhooks[0].namespaceSelector, undefined, 'all namespaces: no namespace selector');
      const svc = find(objects, 'Service');
      assert.deepEqual(svc.spec, { ports: [{ name: '443', port: 443, targetPort: 9443 }], selector: { 'control-plane': 'controller-manager' } });
      const cert = find(objects, 'Certificate');
      assert.deepEqual(cert.spec, {
        commonName: `${serviceName}.${NS}`,
        duration: '17520h0m0s',
        renewBefore: '24h0m0s',
        dnsNames: [`${serviceName}.${NS}`, `${serviceName}.${NS}.svc`, `${serviceName}.${NS}.svc.cluster.local`],
        secretName: certName,
        issuerRef: { name: issuerName },
        usages: ['server auth'],
      });
      assert.deepEqual(find(objects, 'Issuer').spec, { selfSigned: {} });
    });

    it('follows OLM 1.10 (no olm.operatorNamespace) and renders without a certificate provider like upstream regression tests', () => {
      const old = renderRegistryV1(readRegistryV1(webhookOperatorFiles()), { installNamespace: NS, olmVersion: '1.10', certProvider: 'none' });
      const dep = find(old, 'Deployment');
      assert.equal(dep.spec.template.metadata.annotations['olm.operatorNamespace'], undefined);
      assert.deepEqual(dep.spec.template.spec.volumes.map((v: { name: string }) => v.name), ['webhook-certs', 'data']);
      assert.ok(!old.some((o) => o.kind === 'Certificate' || o.kind === 'Issuer'));
      assert.equal(find(old, 'CustomResourceDefinition').metadata.annotations, undefined);
    });
  });

  describe('namespaces and refusals', () => {
    const singleFiles = webhookOperatorFiles({
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'AllNamespaces', supported: false },
      ],
    });

    it('SingleNamespace: Roles and RoleBindings in the watched namespace, a namespace selector on webhooks', () => {
      const objs = renderRegistryV1(readRegistryV1(singleFiles), { installNamespace: 'op', targetNamespaces: ['watched'], certProvider: 'none' });
      const name = permissionObjectName('webhook-operator.v0.0.5', { serviceAccountName: SA, rules: WEBHOOK_OPERATOR_RULES });
      assert.equal(key(find(objs, 'Role')), `Role watched/${name}`);
      assert.deepEqual(find(objs, 'RoleBinding').subjects, [{ kind: 'ServiceAccount', name: SA, namespace: 'op' }]);
      assert.deepEqual(find(objs, 'ValidatingWebhookConfiguration').webhooks[0].namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['watched'] }] });
      assert.equal(find(objs, 'Deployment').spec.template.metadata.annotations['olm.targetNamespaces'], 'watched');
    });

    it('refuses what OLM refuses: no target namespace, unsupported kinds, APIServices', () => {
      assert.throws(() => renderRegistryV1(readRegistryV1(singleFiles), { installNamespace: 'op' }), (e: OlmpubError) => /exactly one target namespace must be specified/.test(e.message));
      const withJob = webhookOperatorFiles({ others: [{ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' } }] });
      assert.throws(() => renderRegistryV1Files(withJob, { installNamespace: 'op' }), (e: OlmpubError) => /unsupported resource: Name: j, Kind: Job/.test(e.message) && e.place === 'manifests/other-0.yaml');
      const csvPath = 'manifests/webhook-operator.clusterserviceversion.yaml';
      const api = webhookOperatorFiles().map((f) => (f.path === csvPath ? { ...f, content: String(f.content).replace('spec:\n', 'spec:\n  apiservicedefinitions:\n    owned: [{name: x}]\n') } : f));
      assert.throws(() => renderRegistryV1Files(api, { installNamespace: 'op' }), (e: OlmpubError) => /apiServiceDefintions are not supported/.test(JSON.stringify(e.toJSON())));
      assert.throws(() => readRegistryV1([{ path: 'manifests/x.yaml', content: 'kind: ConfigMap\n' }]), /annotations.yaml is missing/);
      assert.throws(() => readRegistryV1([webhookOperatorFiles()[0]!, { path: 'manifests/sub/x.yaml', content: 'kind: ConfigMap\n' }]), /subdirectories are not allowed/);
    });

    it('sets the install namespace on namespaced extra manifests and leaves cluster-scoped ones alone', () => {
      const objs = renderRegistryV1Files(
        webhookOperatorFiles({
          others: [
            { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'elsewhere' } },
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' }, rules: [] },
          ],
        }),
        { installNamespace: 'op' },
      );
      assert.equal(find(objs, 'ConfigMap').metadata.namespace, 'op');
      assert.equal(find(objs, 'ClusterRole', 'reader').metadata.namespace, undefined);
    });

    it('merges metadata/properties.yaml into the olm.properties annotation the Deployment carries', () => {
      const files = [...webhookOperatorFiles(), { path: 'metadata/properties.yaml', content: 'properties:\n- type: olm.maxOpenShiftVersion\n  value: "4.20"\n- type: x.y\n  value: {b: 1, a: "<&>"}\n' }];
      const dep = find(renderRegistryV1Files(files, { installNamespace: 'op' }), 'Deployment');
      assert.equal(dep.spec.template.metadata.annotations['olm.properties'], '[{"type":"olm.maxOpenShiftVersion","value":"4.20"},{"type":"x.y","value":{"a":"\\u003c\\u0026\\u003e","b":1}}]');
    });
  });

  describe('our own bundle', function () {
    this.timeout(60_000); // building the bundle gzips the CRDs
    it('renders every object with the names OLM generates', async () => {
      const a = await renderReleaseArtifacts({ version: '1.2.0', image: IMAGE, created: 0 });
      const NS = 'inference-system';
      const objs = renderRegistryV1Files(a.bundle.files, { installNamespace: NS });
      const csv = a.bundle.csv;
      const perms = csv.spec.install.spec;
      const sa = perms.clusterPermissions![0]!.serviceAccountName as string;
      const clusterRoleName = permissionObjectName(csv.metadata.name, perms.clusterPermissions![0]!);
      const promotedName = permissionObjectName(csv.metadata.name, {
        serviceAccountName: sa,
        rules: [...(perms.permissions![0]!.rules as unknown[]), { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] }],
      });
      assert.ok(clusterRoleName.startsWith('inference-operator') && clusterRoleName.length <= 63, clusterRoleName);
      assert.notEqual(clusterRoleName, promotedName);
      const dep = csv.spec.install.spec.deployments[0]!.name;
      const { serviceName, certName, issuerName } = certProvisionerNames(dep);
      assert.deepEqual(objs.map(key).sort(), [
        `Certificate ${NS}/${certName}`,
        `ClusterRole /${clusterRoleName}`,
        `ClusterRole /${promotedName}`,
        'ClusterRole /inference-operator-metrics-reader',
        `ClusterRoleBinding /${clusterRoleName}`,
        `ClusterRoleBinding /${promotedName}`,
        'CustomResourceDefinition /inferenceservices.inference.olmpub.dev',
        `Deployment ${NS}/${dep}`,
        `Issuer ${NS}/${issuerName}`,
        `NetworkPolicy ${NS}/inference-operator`,
        `PodDisruptionBudget ${NS}/inference-operator`,
        `Service ${NS}/${serviceName}`,
        `Service ${NS}/inference-operator-metrics`,
        `ServiceAccount ${NS}/${sa}`,
        'ValidatingWebhookConfiguration inference-system/vinferenceservice.inference.olmpub.dev',
      ].sort());
      const crd = find(objs, 'CustomResourceDefinition');
      assert.equal(crd.spec.conversion.webhook.clientConfig.service.name, serviceName);
      assert.equal(crd.spec.conversion.webhook.clientConfig.service.namespace, NS);
      const pod = find(objs, 'Deployment').spec.template;
      assert.equal(pod.metadata.annotations['olm.targetNamespaces'], '');
      assert.ok(pod.spec.volumes.some((v: { name: string; secret?: { secretName: string } }) => v.name === 'webhook-cert' && v.secret?.secretName === certName));
      assert.ok(pod.spec.volumes.some((v: { name: string }) => v.name === 'tmp'), 'the /tmp emptyDir stays (only exact certificate paths are replaced)');
    });
  });
});
