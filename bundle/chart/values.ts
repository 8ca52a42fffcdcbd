/**
 * The chart's values: their defaults (from the model's defaults), documentation, JSON schema
 * (values.schema.json), the values.yaml text, and the two mappings that keep the chart a view of the
 * model: values → InstallOptions (what `helm template` must equal) and the model's options as chart
 * references (what the templates are generated from). Pure.
 */
import type { V1Affinity, V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
import YAML from 'yaml';
import { usageError } from '../../lib/errors.js';
import { blockValue, rawValue, spliceKey, templateString, ValueCondition, when } from '../manifests/knobs.js';
import {
  LOG_LEVELS,
  OPERATOR_NAME,
  defaultAffinity,
  defaultResources,
  splitImage,
  type InstallOptions,
  type LogLevel,
  type ResolvedInstallOptions,
} from '../manifests/options.js';
import type { Declaration } from '../../operator/rbac-declarations.js';
import { DEFAULT_LEADER_ELECTION_ID } from '../../operator/main.js';

export interface ChartValues {
  image: { repository: string; digest: string; pullPolicy: 'Always' | 'IfNotPresent' | 'Never' };
  imagePullSecrets: { name: string }[];
  replicas: number;
  resources: V1ResourceRequirements;
  watchNamespaces: string[];
  logLevel: LogLevel;
  leaderElection: { enabled: boolean; id: string };
  webhook: { enabled: boolean; failurePolicy: 'Fail' | 'Ignore'; timeoutSeconds: number; caBundle: string };
  certManager: { enabled: boolean };
  serviceMonitor: { enabled: boolean; interval: string };
  networkPolicy: { enabled: boolean };
  nodeSelector: Record<string, string>;
  tolerations: V1Toleration[];
  affinity: V1Affinity;
  podAnnotations: Record<string, string>;
}

/** The chart's default values for an operator image (`REPOSITORY@sha256:…`). */
export function defaultValues(image: string): ChartValues {
  const { repository, digest } = splitImage(image);
  return {
    image: { repository, digest, pullPolicy: 'IfNotPresent' },
    imagePullSecrets: [],
    replicas: 2,
    resources: defaultResources(),
    watchNamespaces: [],
    logLevel: 'info',
    leaderElection: { enabled: true, id: DEFAULT_LEADER_ELECTION_ID },
    webhook: { enabled: true, failurePolicy: 'Fail', timeoutSeconds: 10, caBundle: '' },
    certManager: { enabled: true },
    serviceMonitor: { enabled: false, interval: '30s' },
    networkPolicy: { enabled: true },
    nodeSelector: {},
    tolerations: [],
    affinity: defaultAffinity(),
    podAnnotations: {},
  };
}

/** What each value does; values.yaml comments, the README table and the schema descriptions. */
export const VALUE_DOCS: Record<string, string> = {
  image: 'The operator image, pinned by digest.',
  'image.repository': 'Image repository (registry and path, no tag).',
  'image.digest': 'Image digest, `sha256:<64 hex>`; tags are not accepted, so what was tested is what runs.',
  'image.pullPolicy': 'Always, IfNotPresent or Never.',
  imagePullSecrets: 'Secrets to pull the image with, as `[{name: secret}]`.',
  replicas: 'Operator replicas. One leads (leader election), the others take over within about 15 seconds. With more than one, a PodDisruptionBudget keeps one running.',
  resources: 'Requests and limits of the operator container.',
  watchNamespaces: 'Namespaces whose InferenceServices the operator reconciles; empty means all namespaces.',
  logLevel: 'debug, info, warn or error.',
  leaderElection: 'Leader election through a Lease in the release namespace.',
  'leaderElection.enabled': 'Turn it off only with replicas: 1.',
  'leaderElection.id': "The Lease's name.",
  webhook: 'The validating webhook (GPU quota) and the CRD conversion webhook (v1alpha1 ↔ v1).',
  'webhook.enabled': 'Serve the webhooks. Off: no GPU quota, and v1alpha1 requests that need conversion fail.',
  'webhook.failurePolicy': 'What the API server does when the validating webhook cannot be reached: Fail or Ignore.',
  'webhook.timeoutSeconds': 'Validating webhook timeout, 1–30 seconds.',
  'webhook.caBundle': 'Base64 PEM CA of the webhook certificate when cert-manager is off (the certificate goes in the Secret inference-operator-webhook-cert).',
  certManager: 'cert-manager issues the webhook certificate (self-signed Issuer) and injects its CA.',
  'certManager.enabled': 'Requires cert-manager in the cluster.',
  serviceMonitor: 'A prometheus-operator ServiceMonitor for the metrics endpoint.',
  'serviceMonitor.enabled': 'Requires the monitoring.coreos.com CRDs; bind ClusterRole inference-operator-metrics-reader to Prometheus.',
  'serviceMonitor.interval': 'Scrape interval.',
  networkPolicy: 'A NetworkPolicy: ingress only to the metrics and webhook ports, egress only to the API server (ports 443 and 6443).',
  'networkPolicy.enabled': 'Create it.',
  nodeSelector: 'Node labels the operator pods require.',
  tolerations: 'Tolerations of the operator pods.',
  affinity: 'Affinity of the operator pods; the default spreads replicas over nodes.',
  podAnnotations: 'Extra annotations on the operator pods.',
};

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });
const bool = (description: string) => ({ type: 'boolean', description });
const stringMap = (description: string) => ({ type: 'object', description, additionalProperties: { type: 'string' } });
const obj = (description: string, properties: Record<string, unknown>, required: string[]) => ({ type: 'object', description, additionalProperties: false, required, properties });

/** values.schema.json: every value typed, unknown keys refused (a typo in --set fails instead of being ignored). */
export function valuesSchema(): Record<string, unknown> {
  const d = VALUE_DOCS;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'inference-operator chart values',
    type: 'object',
    additionalProperties: false,
    required: ['image', 'replicas', 'resources', 'watchNamespaces', 'logLevel', 'leaderElection', 'webhook', 'certManager', 'serviceMonitor', 'networkPolicy'],
    properties: {
      global: { type: 'object', description: 'Values shared with a parent chart.' },
      image: obj(
        d.image!,
        {
          repository: str(d['image.repository']!, { minLength: 1, pattern: '^[^@:\\s]+(:[0-9]+)?(/[^@:\\s]+)*$' }),
          digest: str(d['image.digest']!, { pattern: '^sha256:[a-f0-9]{64}$' }),
          pullPolicy: str(d['image.pullPolicy']!, { enum: ['Always', 'IfNotPresent', 'Never'] }),
        },
        ['repository', 'digest'],
      ),
      imagePullSecrets: { type: 'array', description: d.imagePullSecrets, items: obj('A Secret in the release namespace.', { name: str('Secret name.', { minLength: 1 }) }, ['name']) },
      replicas: { type: 'integer', description: d.replicas, minimum: 1 },
      resources: { type: 'object', description: d.resources },
      watchNamespaces: { type: 'array', description: d.watchNamespaces, uniqueItems: true, items: str('A namespace.', { pattern: DNS_LABEL, maxLength: 63 }) },
      logLevel: str(d.logLevel!, { enum: [...LOG_LEVELS] }),
      leaderElection: obj(d.leaderElection!, { enabled: bool(d['leaderElection.enabled']!), id: str(d['leaderElection.id']!, { minLength: 1, maxLength: 253 }) }, ['enabled', 'id']),
      webhook: obj(
        d.webhook!,
        {
          enabled: bool(d['webhook.enabled']!),
          failurePolicy: str(d['webhook.failurePolicy']!, { enum: ['Fail', 'Ignore'] }),
          timeoutSeconds: { type: 'integer', description: d['webhook.timeoutSeconds'], minimum: 1, maximum: 30 },
          caBundle: str(d['webhook.caBundle']!, { pattern: '^[A-Za-z0-9+/=]*$' }),
        },
        ['enabled'],
      ),
      certManager: obj(d.certManager!, { enabled: bool(d['certManager.enabled']!) }, ['enabled']),
      serviceMonitor: obj(d.serviceMonitor!, { enabled: bool(d['serviceMonitor.enabled']!), interval: str(d['serviceMonitor.interval']!, { pattern: '^([0-9]+(ms|s|m|h))+$' }) }, ['enabled']),
      networkPolicy: obj(d.networkPolicy!, { enabled: bool(d['networkPolicy.enabled']!) }, ['enabled']),
      nodeSelector: stringMap(d.nodeSelector!),
      tolerations: { type: 'array', description: d.tolerations, items: { type: 'object' } },
      affinity: { type: 'object', description: d.affinity },
      podAnnotations: stringMap(d.podAnnotations!),
    },
  };
}

/** values.yaml: the defaults with a `# --` comment above every documented key (helm-docs style). */
export function valuesYaml(values: ChartValues): string {
  const doc = new YAML.Document(values, { aliasDuplicateObjects: false });
  YAML.visit(doc, {
    Pair(_key, pair, path) {
      const keys = [...path.filter((n): n is YAML.Pair => YAML.isPair(n)).map((n) => String((n.key as YAML.Scalar).value)), String((pair.key as YAML.Scalar).value)];
      const text = VALUE_DOCS[keys.join('.')];
      if (text && YAML.isScalar(pair.key)) pair.key.commentBefore = ` -- ${text}`;
    },
  });
  doc.commentBefore = ' Values of the inference-operator chart. values.schema.json checks them; README.md explains them.';
  return doc.toString({ lineWidth: 0 });
}

/** Helm's value merge: maps merge recursively, anything else (lists included) replaces; null deletes. */
export function mergeValues<T>(base: T, override: unknown): T {
  if (override === undefined) return structuredClone(base);
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(base) || !isObj(override)) return structuredClone(override) as T;
  const out: Record<string, unknown> = structuredClone(base);
  for (const [k, v] of Object.entries(override)) {
    if (v === null) delete out[k];
    else out[k] = k in out ? mergeValues(out[k], v) : structuredClone(v);
  }
  return out as T;
}

/**
 * `--set a.b=c` as Helm reads it (the common subset): dotted keys, `true`/`false`/`null`, integers,
 * `{a,b}` lists, everything else a string; `\.` keeps a dot in a key.
 */
export function parseSet(expr: string): Record<string, unknown> {
  const eq = expr.indexOf('=');
  if (eq <= 0) throw usageError('chart-bad-set', `--set "${expr}" is not KEY=VALUE`, { hint: 'for example --set webhook.enabled=false' });
  const path = expr
    .slice(0, eq)
    .split(/(?<!\\)\./)
    .map((k) => k.replace(/\\\./g, '.'));
  const raw = expr.slice(eq + 1);
  const typed = (s: string): unknown => (s === 'true' ? true : s === 'false' ? false : s === 'null' ? null : /^-?(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s);
  const value = /^\{.*\}$/.test(raw) ? (raw === '{}' ? [] : raw.slice(1, -1).split(',').map(typed)) : typed(raw);
  let out: unknown = value;
  for (const k of [...path].reverse()) out = { [k]: out };
  return out as Record<string, unknown>;
}

export interface ReleaseInfo {
  /** The release name (`app.kubernetes.io/instance`). */
  name: string;
  /** The release namespace. */
  namespace: string;
}

export interface ChartIdentity {
  name: string;
  version: string;
  appVersion: string;
}

/** Helm's `helm.sh/chart` label for a chart. */
export const chartLabel = (c: ChartIdentity): string => `${c.name}-${c.version}`.replace(/\+/g, '_').slice(0, 63).replace(/-+$/, '');

/**
 * The model options that `helm template` with these values renders: what the templates must equal.
 * CRDs come from crds/ and are the model's for DEFAULT_NAMESPACE whatever the release namespace.
 */
export function valuesToInstallOptions(values: ChartValues, release: ReleaseInfo, chart: ChartIdentity, permissions?: readonly Declaration[]): InstallOptions {
  return {
    image: `${values.image.repository}@${values.image.digest}`,
    namespace: release.namespace,
    version: chart.appVersion,
    instance: release.name,
    managedBy: 'Helm',
    labels: { 'helm.sh/chart': chartLabel(chart) },
    imagePullPolicy: values.image.pullPolicy,
    imagePullSecrets: values.imagePullSecrets,
    replicas: values.replicas,
    resources: values.resources,
    watchNamespaces: values.watchNamespaces,
    logLevel: values.logLevel,
    leaderElection: { enabled: values.leaderElection.enabled, id: values.leaderElection.id },
    webhook: {
      enabled: values.webhook.enabled,
      failurePolicy: values.webhook.failurePolicy,
      timeoutSeconds: values.webhook.timeoutSeconds,
      ...(values.webhook.caBundle ? { caBundle: values.webhook.caBundle } : {}),
    },
    certManager: { enabled: values.certManager.enabled },
    serviceMonitor: { enabled: values.serviceMonitor.enabled, interval: values.serviceMonitor.interval },
    networkPolicy: { enabled: values.networkPolicy.enabled },
    nodeSelector: values.nodeSelector,
    tolerations: values.tolerations,
    affinity: values.affinity ?? {},
    podAnnotations: values.podAnnotations,
    ...(permissions ? { permissions } : {}),
  };
}

/** Template names defined in templates/_helpers.tpl. */
export const HELPERS = { labels: `${OPERATOR_NAME}.labels`, selectorLabels: `${OPERATOR_NAME}.selectorLabels` } as const;

/** The model's options as chart references: running the model on these yields the templates. */
export function templateOptions(permissions: readonly Declaration[]): ResolvedInstallOptions {
  const v = (path: string) => templateString(path);
  const cond = (expr: string) => new ValueCondition(expr);
  return {
    name: OPERATOR_NAME,
    namespace: v('.Release.Namespace'),
    image: `${v('.Values.image.repository')}@${v('.Values.image.digest')}`,
    imagePullPolicy: v('.Values.image.pullPolicy'),
    imagePullSecrets: blockValue('.Values.imagePullSecrets', true),
    replicas: rawValue('.Values.replicas'),
    resources: blockValue('.Values.resources'),
    watchNamespace: v('join "," .Values.watchNamespaces'),
    logLevel: v('.Values.logLevel'),
    leaderElect: cond('.Values.leaderElection.enabled'),
    leaderElectionId: v('.Values.leaderElection.id'),
    webhook: cond('.Values.webhook.enabled'),
    webhookBindAddress: v('ternary ":9443" "0" .Values.webhook.enabled'),
    certSecretName: `${OPERATOR_NAME}-webhook-cert`,
    mountCertSecret: true,
    caBundle: when(cond('.Values.webhook.caBundle'), v('.Values.webhook.caBundle')),
    failurePolicy: v('.Values.webhook.failurePolicy'),
    timeoutSeconds: rawValue('.Values.webhook.timeoutSeconds'),
    certManager: cond('and .Values.webhook.enabled .Values.certManager.enabled'),
    serviceMonitor: cond('.Values.serviceMonitor.enabled'),
    serviceMonitorInterval: v('.Values.serviceMonitor.interval'),
    networkPolicy: cond('.Values.networkPolicy.enabled'),
    apiServerPorts: [443, 6443],
    apiServerCIDRs: [],
    highAvailability: cond('gt (int .Values.replicas) 1'),
    metricsReaders: [],
    nodeSelector: blockValue('.Values.nodeSelector', true),
    tolerations: blockValue('.Values.tolerations', true),
    affinity: blockValue('.Values.affinity', true),
    labels: { [spliceKey('include', HELPERS.labels)]: '' },
    selectorLabels: { [spliceKey('include', HELPERS.selectorLabels)]: '' },
    podAnnotations: { [spliceKey('toYaml', '.Values.podAnnotations')]: '' },
    permissions,
  };
}
