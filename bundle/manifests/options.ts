/**
 * The options of the operator's install manifests, each documented with its default (cdk8s style), and
 * their resolution into the values the model reads. Pure.
 */
import type { V1Affinity, V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
// The operator's entry point: its constants, and (imported for its side effect) the permissions its
// modules declare with requires(), which declaredPermissions() then returns.
import { CONVERSION_PATH, DEFAULT_LEADER_ELECTION_ID, VALIDATION_PATH } from '../../operator/main.js';
import { declaredPermissions, type Declaration } from '../../operator/rbac-declarations.js';
import { validationError, type OlmpubError } from '../../lib/errors.js';
import { and, type Flag } from './knobs.js';

/** The operator's package, chart and object name prefix. */
export const OPERATOR_NAME = 'inference-operator';
/** Where the operator is installed unless told otherwise (the chart's CRD conversion webhook points here). */
export const DEFAULT_NAMESPACE = 'inference-operator-system';

/** Ports and paths of the operator process; the runtime (operator/runtime) serves these. */
export const PORTS = {
  /** HTTPS metrics, authenticated with TokenReview and authorised with SubjectAccessReview. */
  metrics: 8443,
  /** HTTPS admission and conversion webhooks. */
  webhook: 9443,
  /** Plain HTTP `/healthz` and `/readyz`. */
  health: 8081,
} as const;

export const PATHS = {
  healthz: '/healthz',
  readyz: '/readyz',
  metrics: '/metrics',
  /** The validating webhook of InferenceService (controller-runtime's path convention). */
  validateInferenceService: VALIDATION_PATH,
  /** The CRD conversion webhook. */
  convert: CONVERSION_PATH,
} as const;

/** Where the webhook server reads `tls.crt` and `tls.key` (controller-runtime's default; OLM v1 mounts its certificate here too). */
export const WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** The container's name in the operator's Deployment. */
export const CONTAINER_NAME = 'manager';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** A subject allowed to read `/metrics` (bound to the metrics-reader ClusterRole). */
export interface MetricsReader {
  kind: 'ServiceAccount' | 'User' | 'Group';
  name: string;
  /** For a ServiceAccount. */
  namespace?: string;
}

export interface InstallOptions {
  /**
   * The operator's image, pinned by digest: `REPOSITORY@sha256:<64 hex>`. Required; a tag alone is refused
   * so that what was tested is what runs.
   */
  image: string;
  /** Namespace of the namespaced objects. @default 'inference-operator-system' */
  namespace?: string;
  /** The operator's version: the `app.kubernetes.io/version` label. @default '0.0.0' */
  version?: string;
  /** `app.kubernetes.io/instance`: the Helm release name, for example. @default 'inference-operator' */
  instance?: string;
  /** `app.kubernetes.io/managed-by`. @default 'olmpub' */
  managedBy?: string;
  /** Extra labels on every object (not on selectors). @default {} */
  labels?: Record<string, string>;
  /** @default 'IfNotPresent' */
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Secrets to pull the image with. @default [] */
  imagePullSecrets?: { name: string }[];
  /** Operator replicas; one leads, the others wait (leader election). @default 2 */
  replicas?: number;
  /** Requests and limits of the operator container. @default requests cpu 100m, memory 256Mi; limits cpu 1, memory 512Mi */
  resources?: V1ResourceRequirements;
  /** Namespaces whose InferenceServices the operator reconciles (WATCH_NAMESPACE). @default [] (all namespaces) */
  watchNamespaces?: string[];
  /**
   * Take WATCH_NAMESPACE from OLM's `olm.targetNamespaces` pod annotation instead of `watchNamespaces`
   * (the registry+v1 bundle sets this). @default false
   */
  watchNamespacesFromOLM?: boolean;
  /** @default 'info' */
  logLevel?: LogLevel;
  leaderElection?: {
    /** @default true */
    enabled?: boolean;
    /** The Lease's name. @default 'inference-operator.olmpub.dev' (the operator's default) */
    id?: string;
  };
  webhook?: {
    /** Serve the validating webhook (GPU quota) and the CRD conversion webhook. @default true */
    enabled?: boolean;
    /** The Secret with `tls.crt`/`tls.key` the webhook server uses. @default '<name>-webhook-cert' */
    certSecretName?: string;
    /**
     * Mount `certSecretName` at the webhook certificate directory. The registry+v1 bundle turns this off:
     * OLM mounts the certificate it provisions there itself. @default true
     */
    mountCertSecret?: boolean;
    /** Base64 PEM CA bundle for the webhook configurations when cert-manager does not inject one. @default none */
    caBundle?: string;
    /** @default 'Fail' */
    failurePolicy?: 'Fail' | 'Ignore';
    /** @default 10 */
    timeoutSeconds?: number;
  };
  certManager?: {
    /** A self-signed cert-manager Issuer and a Certificate for the webhook Service, with CA injection. @default true */
    enabled?: boolean;
  };
  serviceMonitor?: {
    /** A prometheus-operator ServiceMonitor for the metrics Service. @default false */
    enabled?: boolean;
    /** @default '30s' */
    interval?: string;
  };
  networkPolicy?: {
    /** Ingress only to the metrics and webhook ports, egress only to the API server. @default true */
    enabled?: boolean;
    /** Ports the API server answers on (443 for the Service, 6443 for the endpoints behind it). @default [443, 6443] */
    apiServerPorts?: number[];
    /** Restrict egress to these CIDRs of the API server. @default [] (any address, on apiServerPorts only) */
    apiServerCIDRs?: string[];
  };
  /** Subjects allowed to read `/metrics` (Prometheus' ServiceAccount). @default [] (the ClusterRole is unbound) */
  metricsReaders?: MetricsReader[];
  /** @default {} */
  nodeSelector?: Record<string, string>;
  /** @default [] */
  tolerations?: V1Toleration[];
  /** @default preferred pod anti-affinity on kubernetes.io/hostname, so replicas spread over nodes */
  affinity?: V1Affinity;
  /** Extra annotations on the operator's pods. @default {} */
  podAnnotations?: Record<string, string>;
  /**
   * The permissions the operator's code declares (operator/rbac-declarations.ts). The manager
   * ClusterRole (and Role, for namespace-scoped declarations) grants exactly these, minus what the
   * leader-election and metrics-auth roles already grant. @default declaredPermissions() at call time
   */
  permissions?: readonly Declaration[];
}

/** The pod anti-affinity that spreads replicas over nodes (preferred, so a one-node cluster still works). */
export function defaultAffinity(): V1Affinity {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/component': 'controller-manager' } },
          },
        },
      ],
    },
  };
}

export const defaultResources = (): V1ResourceRequirements => ({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } });

/**
 * What the model reads. Every field is either concrete (installManifests) or a chart reference
 * (bundle/chart); see knobs.ts. Derived values (the joined namespaces, the flags) live here too.
 */
export interface ResolvedInstallOptions {
  name: string;
  namespace: string;
  image: string;
  imagePullPolicy: string;
  imagePullSecrets: { name: string }[];
  replicas: number;
  resources: V1ResourceRequirements;
  /** WATCH_NAMESPACE's value, or undefined to take it from OLM's annotation. */
  watchNamespace: string | undefined;
  logLevel: string;
  leaderElect: Flag;
  leaderElectionId: string;
  webhook: Flag;
  /** `--webhook-bind-address`: `:9443`, or `0` (the operator serves no webhooks). */
  webhookBindAddress: string;
  certSecretName: string;
  mountCertSecret: Flag;
  caBundle: string | undefined;
  failurePolicy: string;
  timeoutSeconds: number;
  /** Webhooks on and cert-manager on. */
  certManager: Flag;
  serviceMonitor: Flag;
  serviceMonitorInterval: string;
  networkPolicy: Flag;
  apiServerPorts: number[];
  apiServerCIDRs: string[];
  /** More than one replica: the PodDisruptionBudget exists. */
  highAvailability: Flag;
  metricsReaders: MetricsReader[];
  nodeSelector: Record<string, string>;
  tolerations: V1Toleration[];
  affinity: V1Affinity | undefined;
  /** Labels on every object (selector labels included). */
  labels: Record<string, string>;
  /** The labels selectors use. */
  selectorLabels: Record<string, string>;
  podAnnotations: Record<string, string>;
  permissions: readonly Declaration[];
}

const DIGEST_REF = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:[:.][a-z0-9-]+)*(?::\d+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*@sha256:[a-f0-9]{64}$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Splits `REPOSITORY@sha256:...` into its parts (the chart's values hold them apart). */
export function splitImage(image: string): { repository: string; digest: string } {
  const at = image.indexOf('@');
  return { repository: image.slice(0, at), digest: image.slice(at + 1) };
}

/** Checks the options a user can get wrong; all problems at once. */
export function checkInstallOptions(options: InstallOptions): OlmpubError[] {
  const errors: OlmpubError[] = [];
  const bad = (code: string, place: string, message: string, hint: string) => errors.push(validationError(code, message, { place, hint }));
  if (typeof options.image !== 'string' || !DIGEST_REF.test(options.image.replace(/^([^/]+)/, (h) => h.toLowerCase()))) {
    bad('manifests-image-not-pinned', 'image', `the operator image "${options.image}" is not pinned by digest`, 'pass REPOSITORY@sha256:<64 hex digits>, for example ghcr.io/acme/inference-operator@sha256:…');
  }
  if (options.namespace !== undefined && (!DNS_LABEL.test(options.namespace) || options.namespace.length > 63)) {
    bad('manifests-bad-namespace', 'namespace', `namespace "${options.namespace}" is not a DNS-1123 label`, 'use lowercase letters, digits and "-", at most 63 characters');
  }
  if (options.replicas !== undefined && (!Number.isInteger(options.replicas) || options.replicas < 1)) {
    bad('manifests-bad-replicas', 'replicas', `replicas must be a positive integer, got ${options.replicas}`, 'use 2 or more for high availability');
  }
  if (options.logLevel !== undefined && !LOG_LEVELS.includes(options.logLevel)) {
    bad('manifests-bad-log-level', 'logLevel', `unknown log level "${options.logLevel}"`, `use one of ${LOG_LEVELS.join(', ')}`);
  }
  for (const [i, ns] of (options.watchNamespaces ?? []).entries()) {
    if (!DNS_LABEL.test(ns)) bad('manifests-bad-namespace', `watchNamespaces[${i}]`, `"${ns}" is not a namespace name`, 'list namespace names, or none to watch all namespaces');
  }
  const t = options.webhook?.timeoutSeconds;
  if (t !== undefined && (!Number.isInteger(t) || t < 1 || t > 30)) bad('manifests-bad-timeout', 'webhook.timeoutSeconds', `webhook timeout ${t} is outside 1–30 seconds`, 'the API server allows 1 to 30 seconds');
  return errors;
}

/** Applies the defaults; throws one OlmpubError listing every problem. */
export function resolveInstallOptions(options: InstallOptions): ResolvedInstallOptions {
  const errors = checkInstallOptions(options);
  if (errors.length) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw validationError('manifests-bad-options', `invalid install options: ${errors[0]!.message}${more}`, { children: errors });
  }
  const name = OPERATOR_NAME;
  const instance = options.instance ?? name;
  const selectorLabels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': instance };
  const webhook = options.webhook?.enabled ?? true;
  const replicas = options.replicas ?? 2;
  return {
    name,
    namespace: options.namespace ?? DEFAULT_NAMESPACE,
    image: options.image,
    imagePullPolicy: options.imagePullPolicy ?? 'IfNotPresent',
    imagePullSecrets: (options.imagePullSecrets ?? []).map((s) => ({ name: s.name })),
    replicas,
    resources: structuredClone(options.resources ?? defaultResources()),
    watchNamespace: options.watchNamespacesFromOLM ? undefined : (options.watchNamespaces ?? []).join(','),
    logLevel: options.logLevel ?? 'info',
    leaderElect: options.leaderElection?.enabled ?? true,
    leaderElectionId: options.leaderElection?.id ?? DEFAULT_LEADER_ELECTION_ID,
    webhook,
    webhookBindAddress: webhook ? `:${PORTS.webhook}` : '0',
    certSecretName: options.webhook?.certSecretName ?? `${name}-webhook-cert`,
    mountCertSecret: options.webhook?.mountCertSecret ?? true,
    caBundle: options.webhook?.caBundle || undefined,
    failurePolicy: options.webhook?.failurePolicy ?? 'Fail',
    timeoutSeconds: options.webhook?.timeoutSeconds ?? 10,
    certManager: and(webhook, options.certManager?.enabled ?? true),
    serviceMonitor: options.serviceMonitor?.enabled ?? false,
    serviceMonitorInterval: options.serviceMonitor?.interval ?? '30s',
    networkPolicy: options.networkPolicy?.enabled ?? true,
    apiServerPorts: [...(options.networkPolicy?.apiServerPorts ?? [443, 6443])],
    apiServerCIDRs: [...(options.networkPolicy?.apiServerCIDRs ?? [])],
    highAvailability: replicas > 1,
    metricsReaders: (options.metricsReaders ?? []).map((r) => ({ ...r })),
    nodeSelector: { ...(options.nodeSelector ?? {}) },
    tolerations: structuredClone(options.tolerations ?? []),
    affinity: options.affinity === undefined ? defaultAffinity() : Object.keys(options.affinity).length ? structuredClone(options.affinity) : undefined,
    labels: {
      ...(options.labels ?? {}),
      ...selectorLabels,
      'app.kubernetes.io/version': options.version ?? '0.0.0',
      'app.kubernetes.io/part-of': 'olmpub',
      'app.kubernetes.io/managed-by': options.managedBy ?? 'olmpub',
    },
    selectorLabels,
    podAnnotations: { ...(options.podAnnotations ?? {}) },
    permissions: options.permissions ?? declaredPermissions(),
  };
}
