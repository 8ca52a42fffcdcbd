import assert from 'node:assert/strict';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { OlmpubError } from '../../../lib/errors.js';
import type { Declaration, NonResourcePermissionDeclaration, PermissionDeclaration } from '../../../operator/rbac-declarations.js';
import { CRD_NAME } from '../../../operator/api/meta.js';
import {
  INSTALL_ORDER,
  PATHS,
  PORTS,
  WEBHOOK_CERT_DIR,
  installManifests,
  type InstallOptions,
  type ManifestObject,
} from '../../../bundle/manifests/index.js';
import { deriveInstallerRole, lintRules, ruleFromObject, rulesAllow, type PolicyRule } from '../../../bundle/rbac/index.js';

export const IMAGE = `registry.example.com/olmpub/inference-operator@sha256:${'c'.repeat(64)}`;
const base: InstallOptions = { image: IMAGE, permissions: [] };

const kinds = (objects: ManifestObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
const find = (objects: ManifestObject[], kind: string, name?: string) => objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const container = (d: V1Deployment): V1Container => d.spec!.template.spec!.containers[0]!;
const rulesOf = (o: ManifestObject | undefined): PolicyRule[] => ((o?.rules as unknown[]) ?? []).map(ruleFromObject);

describe('install manifests model', () => {
  it('renders every object in the documented install order, the same way twice', () => {
    const a = installManifests(base);
    const b = installManifests(base);
    assert.equal(JSON.stringify(a.objects), JSON.stringify(b.objects), 'deterministic: same options, same bytes');
    const ranks = a.entries.map((e) => INSTALL_ORDER.indexOf(e.role));
    assert.deepEqual(ranks, [...ranks].sort((x, y) => x - y), 'entries follow INSTALL_ORDER');
    assert.deepEqual(kinds(a.objects), [
      `CustomResourceDefinition/${CRD_NAME}`,
      'ServiceAccount/inference-operator',
      'Issuer/inference-operator-selfsigned-issuer',
      'Certificate/inference-operator-serving-cert',
      'Service/inference-operator-metrics',
      'Service/inference-operator-webhook',
      'NetworkPolicy/inference-operator',
      'PodDisruptionBudget/inference-operator',
      'ClusterRole/inference-operator-manager',
      'ClusterRole/inference-operator-metrics-auth',
      'ClusterRole/inference-operator-metrics-reader',
      'ClusterRoleBinding/inference-operator-manager',
      'ClusterRoleBinding/inference-operator-metrics-auth',
      'Role/inference-operator-leader-election',
      'RoleBinding/inference-operator-leader-election',
      'Deployment/inference-operator',
      'ValidatingWebhookConfiguration/inference-operator-validating-webhook',
    ]);
    for (const o of a.objects) {
      const namespaced = !['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration'].includes(o.kind);
      assert.equal(o.metadata.namespace, namespaced ? 'inference-operator-system' : undefined, `${o.kind} namespace`);
      assert.equal(o.metadata.labels?.['app.kubernetes.io/name'], 'inference-operator', `${o.kind} labels`);
    }
  });

  it('runs two restricted, spread, probed replicas with leader election', () => {
    const d = installManifests(base).deployment;
    const spec = d.spec!;
    const pod = spec.template.spec!;
    const c = container(d);
    assert.equal(spec.replicas, 2);
    assert.deepEqual(spec.selector.matchLabels, { 'app.kubernetes.io/name': 'inference-operator', 'app.kubernetes.io/instance': 'inference-operator', 'app.kubernetes.io/component': 'controller-manager' });
    for (const [k, v] of Object.entries(spec.selector.matchLabels!)) assert.equal(spec.template.metadata!.labels![k], v, 'the selector matches the pods');
    const term = pod.affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution![0]!;
    assert.equal(term.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
    for (const [k, v] of Object.entries(term.podAffinityTerm.labelSelector!.matchLabels!)) assert.equal(spec.template.metadata!.labels![k], v, 'anti-affinity selects its own pods');
    assert.equal(c.image, IMAGE);
    assert.deepEqual(c.args!.slice(0, 3), ['operator', 'run', '--leader-elect']);
    assert.ok(c.args!.includes('--leader-election-id=inference-operator.olmpub.dev'), 'the operator’s default Lease name');
    assert.ok(c.args!.includes(`--metrics-bind-address=:${PORTS.metrics}`) && c.args!.includes(`--webhook-bind-address=:${PORTS.webhook}`));
    assert.deepEqual(c.livenessProbe!.httpGet, { path: '/healthz', port: 8081 });
    assert.deepEqual(c.readinessProbe!.httpGet, { path: '/readyz', port: 8081 });
    assert.deepEqual(c.ports!.map((p) => [p.name, p.containerPort]), [['metrics', 8443], ['webhook', 9443], ['health', 8081]]);
    assert.ok(c.resources!.requests!.cpu && c.resources!.requests!.memory && c.resources!.limits!.cpu && c.resources!.limits!.memory);
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, runAsNonRoot: true });
    assert.deepEqual(c.volumeMounts, [
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'serving-cert', mountPath: WEBHOOK_CERT_DIR, readOnly: true },
    ]);
    assert.deepEqual(pod.volumes, [
      { name: 'tmp', emptyDir: {} },
      { name: 'serving-cert', secret: { secretName: 'inference-operator-webhook-cert', defaultMode: 0o444 } },
    ]);
    assert.deepEqual(c.env, [
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'WATCH_NAMESPACE', value: '' },
    ]);
    assert.equal(pod.nodeSelector, undefined, 'empty placement fields are left out');
    assert.equal(pod.tolerations, undefined);
    assert.equal(pod.imagePullSecrets, undefined);
  });

  it('wires the webhooks: Service, validating webhook, CRD conversion, cert-manager certificate with CA injection', () => {
    const m = installManifests({ ...base, namespace: 'ops' });
    const svc = find(m.objects, 'Service', 'inference-operator-webhook') as ManifestObject & { spec: { ports: { port: number; targetPort: string }[] } };
    assert.deepEqual(svc.spec.ports.map((p) => [p.port, p.targetPort]), [[443, 'webhook']]);
    const vwc = m.one('validating-webhook-configuration') as ManifestObject & { webhooks: Record<string, any>[] };
    const hook = vwc.webhooks[0]!;
    assert.deepEqual(hook.clientConfig.service, { name: 'inference-operator-webhook', namespace: 'ops', path: PATHS.validateInferenceService, port: 443 });
    assert.deepEqual(hook.rules[0].operations, ['CREATE', 'UPDATE']);
    assert.deepEqual(hook.rules[0].resources, ['inferenceservices']);
    assert.equal(hook.sideEffects, 'None');
    assert.equal(hook.failurePolicy, 'Fail');
    assert.equal(vwc.metadata.annotations?.['cert-manager.io/inject-ca-from'], 'ops/inference-operator-serving-cert');
    const crd = m.crds[0]!;
    assert.equal(crd.spec.conversion.strategy, 'Webhook');
    assert.deepEqual((crd.spec.conversion as { webhook: { clientConfig: unknown } }).webhook.clientConfig, { service: { name: 'inference-operator-webhook', namespace: 'ops', path: '/convert', port: 443 } });
    assert.equal(crd.metadata.annotations?.['cert-manager.io/inject-ca-from'], 'ops/inference-operator-serving-cert');
    const cert = m.one('certificate') as ManifestObject & { spec: { dnsNames: string[]; secretName: string; issuerRef: { name: string } } };
    assert.deepEqual(cert.spec.dnsNames, ['inference-operator-webhook.ops.svc', 'inference-operator-webhook.ops.svc.cluster.local']);
    assert.equal(cert.spec.secretName, 'inference-operator-webhook-cert');
    assert.equal(cert.spec.issuerRef.name, m.one('issuer')!.metadata.name);
    assert.deepEqual((m.one('issuer') as ManifestObject & { spec: unknown }).spec, { selfSigned: {} });
  });

  it('leaves out what the options turn off', () => {
    const noWebhook = installManifests({ ...base, webhook: { enabled: false } });
    for (const kind of ['ValidatingWebhookConfiguration', 'Issuer', 'Certificate']) assert.equal(find(noWebhook.objects, kind), undefined, kind);
    assert.equal(find(noWebhook.objects, 'Service', 'inference-operator-webhook'), undefined);
    const c = container(noWebhook.deployment);
    assert.ok(c.args!.includes('--webhook-bind-address=0'), 'the operator serves no webhooks (its default is :9443)');
    assert.ok(!c.args!.some((a) => a.startsWith('--webhook-cert-dir')));
    assert.deepEqual(c.ports!.map((p) => p.name), ['metrics', 'health']);
    assert.deepEqual(c.volumeMounts!.map((v) => v.name), ['tmp']);
    assert.equal(noWebhook.crds[0]!.metadata.annotations, undefined);
    const np = noWebhook.one('network-policy') as ManifestObject & { spec: { ingress: { ports: { port: number }[] }[] } };
    assert.deepEqual(np.spec.ingress[0]!.ports.map((p) => p.port), [8443]);

    const noCertManager = installManifests({ ...base, certManager: { enabled: false }, webhook: { caBundle: 'Q0E=' } });
    assert.equal(noCertManager.one('issuer'), undefined);
    assert.equal(noCertManager.one('certificate'), undefined);
    assert.ok(container(noCertManager.deployment).volumeMounts!.some((v) => v.mountPath === WEBHOOK_CERT_DIR), 'the Secret is still mounted');
    const vwc = noCertManager.one('validating-webhook-configuration') as ManifestObject & { webhooks: { clientConfig: { caBundle?: string } }[] };
    assert.equal(vwc.webhooks[0]!.clientConfig.caBundle, 'Q0E=');
    assert.equal(vwc.metadata.annotations, undefined);

    const single = installManifests({ ...base, replicas: 1, leaderElection: { enabled: false }, networkPolicy: { enabled: false } });
    assert.equal(single.one('pod-disruption-budget'), undefined, 'no PDB for one replica: it would block every drain');
    assert.equal(single.one('leader-election-role'), undefined);
    assert.equal(single.one('network-policy'), undefined);
    assert.ok(!container(single.deployment).args!.includes('--leader-elect'));

    const monitored = installManifests({ ...base, serviceMonitor: { enabled: true, interval: '15s' } });
    const sm = monitored.one('service-monitor') as ManifestObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: Record<string, unknown>[] } };
    assert.equal(sm.spec.endpoints[0]!.port, 'https');
    assert.equal(sm.spec.endpoints[0]!.interval, '15s');
    const metrics = monitored.one('metrics-service')!;
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(metrics.metadata.labels![k], v, 'the ServiceMonitor selects the metrics Service');
    assert.notEqual(monitored.one('webhook-service')!.metadata.labels!['app.kubernetes.io/component'], 'metrics', 'and not the webhook Service');
  });

  it('passes placement, namespaces, labels and the OLM target-namespace annotation through', () => {
    const m = installManifests({
      ...base,
      watchNamespaces: ['team-a', 'team-b'],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: {},
      imagePullSecrets: [{ name: 'pull' }],
      podAnnotations: { 'example.com/a': 'b' },
      labels: { team: 'ml' },
      instance: 'prod',
      logLevel: 'debug',
    });
    const pod = m.deployment.spec!.template;
    assert.deepEqual(container(m.deployment).env![1], { name: 'WATCH_NAMESPACE', value: 'team-a,team-b' });
    assert.deepEqual(pod.spec!.nodeSelector, { 'kubernetes.io/os': 'linux' });
    assert.equal(pod.spec!.tolerations!.length, 1);
    assert.equal(pod.spec!.affinity, undefined, 'an empty affinity turns the default anti-affinity off');
    assert.deepEqual(pod.spec!.imagePullSecrets, [{ name: 'pull' }]);
    assert.equal(pod.metadata!.annotations!['example.com/a'], 'b');
    assert.ok(container(m.deployment).args!.includes('--log-level=debug'));
    for (const o of m.objects) assert.equal(o.metadata.labels?.team, 'ml');
    assert.equal(m.deployment.spec!.selector.matchLabels!['app.kubernetes.io/instance'], 'prod');
    assert.equal(m.deployment.spec!.selector.matchLabels!.team, undefined, 'extra labels stay out of selectors');
    const olm = installManifests({ ...base, watchNamespacesFromOLM: true });
    assert.deepEqual(container(olm.deployment).env![1], { name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } });
  });

  it('refuses options it cannot install, listing every problem', () => {
    assert.throws(
      () => installManifests({ image: 'ghcr.io/x/op:1.0', namespace: 'Bad_NS', replicas: 0, watchNamespaces: ['ok', 'NOT OK'] }),
      (err: unknown) => {
        assert.ok(err instanceof OlmpubError);
        assert.equal(err.kind, 'validation');
        assert.deepEqual(err.children.map((c) => c.place), ['image', 'namespace', 'replicas', 'watchNamespaces[1]']);
        return true;
      },
    );
    assert.throws(() => installManifests({ image: `ghcr.io/x/op@sha256:${'a'.repeat(63)}` }), /not pinned by digest/);
    assert.doesNotThrow(() => installManifests({ image: `127.0.0.1:5000/a/b-c@sha256:${'a'.repeat(64)}` }));
  });
});

// Plain declarations: requires() would also record them in the process-wide registry other tests read.
const requires = (d: PermissionDeclaration): Declaration => d;
const requiresURL = (d: NonResourcePermissionDeclaration): Declaration => d;

describe('install manifests model: RBAC', () => {
  const declarations: Declaration[] = [
    requires({ group: 'apps', resource: 'deployments', verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }),
    requires({ group: 'inference.olmpub.dev', resource: 'inferenceservices', verbs: ['get', 'list', 'watch'] }),
    requires({ group: 'inference.olmpub.dev', resource: 'inferenceservices', subresource: 'status', verbs: ['update', 'patch'] }),
    requires({ group: 'authentication.k8s.io', resource: 'tokenreviews', verbs: ['create'] }),
    requires({ group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'], scope: 'namespace' }),
    requires({ group: '', resource: 'configmaps', verbs: ['get'], resourceNames: ['inference-operator-config'], scope: 'namespace' }),
    requiresURL({ nonResourceURL: '/version', verbs: ['get'] }),
  ];

  it('grants exactly the declared permissions, nothing twice', () => {
    const m = installManifests({ ...base, permissions: declarations });
    const manager = rulesOf(m.one('manager-cluster-role'));
    const allow = (verb: string, group: string, resource: string, subresource?: string) => rulesAllow(manager, { verb, group, resource, ...(subresource ? { subresource } : {}) });
    assert.ok(allow('delete', 'apps', 'deployments'));
    assert.ok(allow('patch', 'inference.olmpub.dev', 'inferenceservices', 'status'));
    assert.ok(!allow('delete', 'inference.olmpub.dev', 'inferenceservices'), 'nothing undeclared');
    assert.ok(rulesAllow(manager, { verb: 'get', path: '/version' }));
    assert.ok(!allow('create', 'authentication.k8s.io', 'tokenreviews'), 'tokenreviews come from the metrics-auth ClusterRole only');
    const role = rulesOf(m.one('manager-role'));
    assert.deepEqual(role, [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['inference-operator-config'], verbs: ['get'] }], 'leases are the leader-election Role’s');
    assert.equal(m.one('manager-role-binding')!.metadata.namespace, 'inference-operator-system');
  });

  it('has infrastructure roles for leader election and metrics, and passes the least-privilege lint', () => {
    const m = installManifests({ ...base, permissions: declarations, metricsReaders: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }] });
    const le = rulesOf(m.one('leader-election-role'));
    for (const verb of ['get', 'create', 'update']) assert.ok(rulesAllow(le, { verb, group: 'coordination.k8s.io', resource: 'leases', name: 'inference-operator.olmpub.dev', namespace: 'inference-operator-system' }), verb);
    assert.ok(!rulesAllow(le, { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', name: 'inference-operator.olmpub.dev', namespace: 'inference-operator-system' }), 'only what the lease lock calls');
    assert.ok(rulesAllow(le, { verb: 'create', group: '', resource: 'events', namespace: 'inference-operator-system' }));
    const auth = rulesOf(m.one('metrics-auth-cluster-role'));
    assert.ok(rulesAllow(auth, { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' }));
    assert.ok(rulesAllow(auth, { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' }));
    assert.deepEqual(rulesOf(m.one('metrics-reader-cluster-role')), [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    assert.deepEqual((m.one('metrics-reader-cluster-role-binding') as ManifestObject & { subjects: unknown[] }).subjects, [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }]);
    for (const role of ['manager-cluster-role-binding', 'metrics-auth-cluster-role-binding', 'leader-election-role-binding', 'manager-role-binding'] as const) {
      assert.deepEqual((m.one(role) as ManifestObject & { subjects: unknown[] }).subjects, [{ kind: 'ServiceAccount', name: 'inference-operator', namespace: 'inference-operator-system' }], role);
    }
    assert.deepEqual(lintRules(m.objects.map((object) => ({ object }))), []);
  });

  it('is the input of the installer role derivation (bundle/rbac), a third view of the model', () => {
    const m = installManifests({ ...base, permissions: declarations });
    const derived = deriveInstallerRole({ objects: m.objects, extensionName: 'inference-operator', installNamespace: 'inference-operator-system' });
    const rules = derived.rules;
    assert.ok(rulesAllow(rules, { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'inference-operator-system' }));
    assert.ok(rulesAllow(rules, { verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'inference-operator-system' }), 'what the operator is granted, the installer must hold');
  });
});
