/**
 * The operator process (`olmpub operator run`, the operator image's entrypoint), kubebuilder's
 * cmd/main.go in TypeScript: flags (with environment fallbacks) → a Manager with the informers, the
 * InferenceService controller, the webhooks (conversion and GPU quota) and the probes → run until
 * SIGTERM (graceful shutdown) or leadership loss (exit 1, from the runtime).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { V1Deployment, V1ResourceClaimTemplate, V1Service } from '@kubernetes/client-node';
import { environmentError, usageError } from '../lib/errors.js';
import { validateInferenceService, type NamespaceState } from './api/admission.js';
import { convertObject } from './api/conversion.js';
import type { InferenceService } from './api/v1.js';
import type { GatewayRef, HTTPRoute } from './controller/desired.js';
import { DEFAULT_STORAGE_INITIALIZER } from './controller/desired.js';
import { OptionalInformer, ServedResources, type GroupVersionResource } from './controller/discovery.js';
import {
  CHILD_SELECTOR,
  CLAIM_TEMPLATE,
  CLAIM_TEMPLATE_GVR,
  DEPLOYMENT,
  HTTP_ROUTE,
  HTTP_ROUTE_GVR,
  ISVC,
  InferenceServiceReconciler,
  SERVICE,
} from './controller/reconciler.js';
import { requires } from './rbac-declarations.js';
import type { Informer } from './runtime/cache/informer.js';
import type { Controller } from './runtime/controller/controller.js';
import { enqueueRequestForOwner, eventPriority, type ObjectEvent } from './runtime/controller/handler.js';
import { KubeClient } from './runtime/kube/client.js';
import { isInCluster, parseWatchNamespaces } from './runtime/kube/config.js';
import type { KubeObject } from './runtime/kube/types.js';
import { Logger, parseLogLevel, type LogLevel } from './runtime/log.js';
import { Manager } from './runtime/manager.js';
import { LOW_PRIORITY } from './runtime/queue/workqueue.js';
import { setupSignalHandler } from './runtime/signals.js';
import { admissionHandler } from './runtime/webhook/admission.js';
import { conversionHandler } from './runtime/webhook/conversion.js';
import { realClock, sleep } from './runtime/clock.js';

export const CONTROLLER_NAME = 'inferenceservice';
export const EVENT_REPORTER = 'inference.olmpub.dev/operator';
export const DEFAULT_LEADER_ELECTION_ID = 'inference-operator.olmpub.dev';
export const CONVERSION_PATH = '/convert';
export const VALIDATION_PATH = '/validate-inference-olmpub-dev-v1-inferenceservice';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' } as const;

/** Permissions of the process around the reconciler (leader election, metrics auth, the quota webhook). */
export const OPERATOR_RBAC = [
  requires({ group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'create', 'update'], scope: 'namespace', reason: 'leader election (a Lease in the operator namespace)' }),
  requires({ group: 'authentication.k8s.io', resource: 'tokenreviews', verbs: ['create'], reason: 'authenticates /metrics scrapers' }),
  requires({ group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verbs: ['create'], reason: 'authorises /metrics scrapers' }),
  requires({ group: '', resource: 'namespaces', verbs: ['get', 'list', 'watch'], reason: 'the GPU quota webhook reads the quota annotation of Namespaces' }),
];

/** Everything `olmpub operator run` takes; `parseOperatorConfig` builds it from flags and environment. */
export interface OperatorConfig {
  /** Default false. */
  leaderElect: boolean;
  /** Default inference-operator.olmpub.dev. */
  leaderElectionID: string;
  /** Default: POD_NAMESPACE, the in-cluster namespace, or the kubeconfig context's. */
  leaderElectionNamespace?: string;
  /** Default 15 s / 10 s / 2 s (controller-runtime). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Default `:8081`; `0` disables. */
  healthProbeBindAddress: string;
  /** Default `:8443` (HTTPS, TokenReview + SubjectAccessReview); `0` disables. */
  metricsBindAddress: string;
  /** Default `:9443`; `0` disables the webhooks. */
  webhookBindAddress: string;
  /** Default `<tmp>/k8s-webhook-server/serving-certs` (tls.crt, tls.key; reloaded when they change). */
  webhookCertDir?: string;
  /** Default 1. */
  maxConcurrentReconciles: number;
  /** Default info. */
  logLevel: LogLevel;
  /** Empty: all namespaces. */
  namespaces: string[];
  /** Default: KUBECONFIG, in-cluster, ~/.kube/config. */
  kubeconfig?: string;
  /** Cache resync period. Default 10 h. */
  syncPeriodMs: number;
  /** Default 30 s. */
  gracefulShutdownTimeoutMs: number;
  /** The Gateway HTTPRoutes attach to (traffic split by weight); none: split by replicas. */
  gateway?: GatewayRef;
  ingressDomain?: string;
  /** Default cluster.local. */
  clusterDomain: string;
  storageInitializer: { image: string; entrypoint: string };
  /** How often the Gateway API and DRA are looked up again. Default 5 min. */
  discoveryRefreshMs: number;
}

/** A Go-style duration: `90s`, `1.5s`, `500ms`, `10h`, `1h30m`. Milliseconds, or undefined. */
export function parseGoDuration(text: string): number | undefined {
  const t = text.trim();
  if (!/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(t)) return undefined;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const m of t.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) total += Number(m[1]) * unit[m[2]!]!;
  return Math.round(total);
}

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

/** Flag name → environment variable read when the flag is absent. */
export const ENV_FALLBACKS: Record<string, string> = {
  'leader-elect': 'LEADER_ELECT',
  'leader-election-id': 'LEADER_ELECTION_ID',
  'leader-election-namespace': 'LEADER_ELECTION_NAMESPACE',
  'leader-elect-lease-duration': 'LEADER_ELECT_LEASE_DURATION',
  'leader-elect-renew-deadline': 'LEADER_ELECT_RENEW_DEADLINE',
  'leader-elect-retry-period': 'LEADER_ELECT_RETRY_PERIOD',
  'health-probe-bind-address': 'HEALTH_PROBE_BIND_ADDRESS',
  'metrics-bind-address': 'METRICS_BIND_ADDRESS',
  'webhook-bind-address': 'WEBHOOK_BIND_ADDRESS',
  'webhook-cert-dir': 'WEBHOOK_CERT_DIR',
  'max-concurrent-reconciles': 'MAX_CONCURRENT_RECONCILES',
  'log-level': 'LOG_LEVEL',
  'watch-namespace': 'WATCH_NAMESPACE',
  kubeconfig: 'KUBECONFIG',
  'sync-period': 'SYNC_PERIOD',
  'graceful-shutdown-timeout': 'GRACEFUL_SHUTDOWN_TIMEOUT',
  gateway: 'GATEWAY',
  'ingress-domain': 'INGRESS_DOMAIN',
  'cluster-domain': 'CLUSTER_DOMAIN',
  'storage-initializer-image': 'STORAGE_INITIALIZER_IMAGE',
};

/**
 * Flags win over environment variables, which win over the defaults. Pure (given `env`); throws a
 * usage error naming the flag and the variable for a bad value.
 */
export function parseOperatorConfig(flags: FlagValues, env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const raw = (flag: string): string | undefined => {
    const v = flags[flag];
    if (typeof v === 'string') return v;
    if (v === true) return 'true';
    const fromEnv = env[ENV_FALLBACKS[flag] ?? ''];
    return fromEnv === undefined ? undefined : fromEnv;
  };
  const where = (flag: string) => (flags[flag] !== undefined ? `--${flag}` : `${ENV_FALLBACKS[flag]}`);
  const bad = (flag: string, value: string, expected: string) =>
    usageError('bad-operator-flag', `${where(flag)}=${JSON.stringify(value)} is not ${expected}`, { hint: 'run "olmpub operator run --help"' });
  const bool = (flag: string, dflt: boolean) => {
    const v = raw(flag);
    if (v === undefined || v === '') return dflt;
    if (/^(true|1|yes)$/i.test(v)) return true;
    if (/^(false|0|no)$/i.test(v)) return false;
    throw bad(flag, v, 'true or false');
  };
  const duration = (flag: string, dflt: number) => {
    const v = raw(flag);
    if (v === undefined || v === '') return dflt;
    const ms = parseGoDuration(v);
    if (ms === undefined || ms <= 0) throw bad(flag, v, 'a positive duration such as 15s, 500ms or 10h');
    return ms;
  };
  const address = (flag: string, dflt: string) => {
    const v = raw(flag);
    if (v === undefined || v === '') return dflt;
    if (v !== '0' && !/^(\[[^\]]+\]|[^:\s]*):\d{1,5}$/.test(v)) throw bad(flag, v, 'host:port, :port or 0');
    return v;
  };
  const str = (flag: string) => {
    const v = raw(flag);
    return v === undefined || v === '' ? undefined : v;
  };
  const intValue = (flag: string, dflt: number) => {
    const v = raw(flag);
    if (v === undefined || v === '') return dflt;
    if (!/^[0-9]+$/.test(v) || Number(v) < 1) throw bad(flag, v, 'a positive integer');
    return Number(v);
  };
  const logLevel = str('log-level');
  if (logLevel !== undefined && !/^(error|warn|warning|info|debug|trace|[0-9]+)$/i.test(logLevel)) throw bad('log-level', logLevel, 'error, warn, info, debug or trace');
  const gatewayText = str('gateway');
  let gateway: GatewayRef | undefined;
  if (gatewayText) {
    const m = /^(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/)?([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(gatewayText);
    if (!m) throw bad('gateway', gatewayText, 'NAMESPACE/NAME or NAME of a Gateway');
    gateway = { name: m[3]!, ...(m[1] ? { namespace: m[1] } : {}) };
  }
  const leaseDurationMs = duration('leader-elect-lease-duration', 15_000);
  const renewDeadlineMs = duration('leader-elect-renew-deadline', 10_000);
  const retryPeriodMs = duration('leader-elect-retry-period', 2_000);
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs))
    throw usageError('bad-operator-flag', 'leader election needs lease duration > renew deadline > retry period', { hint: 'the defaults are 15s, 10s and 2s' });
  const leaderElectionNamespace = str('leader-election-namespace');
  const webhookCertDir = str('webhook-cert-dir');
  const kubeconfig = typeof flags.kubeconfig === 'string' && flags.kubeconfig ? flags.kubeconfig : undefined;
  const ingressDomain = str('ingress-domain');
  const image = str('storage-initializer-image');
  return {
    leaderElect: bool('leader-elect', false),
    leaderElectionID: str('leader-election-id') ?? DEFAULT_LEADER_ELECTION_ID,
    ...(leaderElectionNamespace ? { leaderElectionNamespace } : {}),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    healthProbeBindAddress: address('health-probe-bind-address', ':8081'),
    metricsBindAddress: address('metrics-bind-address', ':8443'),
    webhookBindAddress: address('webhook-bind-address', ':9443'),
    ...(webhookCertDir ? { webhookCertDir } : {}),
    maxConcurrentReconciles: intValue('max-concurrent-reconciles', 1),
    logLevel: parseLogLevel(logLevel),
    namespaces: parseWatchNamespaces(raw('watch-namespace')),
    // KUBECONFIG itself is read by the client (a list, merged); only an explicit flag is a path here.
    ...(kubeconfig ? { kubeconfig } : {}),
    syncPeriodMs: duration('sync-period', 10 * 3_600_000),
    gracefulShutdownTimeoutMs: duration('graceful-shutdown-timeout', 30_000),
    ...(gateway ? { gateway } : {}),
    ...(ingressDomain ? { ingressDomain } : {}),
    clusterDomain: str('cluster-domain') ?? 'cluster.local',
    storageInitializer: image ? { ...DEFAULT_STORAGE_INITIALIZER, image } : { ...DEFAULT_STORAGE_INITIALIZER },
    discoveryRefreshMs: 5 * 60_000,
  };
}

export interface Operator {
  manager: Manager;
  controller: Controller;
  reconciler: InferenceServiceReconciler;
  isvcs: Informer<InferenceService>;
  /** Runs until `signal` aborts (graceful shutdown); rejects on a fatal error. */
  start(signal: AbortSignal): Promise<void>;
}

export interface OperatorDeps {
  /** Default: a client from config.kubeconfig / KUBECONFIG / in-cluster. */
  client?: KubeClient;
  logger?: Logger;
  /** Default: log and exit 1 (controller-runtime). */
  onLeadershipLost?: () => void;
}

/** Drops managedFields (the largest part of most objects) before caching. */
function slim<T extends KubeObject>(obj: T): T {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  void _dropped;
  return { ...obj, metadata };
}

/** Builds the manager, the controller and the webhooks; nothing runs until `start`. */
export async function createOperator(config: OperatorConfig, deps: OperatorDeps = {}): Promise<Operator> {
  const logger = deps.logger ?? new Logger({ level: config.logLevel });
  const webhooks = config.webhookBindAddress !== '0';
  const manager = new Manager({
    ...(deps.client ? { client: deps.client } : { kubeconfig: config.kubeconfig ? { kubeconfig: config.kubeconfig } : {} }),
    namespaces: config.namespaces,
    syncPeriodMs: config.syncPeriodMs,
    leaderElection: config.leaderElect,
    leaderElectionID: config.leaderElectionID,
    ...(config.leaderElectionNamespace ? { leaderElectionNamespace: config.leaderElectionNamespace } : {}),
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.renewDeadlineMs,
    retryPeriodMs: config.retryPeriodMs,
    healthProbeBindAddress: config.healthProbeBindAddress,
    metricsBindAddress: config.metricsBindAddress,
    webhook: { bindAddress: webhooks ? config.webhookBindAddress : '127.0.0.1:0', ...(config.webhookCertDir ? { certDir: config.webhookCertDir } : {}) },
    gracefulShutdownTimeoutMs: config.gracefulShutdownTimeoutMs,
    ...(deps.onLeadershipLost ? { onLeadershipLost: deps.onLeadershipLost } : {}),
    logger,
  });
  const client = manager.client;
  const isvcs = manager.informerFor<InferenceService>(ISVC, { transform: slim });
  const deployments = manager.informerFor<V1Deployment & KubeObject>(DEPLOYMENT, { labelSelector: CHILD_SELECTOR, transform: slim });
  const services = manager.informerFor<V1Service & KubeObject>(SERVICE, { labelSelector: CHILD_SELECTOR, transform: slim });
  const discovery = new ServedResources(client, { refreshMs: config.discoveryRefreshMs });
  const toOwner = enqueueRequestForOwner<KubeObject>(ISVC);

  // Filled in below; the optional informers' event handlers need the controller.
  let controller!: Controller;
  const optional = async <T extends KubeObject>(gvr: GroupVersionResource, type: { apiVersion: string; kind: string }): Promise<OptionalInformer<T>> => {
    const make = () => {
      const inf = manager.informerFor<T>(type, { labelSelector: CHILD_SELECTOR, transform: slim });
      inf.addEventHandler({
        onAdd: (obj, initial) => enqueue({ type: 'create', obj, isInInitialList: initial }),
        onUpdate: (oldObj, obj) => enqueue({ type: 'update', oldObj, obj }),
        onDelete: (obj) => enqueue({ type: 'delete', obj }),
      });
      logger.child('discovery').info('watching an optional kind', { kind: type.kind, apiVersion: type.apiVersion });
      return inf;
    };
    // The informer may appear after the controller started (too late for Controller.watch): enqueue as it would.
    const enqueue = (event: ObjectEvent<T>) => {
      const priority = eventPriority(event, LOW_PRIORITY);
      for (const req of toOwner(event as ObjectEvent<KubeObject>)) controller.enqueue(req, { priority });
    };
    // A failed lookup answers false and is asked again on the first reconcile.
    return (await discovery.served(gvr)) ? OptionalInformer.of(discovery, gvr, make()) : new OptionalInformer<T>(discovery, gvr, make);
  };
  const httpRoutes = await optional<HTTPRoute & KubeObject>(HTTP_ROUTE_GVR, HTTP_ROUTE);
  const claimTemplates = await optional<V1ResourceClaimTemplate & KubeObject>(CLAIM_TEMPLATE_GVR, CLAIM_TEMPLATE);

  const reconciler = new InferenceServiceReconciler({
    client,
    isvcs,
    deployments,
    services,
    httpRoutes,
    claimTemplates,
    events: manager.eventRecorder(EVENT_REPORTER),
    ...(config.gateway ? { gateway: config.gateway } : {}),
    ...(config.ingressDomain ? { ingressDomain: config.ingressDomain } : {}),
    clusterDomain: config.clusterDomain,
    storageInitializer: config.storageInitializer,
  });
  controller = manager
    .newController(CONTROLLER_NAME, reconciler, { maxConcurrentReconciles: config.maxConcurrentReconciles })
    .watch(isvcs)
    .watch(deployments, enqueueRequestForOwner(ISVC))
    .watch(services, enqueueRequestForOwner(ISVC));

  // The Gateway API or DRA installed (or removed) later is noticed without a restart: discovery is
  // asked again every discoveryRefreshMs and every InferenceService is reconciled when an answer changes.
  manager.add({
    needLeaderElection: true,
    start: async (signal) => {
      const optionals: OptionalInformer<KubeObject>[] = [httpRoutes as unknown as OptionalInformer<KubeObject>, claimTemplates as unknown as OptionalInformer<KubeObject>];
      const known = optionals.map((o) => o.current !== undefined);
      while (await sleep(realClock, config.discoveryRefreshMs, signal)) {
        const served = await Promise.all(optionals.map((o) => o.served(signal)));
        let changed = false;
        for (const [i, o] of optionals.entries()) {
          if (served[i] === known[i]) continue;
          changed = true;
          known[i] = served[i]!;
          logger.child('discovery').info('an optional API changed', { resource: `${o.gvr.resource}.${o.gvr.group}`, served: served[i] });
          await o.get(signal).catch((err: Error) => logger.child('discovery').warn('cannot watch it yet', { err }));
        }
        if (changed) for (const isvc of isvcs.list()) controller.enqueue({ namespace: isvc.metadata?.namespace ?? '', name: isvc.metadata?.name ?? '' });
      }
    },
  });

  if (webhooks) {
    const namespaces = manager.informerFor<KubeObject>(NAMESPACE, {
      namespaces: [],
      transform: (ns) => ({ apiVersion: ns.apiVersion, kind: ns.kind, metadata: { name: ns.metadata?.name, annotations: ns.metadata?.annotations, resourceVersion: ns.metadata?.resourceVersion } }),
    });
    const watched = (ns: string) => config.namespaces.length === 0 || config.namespaces.includes(ns);
    const namespaceState = async (ns: string): Promise<NamespaceState> => {
      const cachedNs = namespaces.hasSynced() ? namespaces.get(ns) : undefined;
      const annotations = cachedNs ? cachedNs.metadata?.annotations : (await client.tryGet(NAMESPACE, ns))?.metadata?.annotations;
      // Namespaces the operator does not watch are not cached: ask the apiserver.
      const inferenceServices = watched(ns) && isvcs.hasSynced() ? isvcs.list(ns) : (await client.listAll<InferenceService>(ISVC, { namespace: ns })).items;
      return { annotations, inferenceServices };
    };
    manager.webhookServer.register(CONVERSION_PATH, conversionHandler((obj, desired) => convertObject(obj, desired) as KubeObject));
    manager.webhookServer.register(
      VALIDATION_PATH,
      admissionHandler<unknown>(async (request) => validateInferenceService(request, await namespaceState(request.namespace ?? ''))),
    );
  }

  return { manager, controller, reconciler, isvcs, start: (signal) => manager.start(signal) };
}

/**
 * Runs the operator until SIGTERM/SIGINT; returns the exit code (0 after a graceful shutdown, 1 when
 * the manager failed). Leadership loss exits the process with 1 from inside the runtime.
 */
export async function runOperator(config: OperatorConfig, options: { logger?: Logger; signal?: AbortSignal } = {}): Promise<number> {
  const logger = options.logger ?? new Logger({ level: config.logLevel });
  const log = logger.child('setup');
  // client-node would fall back to http://localhost:8080; controller-runtime refuses to start instead.
  if (!config.kubeconfig && !process.env.KUBECONFIG && !isInCluster() && !existsSync(join(homedir(), '.kube', 'config')))
    throw environmentError('no-cluster-config', 'no cluster configuration: no --kubeconfig, no KUBECONFIG, no in-cluster ServiceAccount and no ~/.kube/config', {
      hint: 'set KUBECONFIG or --kubeconfig, or run in a Pod with a ServiceAccount',
    });
  const signal = options.signal ?? setupSignalHandler({ logger: log });
  let operator: Operator;
  try {
    operator = await createOperator(config, { logger });
  } catch (err) {
    throw environmentError('operator-setup', `cannot start the operator: ${(err as Error).message}`, { hint: 'set KUBECONFIG or --kubeconfig, or run in a Pod with a ServiceAccount' });
  }
  log.info('starting the operator', {
    leaderElect: config.leaderElect,
    leaderElectionID: config.leaderElect ? config.leaderElectionID : undefined,
    namespaces: config.namespaces.length ? config.namespaces : 'all',
    webhooks: config.webhookBindAddress !== '0' ? [CONVERSION_PATH, VALIDATION_PATH] : [],
    identity: operator.manager.identity,
  });
  try {
    await operator.start(signal);
  } catch (err) {
    log.error('problem running the operator', { err: err as Error });
    return 1;
  }
  log.info('the operator stopped');
  return 0;
}
