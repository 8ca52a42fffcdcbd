/**
 * The operator's install objects, one builder per object, all reading ResolvedInstallOptions. The same
 * code renders concrete manifests (installManifests) and, with chart references in the options, the
 * Helm templates (bundle/chart): see knobs.ts for the rules this file follows.
 */
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1Role,
  V1RoleBinding,
  V1Service,
  V1ServiceAccount,
  V1ValidatingWebhookConfiguration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { operatorCRDs, type CustomResourceDefinition } from '../../operator/api/crd.js';
import { GROUP, PLURAL, V1, V1ALPHA1 } from '../../operator/api/meta.js';
import { compactRules, compareRules, mergeResources, ruleToObject, rulesFromDeclarations, uncoveredRules, type PolicyRule } from '../rbac/index.js';
import { and, omitEmpty, present, when, type Flag } from './knobs.js';
import { CONTAINER_NAME, PATHS, PORTS, WEBHOOK_CERT_DIR, type ResolvedInstallOptions } from './options.js';

/** The least every manifest has. */
export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** What an object is for; views (chart, CSV) look objects up by role. */
export type ManifestRole =
  | 'crd'
  | 'service-account'
  | 'issuer'
  | 'certificate'
  | 'metrics-service'
  | 'webhook-service'
  | 'network-policy'
  | 'pod-disruption-budget'
  | 'manager-cluster-role'
  | 'metrics-auth-cluster-role'
  | 'metrics-reader-cluster-role'
  | 'manager-cluster-role-binding'
  | 'metrics-auth-cluster-role-binding'
  | 'metrics-reader-cluster-role-binding'
  | 'manager-role'
  | 'leader-election-role'
  | 'manager-role-binding'
  | 'leader-election-role-binding'
  | 'deployment'
  | 'validating-webhook-configuration'
  | 'service-monitor';

/**
 * The install order, which is also the order of `installManifests().objects`:
 * 1. CRDs (the API must exist before anything refers to it);
 * 2. namespace-scoped infrastructure: ServiceAccount, cert-manager Issuer and Certificate (so the webhook
 *    Secret exists before the pods mount it), Services, NetworkPolicy, PodDisruptionBudget;
 * 3. RBAC: ClusterRoles, ClusterRoleBindings, Roles, RoleBindings (before the pods that use them);
 * 4. workloads and what depends on them running: the Deployment, then the ValidatingWebhookConfiguration
 *    (registered after its server, so admission does not fail while the pods start), then the ServiceMonitor.
 * Objects of one role keep the order the model gives them (CRDs by name).
 */
export const INSTALL_ORDER: readonly ManifestRole[] = [
  'crd',
  'service-account',
  'issuer',
  'certificate',
  'metrics-service',
  'webhook-service',
  'network-policy',
  'pod-disruption-budget',
  'manager-cluster-role',
  'metrics-auth-cluster-role',
  'metrics-reader-cluster-role',
  'manager-cluster-role-binding',
  'metrics-auth-cluster-role-binding',
  'metrics-reader-cluster-role-binding',
  'manager-role',
  'leader-election-role',
  'manager-role-binding',
  'leader-election-role-binding',
  'deployment',
  'validating-webhook-configuration',
  'service-monitor',
];

/** One object of the model, with the condition it exists under. */
export interface ManifestEntry {
  role: ManifestRole;
  object: ManifestObject;
  /** The object exists only when this holds (a chart condition when generating templates). */
  when?: Flag;
}

/** Names of the objects, derived from the operator name. */
export function objectNames(name: string) {
  return {
    serviceAccount: name,
    deployment: name,
    metricsService: `${name}-metrics`,
    webhookService: `${name}-webhook`,
    issuer: `${name}-selfsigned-issuer`,
    certificate: `${name}-serving-cert`,
    managerClusterRole: `${name}-manager`,
    managerRole: `${name}-manager`,
    leaderElectionRole: `${name}-leader-election`,
    metricsAuthClusterRole: `${name}-metrics-auth`,
    metricsReaderClusterRole: `${name}-metrics-reader`,
    validatingWebhookConfiguration: `${name}-validating-webhook`,
    networkPolicy: name,
    podDisruptionBudget: name,
    serviceMonitor: `${name}-metrics`,
    /** The webhook's name inside the ValidatingWebhookConfiguration (and the CSV's generateName). */
    validatingWebhook: `vinferenceservice.${GROUP}`,
    /** The conversion webhook's generateName in the CSV. */
    conversionWebhook: `cinferenceservice.${GROUP}`,
  };
}

const COMPONENT = 'app.kubernetes.io/component';
const CAINJECTOR = 'cert-manager.io/inject-ca-from';

function meta(o: ResolvedInstallOptions, name: string, component: string, namespaced: boolean, annotations?: Record<string, string>): ManifestObject['metadata'] {
  return {
    name,
    ...(namespaced ? { namespace: o.namespace } : {}),
    labels: { ...o.labels, [COMPONENT]: component },
    ...(annotations !== undefined ? { annotations } : {}),
  };
}

const podSelector = (o: ResolvedInstallOptions) => ({ ...o.selectorLabels, [COMPONENT]: 'controller-manager' });

// ---------------------------------------------------------------------------------------------
// RBAC

/**
 * Leader election in the operator's namespace: the Lease (get, create, update: what the runtime's lease
 * lock calls) and Events about it.
 */
export function leaderElectionRules(): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ];
}

/** Authenticating and authorising scrapes of the HTTPS metrics endpoint (controller-runtime's filters). */
export const METRICS_AUTH_RULES: readonly PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];

export const METRICS_READER_RULES: readonly PolicyRule[] = [{ nonResourceURLs: [PATHS.metrics], verbs: ['get'] }];

const tidy = (rules: PolicyRule[]): PolicyRule[] => mergeResources(compactRules(rules)).sort(compareRules);

/**
 * The manager's rules: exactly the declared permissions, minus what the leader-election Role and the
 * metrics-auth ClusterRole already grant (so nothing is granted twice). Namespace-scoped declarations
 * are also dropped when a cluster rule covers them.
 */
export function managerRules(o: ResolvedInstallOptions): { cluster: PolicyRule[]; namespaced: PolicyRule[] } {
  const declared = rulesFromDeclarations(o.permissions);
  const cluster = tidy(uncoveredRules([...METRICS_AUTH_RULES], declared.cluster));
  const namespaced = tidy(uncoveredRules([...leaderElectionRules(), ...METRICS_AUTH_RULES, ...cluster], declared.namespaced));
  return { cluster, namespaced };
}

const rules = (r: readonly PolicyRule[]) => r.map(ruleToObject) as unknown as V1ClusterRole['rules'];

function rbacEntries(o: ResolvedInstallOptions): ManifestEntry[] {
  const n = objectNames(o.name);
  const manager = managerRules(o);
  const sa = { kind: 'ServiceAccount', name: n.serviceAccount, namespace: o.namespace };
  const rbac = 'rbac.authorization.k8s.io/v1';
  const clusterRole = (name: string, r: readonly PolicyRule[]): ManifestObject => ({ apiVersion: rbac, kind: 'ClusterRole', metadata: meta(o, name, 'rbac', false), rules: rules(r) }) satisfies V1ClusterRole;
  const role = (name: string, r: readonly PolicyRule[]): ManifestObject => ({ apiVersion: rbac, kind: 'Role', metadata: meta(o, name, 'rbac', true), rules: rules(r) }) satisfies V1Role;
  const clusterBinding = (name: string, subjects: object[]): ManifestObject =>
    ({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: meta(o, name, 'rbac', false), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects }) as ManifestObject & V1ClusterRoleBinding;
  const binding = (name: string): ManifestObject =>
    ({ apiVersion: rbac, kind: 'RoleBinding', metadata: meta(o, name, 'rbac', true), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [sa] }) as ManifestObject & V1RoleBinding;
  const readers = o.metricsReaders.map((r) => (r.kind === 'ServiceAccount' ? { kind: r.kind, name: r.name, namespace: r.namespace ?? o.namespace } : { apiGroup: 'rbac.authorization.k8s.io', kind: r.kind, name: r.name }));
  const entries: ManifestEntry[] = [
    { role: 'manager-cluster-role', object: clusterRole(n.managerClusterRole, manager.cluster) },
    { role: 'metrics-auth-cluster-role', object: clusterRole(n.metricsAuthClusterRole, METRICS_AUTH_RULES) },
    { role: 'metrics-reader-cluster-role', object: clusterRole(n.metricsReaderClusterRole, METRICS_READER_RULES) },
    { role: 'manager-cluster-role-binding', object: clusterBinding(n.managerClusterRole, [sa]) },
    { role: 'metrics-auth-cluster-role-binding', object: clusterBinding(n.metricsAuthClusterRole, [sa]) },
    { role: 'leader-election-role', object: role(n.leaderElectionRole, leaderElectionRules()), when: o.leaderElect },
    { role: 'leader-election-role-binding', object: binding(n.leaderElectionRole), when: o.leaderElect },
  ];
  if (readers.length) entries.push({ role: 'metrics-reader-cluster-role-binding', object: clusterBinding(n.metricsReaderClusterRole, readers) });
  if (manager.namespaced.length) {
    entries.push({ role: 'manager-role', object: role(n.managerRole, manager.namespaced) }, { role: 'manager-role-binding', object: binding(n.managerRole) });
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Workload

function container(o: ResolvedInstallOptions): V1Container {
  const env: V1EnvVar[] = [
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    o.watchNamespace === undefined
      ? { name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } }
      : { name: 'WATCH_NAMESPACE', value: o.watchNamespace },
  ];
  const mountCert = and(o.webhook, o.mountCertSecret);
  return {
    name: CONTAINER_NAME,
    image: o.image,
    imagePullPolicy: o.imagePullPolicy,
    args: present([
      'operator',
      'run',
      when(o.leaderElect, '--leader-elect'),
      `--leader-election-id=${o.leaderElectionId}`,
      `--health-probe-bind-address=:${PORTS.health}`,
      `--metrics-bind-address=:${PORTS.metrics}`,
      `--webhook-bind-address=${o.webhookBindAddress}`,
      when(o.webhook, `--webhook-cert-dir=${WEBHOOK_CERT_DIR}`),
      `--log-level=${o.logLevel}`,
    ]),
    env,
    ports: present([
      { name: 'metrics', containerPort: PORTS.metrics, protocol: 'TCP' },
      when(o.webhook, { name: 'webhook', containerPort: PORTS.webhook, protocol: 'TCP' }),
      { name: 'health', containerPort: PORTS.health, protocol: 'TCP' },
    ]),
    livenessProbe: { httpGet: { path: PATHS.healthz, port: PORTS.health }, initialDelaySeconds: 15, periodSeconds: 20 },
    readinessProbe: { httpGet: { path: PATHS.readyz, port: PORTS.health }, initialDelaySeconds: 5, periodSeconds: 10 },
    resources: o.resources,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    },
    volumeMounts: present<V1VolumeMount>([
      { name: 'tmp', mountPath: '/tmp' },
      when(mountCert, { name: 'serving-cert', mountPath: WEBHOOK_CERT_DIR, readOnly: true }),
    ]),
  };
}

export function deployment(o: ResolvedInstallOptions): ManifestObject & V1Deployment {
  const n = objectNames(o.name);
  const mountCert = and(o.webhook, o.mountCertSecret);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(o, n.deployment, 'controller-manager', true),
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: podSelector(o) },
      template: {
        metadata: {
          labels: { ...o.labels, [COMPONENT]: 'controller-manager' },
          annotations: { 'kubectl.kubernetes.io/default-container': CONTAINER_NAME, ...o.podAnnotations },
        },
        spec: {
          serviceAccountName: n.serviceAccount,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 30,
          imagePullSecrets: omitEmpty(o.imagePullSecrets),
          nodeSelector: omitEmpty(o.nodeSelector),
          tolerations: omitEmpty(o.tolerations),
          affinity: omitEmpty(o.affinity),
          containers: [container(o)],
          volumes: present<V1Volume>([
            { name: 'tmp', emptyDir: {} },
            when(mountCert, { name: 'serving-cert', secret: { secretName: o.certSecretName, defaultMode: 0o444 } }),
          ]),
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Services, webhooks, certificates, policies, monitoring

function services(o: ResolvedInstallOptions): ManifestEntry[] {
  const n = objectNames(o.name);
  const metrics: ManifestObject & V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...meta(o, n.metricsService, 'metrics', true) },
    spec: { selector: podSelector(o), ports: [{ name: 'https', port: PORTS.metrics, targetPort: 'metrics', protocol: 'TCP' }] },
  };
  const webhook: ManifestObject & V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(o, n.webhookService, 'webhook', true),
    spec: { selector: podSelector(o), ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }] },
  };
  return [
    { role: 'metrics-service', object: metrics },
    { role: 'webhook-service', object: webhook, when: o.webhook },
  ];
}

const webhookClientConfig = (o: ResolvedInstallOptions, path: string) => ({
  service: { name: objectNames(o.name).webhookService, namespace: o.namespace, path, port: 443 },
  ...(o.caBundle !== undefined ? { caBundle: o.caBundle } : {}),
});

const caInjection = (o: ResolvedInstallOptions) => when(o.certManager, { [CAINJECTOR]: `${o.namespace}/${objectNames(o.name).certificate}` });

export function validatingWebhookConfiguration(o: ResolvedInstallOptions): ManifestObject & V1ValidatingWebhookConfiguration {
  const n = objectNames(o.name);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: meta(o, n.validatingWebhookConfiguration, 'webhook', false, caInjection(o)),
    webhooks: [
      {
        name: n.validatingWebhook,
        admissionReviewVersions: ['v1'],
        clientConfig: webhookClientConfig(o, PATHS.validateInferenceService),
        failurePolicy: o.failurePolicy,
        matchPolicy: 'Equivalent',
        // Objects being deleted are not checked: with the operator down (failurePolicy Fail) this lets
        // people remove a stuck finalizer (docs/operator.md). Quota only matters for live objects.
        matchConditions: [{ name: 'not-being-deleted', expression: '!has(object.metadata.deletionTimestamp)' }],
        rules: [{ apiGroups: [GROUP], apiVersions: [V1, V1ALPHA1], operations: ['CREATE', 'UPDATE'], resources: [PLURAL], scope: 'Namespaced' }],
        sideEffects: 'None',
        timeoutSeconds: o.timeoutSeconds,
      },
    ],
  };
}

function certManagerEntries(o: ResolvedInstallOptions): ManifestEntry[] {
  const n = objectNames(o.name);
  const issuer: ManifestObject = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: meta(o, n.issuer, 'webhook', true), spec: { selfSigned: {} } };
  const certificate: ManifestObject = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: meta(o, n.certificate, 'webhook', true),
    spec: {
      dnsNames: [`${n.webhookService}.${o.namespace}.svc`, `${n.webhookService}.${o.namespace}.svc.cluster.local`],
      issuerRef: { kind: 'Issuer', name: n.issuer },
      secretName: o.certSecretName,
      privateKey: { rotationPolicy: 'Always' },
    },
  };
  return [
    { role: 'issuer', object: issuer, when: o.certManager },
    { role: 'certificate', object: certificate, when: o.certManager },
  ];
}

function policyEntries(o: ResolvedInstallOptions): ManifestEntry[] {
  const n = objectNames(o.name);
  const networkPolicy: ManifestObject & V1NetworkPolicy = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(o, n.networkPolicy, 'controller-manager', true),
    spec: {
      podSelector: { matchLabels: podSelector(o) },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          ports: present([{ port: PORTS.metrics, protocol: 'TCP' }, when(o.webhook, { port: PORTS.webhook, protocol: 'TCP' })]),
        },
      ],
      egress: [
        {
          ports: o.apiServerPorts.map((port) => ({ port, protocol: 'TCP' })),
          ...(o.apiServerCIDRs.length ? { to: o.apiServerCIDRs.map((cidr) => ({ ipBlock: { cidr } })) } : {}),
        },
      ],
    },
  };
  const pdb: ManifestObject & V1PodDisruptionBudget = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(o, n.podDisruptionBudget, 'controller-manager', true),
    spec: { minAvailable: 1, selector: { matchLabels: podSelector(o) }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  };
  return [
    { role: 'network-policy', object: networkPolicy, when: o.networkPolicy },
    { role: 'pod-disruption-budget', object: pdb, when: o.highAvailability },
  ];
}

function serviceMonitor(o: ResolvedInstallOptions): ManifestObject {
  const n = objectNames(o.name);
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: meta(o, n.serviceMonitor, 'metrics', true),
    spec: {
      selector: { matchLabels: { ...o.selectorLabels, [COMPONENT]: 'metrics' } },
      endpoints: [
        {
          port: 'https',
          scheme: 'https',
          path: PATHS.metrics,
          interval: o.serviceMonitorInterval,
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          // The operator serves metrics with a self-signed certificate; scrapes are authenticated by the
          // ServiceAccount token (TokenReview) and authorised by SubjectAccessReview on /metrics.
          tlsConfig: { insecureSkipVerify: true },
        },
      ],
    },
  };
}

/** The CRDs, their conversion webhook aimed at the webhook Service, CA injected by cert-manager when it is on. */
export function crds(o: ResolvedInstallOptions): CustomResourceDefinition[] {
  const conversion = webhookClientConfig(o, PATHS.convert);
  return operatorCRDs({ conversionClientConfig: conversion, labels: { ...o.labels, [COMPONENT]: 'api' } })
    .map((crd) => {
      const annotations = caInjection(o);
      return annotations === undefined ? crd : { ...crd, metadata: { ...crd.metadata, annotations } };
    })
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

/** Every object of the model with its condition, in INSTALL_ORDER. */
export function manifestEntries(o: ResolvedInstallOptions): ManifestEntry[] {
  const n = objectNames(o.name);
  const serviceAccount: ManifestObject & V1ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(o, n.serviceAccount, 'controller-manager', true) };
  const entries: ManifestEntry[] = [
    ...crds(o).map((crd): ManifestEntry => ({ role: 'crd', object: crd as unknown as ManifestObject })),
    { role: 'service-account', object: serviceAccount },
    ...certManagerEntries(o),
    ...services(o),
    ...policyEntries(o),
    ...rbacEntries(o),
    { role: 'deployment', object: deployment(o) },
    { role: 'validating-webhook-configuration', object: validatingWebhookConfiguration(o), when: o.webhook },
    { role: 'service-monitor', object: serviceMonitor(o), when: o.serviceMonitor },
  ];
  const rank = (r: ManifestRole) => INSTALL_ORDER.indexOf(r);
  return entries.map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => rank(a.role) - rank(b.role) || i - j).map(([e]) => e);
}
