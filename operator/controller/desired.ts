/**
 * The desired state of an InferenceService's children, as a pure function of the object and what
 * the controller observed: stable and canary Deployments, the Service (and per-track Services), an
 * HTTPRoute when the Gateway API is available, a ResourceClaimTemplate for DRA devices, the model
 * volume or download init container, probes, owner references, labels, and scale to zero.
 *
 * Same input, same output (deep-equal, same key order), so the reconciler can compare and skip
 * writes; every object carries `inference.olmpub.dev/desired-hash` for that purpose.
 */
import { createHash } from 'node:crypto';
import type {
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1PodSpec,
  V1Probe,
  V1ResourceClaimTemplate,
  V1Service,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { canonicalJSON } from '../../lib/canonical.js';
import { parseDuration } from '../api/duration.js';
import {
  ACTIVATE_ANNOTATION,
  API_VERSION_V1,
  APP_NAME,
  GROUP,
  KIND,
  LABEL_COMPONENT,
  LABEL_INSTANCE,
  LABEL_ISVC,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_PART_OF,
  LABEL_TRACK,
  MANAGED_BY,
  rfc3339,
  type OwnerReference,
} from '../api/meta.js';
import { gpusPerReplica } from '../api/quota.js';
import { clampReplicas, splitReplicas, type TrafficMode } from '../api/scaling.js';
import { canaryVersion, mergeEnv, withDefaults, type DefaultedInferenceService, type DefaultedSpec, type InferenceService } from '../api/v1.js';

export type Track = 'stable' | 'canary';

/** Where the model server finds the model, in every runtime container. */
export const MODEL_DIR = '/mnt/models';
/** Where the download init container sees the model volume (emptyDir or cache PVC). */
export const MODEL_STORE_DIR = '/mnt/model-store';
/** Port of the Services (and the HTTPRoute backends); traffic goes to the container port named `http`. */
export const SERVICE_PORT = 80;
export const DESIRED_HASH_ANNOTATION = `${GROUP}/desired-hash`;

/**
 * The image that downloads `model.storageUri` (s3, gs, hf, http(s)) into a directory: KServe's
 * storage initializer, invoked as `ENTRYPOINT URI DEST`. The operator's flags may replace both.
 */
export const DEFAULT_STORAGE_INITIALIZER = {
  image: 'docker.io/kserve/storage-initializer:v0.15.2',
  entrypoint: '/storage-initializer/scripts/initializer-entrypoint',
};

/**
 * The init container's script. It is given the URI and the destination as positional arguments
 * (never interpolated into the script). It downloads into a temporary sibling and renames it into
 * place with a completion marker (rename(2) refuses a non-empty target), so a cache PVC never
 * holds a half-written model and replicas sharing a cache keep the first complete copy.
 */
export const DOWNLOAD_SCRIPT = [
  'set -eu',
  'entrypoint="$1"; uri="$2"; dest="$3"',
  'if [ -e "$dest/.olmpub-complete" ]; then echo "model already present in $dest"; exit 0; fi',
  'tmp="$dest.partial.$(hostname)"',
  'rm -rf "$tmp"; mkdir -p "$tmp"',
  '"$entrypoint" "$uri" "$tmp"',
  'touch "$tmp/.olmpub-complete"',
  'mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp"',
  '[ -e "$dest/.olmpub-complete" ] || { echo "could not move the model into $dest" >&2; exit 1; }',
].join('\n');

export interface GatewayRef {
  name: string;
  namespace?: string;
  sectionName?: string;
}

export interface DesiredContext {
  /** The clock, for scale to zero. */
  now: Date;
  /** Whether gateway.networking.k8s.io/v1 HTTPRoute is served by the cluster. */
  gatewayAPI: boolean;
  /** The Gateway routes attach to. Traffic goes through an HTTPRoute only when gatewayAPI and this are set. */
  gateway?: GatewayRef;
  /** With a gateway: routes get the hostname `NAME.NAMESPACE.DOMAIN` and the URL uses it. */
  ingressDomain?: string;
  /** Default `cluster.local`. */
  clusterDomain?: string;
  /** The last request the controller knows of (a traffic metric), if any. */
  lastRequestTime?: Date | string;
  /** Ready canary pods observed; the HTTPRoute gives the canary weight only once it has some. */
  canaryReadyReplicas?: number;
  /** Default DEFAULT_STORAGE_INITIALIZER. */
  storageInitializer?: { image: string; entrypoint: string };
}

export interface HTTPRoute {
  apiVersion: 'gateway.networking.k8s.io/v1';
  kind: 'HTTPRoute';
  metadata: ChildMeta;
  spec: {
    parentRefs: { group: string; kind: string; name: string; namespace?: string; sectionName?: string }[];
    hostnames?: string[];
    rules: {
      matches: { path: { type: 'PathPrefix'; value: string } }[];
      backendRefs: { group: string; kind: 'Service'; name: string; port: number; weight: number }[];
    }[];
  };
}

export interface ChildMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences: OwnerReference[];
}

export interface ChildRef {
  apiVersion: string;
  kind: string;
  name: string;
}

export type ChildObject = V1Deployment | V1Service | V1ResourceClaimTemplate | HTTPRoute;

export interface ScaledToZero {
  reason: 'IdleTimeout' | 'ReplicasZero';
  since: string;
  lastActivityTime?: string;
}

export interface DesiredState {
  stable: V1Deployment;
  canary?: V1Deployment;
  /** `NAME`: selects the pods of both tracks (in replica-split mode this is what splits traffic). */
  service: V1Service;
  /** With a gateway: `NAME-stable` and `NAME-canary`, the HTTPRoute's backends. */
  trackServices: V1Service[];
  httpRoute?: HTTPRoute;
  resourceClaimTemplate?: V1ResourceClaimTemplate;
  /** Everything above, in apply order (claim template, Deployments, Services, route). */
  objects: ChildObject[];
  /** Children this InferenceService may have had that must not exist now (delete if found). */
  absent: ChildRef[];
  trafficMode: TrafficMode;
  replicas: { total: number; stable: number; canary: number };
  /** With a canary: its share now (gateway: route weight; replicas: share of planned pods). */
  canaryTrafficPercent?: number;
  scaledToZero?: ScaledToZero;
  /** Reconcile again after this many seconds (the idle deadline), if set. */
  requeueAfterSeconds?: number;
  url: string;
  /** Label selector of all pods, for status.selector (scale subresource). */
  selector: string;
}

/** Child object names. */
export const childNames = (name: string) => ({
  stable: name,
  canary: `${name}-canary`,
  service: name,
  stableService: `${name}-stable`,
  canaryService: `${name}-canary`,
  route: name,
  claimTemplate: `${name}-devices`,
});

/** Labels on every child; `track` only on Deployments, their pods and per-track Services. */
export function childLabels(name: string, track?: Track): Record<string, string> {
  return {
    [LABEL_NAME]: APP_NAME,
    [LABEL_INSTANCE]: name,
    [LABEL_COMPONENT]: 'predictor',
    [LABEL_PART_OF]: 'olmpub',
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_ISVC]: name,
    ...(track ? { [LABEL_TRACK]: track } : {}),
  };
}

export function selectorLabels(name: string, track?: Track): Record<string, string> {
  return { [LABEL_ISVC]: name, ...(track ? { [LABEL_TRACK]: track } : {}) };
}

export function ownerReference(isvc: InferenceService): OwnerReference {
  return { apiVersion: API_VERSION_V1, kind: KIND, name: isvc.metadata?.name ?? '', uid: isvc.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** The desired children of an InferenceService. Pure. */
export function desiredState(input: InferenceService, ctx: DesiredContext): DesiredState {
  const isvc = withDefaults(input);
  const spec = isvc.spec;
  const name = isvc.metadata?.name ?? '';
  const namespace = isvc.metadata?.namespace ?? '';
  const names = childNames(name);
  const owner = ownerReference(isvc);
  const meta = (objName: string, track?: Track): ChildMeta => ({ name: objName, namespace, labels: childLabels(name, track), ownerReferences: [{ ...owner }] });

  const trafficMode: TrafficMode = ctx.gatewayAPI && ctx.gateway ? 'gateway' : 'replicas';
  const scale = scaleState(isvc, ctx);
  const split = splitReplicas(scale.total, spec.canary?.trafficPercent, trafficMode);

  const devices = spec.devices?.length ? spec.devices : undefined;
  const resourceClaimTemplate: V1ResourceClaimTemplate | undefined = devices && {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: meta(names.claimTemplate),
    spec: {
      metadata: { labels: childLabels(name) },
      spec: {
        devices: {
          requests: devices.map((d) => ({
            name: d.name,
            exactly: {
              deviceClassName: d.deviceClassName,
              allocationMode: 'ExactCount',
              count: d.count,
              ...(d.selectors?.length ? { selectors: d.selectors.map((sel) => ({ cel: { expression: sel.cel.expression } })) } : {}),
            },
          })),
        },
      },
    },
  };

  const stable = deployment(isvc, 'stable', split.stable, meta(names.stable, 'stable'), ctx, devices ? names.claimTemplate : undefined);
  const canary = spec.canary ? deployment(isvc, 'canary', split.canary, meta(names.canary, 'canary'), ctx, devices ? names.claimTemplate : undefined) : undefined;

  const service = serviceFor(meta(names.service), selectorLabels(name));
  const trackServices =
    trafficMode === 'gateway'
      ? [serviceFor(meta(names.stableService, 'stable'), selectorLabels(name, 'stable')), ...(canary ? [serviceFor(meta(names.canaryService, 'canary'), selectorLabels(name, 'canary'))] : [])]
      : [];

  let canaryTrafficPercent: number | undefined;
  let httpRoute: HTTPRoute | undefined;
  if (trafficMode === 'gateway') {
    const canaryWeight = spec.canary && (ctx.canaryReadyReplicas ?? 0) > 0 ? spec.canary.trafficPercent : 0;
    if (spec.canary) canaryTrafficPercent = canaryWeight;
    const backend = (svc: string, weight: number) => ({ group: '', kind: 'Service' as const, name: svc, port: SERVICE_PORT, weight });
    const gw = ctx.gateway!;
    httpRoute = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: meta(names.route),
      spec: {
        parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gw.name, ...(gw.namespace ? { namespace: gw.namespace } : {}), ...(gw.sectionName ? { sectionName: gw.sectionName } : {}) }],
        ...(ctx.ingressDomain ? { hostnames: [`${name}.${namespace}.${ctx.ingressDomain}`] } : {}),
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: spec.canary
              ? [backend(names.stableService, 100 - canaryWeight), backend(names.canaryService, canaryWeight)]
              : [backend(names.stableService, 1)],
          },
        ],
      },
    };
  } else if (spec.canary) {
    const pods = split.stable + split.canary;
    canaryTrafficPercent = pods > 0 ? Math.round((100 * split.canary) / pods) : 0;
  }

  const objects: ChildObject[] = [
    ...(resourceClaimTemplate ? [resourceClaimTemplate] : []),
    stable,
    ...(canary ? [canary] : []),
    service,
    ...trackServices,
    ...(httpRoute ? [httpRoute] : []),
  ].map(withHash);

  const absent: ChildRef[] = [];
  if (!canary) absent.push({ apiVersion: 'apps/v1', kind: 'Deployment', name: names.canary });
  if (trafficMode !== 'gateway') absent.push({ apiVersion: 'v1', kind: 'Service', name: names.stableService });
  if (trafficMode !== 'gateway' || !canary) absent.push({ apiVersion: 'v1', kind: 'Service', name: names.canaryService });
  if (ctx.gatewayAPI && !httpRoute) absent.push({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', name: names.route });
  if (!resourceClaimTemplate) absent.push({ apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaimTemplate', name: names.claimTemplate });

  const byKind = (kind: string, n: string) => objects.find((o) => o.kind === kind && o.metadata?.name === n);
  const url =
    trafficMode === 'gateway' && ctx.ingressDomain
      ? `http://${name}.${namespace}.${ctx.ingressDomain}`
      : `http://${names.service}.${namespace}.svc.${ctx.clusterDomain ?? 'cluster.local'}`;
  return {
    stable: byKind('Deployment', names.stable) as V1Deployment,
    ...(canary ? { canary: byKind('Deployment', names.canary) as V1Deployment } : {}),
    service: byKind('Service', names.service) as V1Service,
    trackServices: trackServices.map((s) => byKind('Service', s.metadata!.name!) as V1Service),
    ...(httpRoute ? { httpRoute: byKind('HTTPRoute', names.route) as HTTPRoute } : {}),
    ...(resourceClaimTemplate ? { resourceClaimTemplate: byKind('ResourceClaimTemplate', names.claimTemplate) as V1ResourceClaimTemplate } : {}),
    objects,
    absent,
    trafficMode,
    replicas: { total: split.stable + split.canary, stable: split.stable, canary: split.canary },
    ...(canaryTrafficPercent !== undefined ? { canaryTrafficPercent } : {}),
    ...(scale.scaledToZero ? { scaledToZero: scale.scaledToZero } : {}),
    ...(scale.requeueAfterSeconds !== undefined ? { requeueAfterSeconds: scale.requeueAfterSeconds } : {}),
    url,
    selector: `${LABEL_ISVC}=${name}`,
  };
}

// ---------------------------------------------------------------------------------------------
// scale to zero

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * How many replicas run now. With minReplicas > 0: scaling.replicas clamped to the bounds. With
 * minReplicas 0: zero when scaling.replicas is 0 (kubectl scale, KEDA) or when no traffic signal
 * arrived for idleTimeout; the activation annotation is a traffic signal (a timestamp) or a hold
 * (any other value), and wakes the service even from replicas 0.
 */
export function scaleState(isvc: DefaultedInferenceService, ctx: Pick<DesiredContext, 'now' | 'lastRequestTime'>): {
  total: number;
  scaledToZero?: ScaledToZero;
  requeueAfterSeconds?: number;
} {
  const scaling = isvc.spec.scaling;
  const awake = clampReplicas(scaling);
  if (scaling.minReplicas > 0) return { total: awake };
  const now = ctx.now.getTime();
  const idleMs = (parseDuration(scaling.idleTimeout) ?? Number.POSITIVE_INFINITY) * 1000;
  const activation = isvc.metadata?.annotations?.[ACTIVATE_ANNOTATION];
  if (activation !== undefined && activation.trim() !== '' && !RFC3339.test(activation.trim())) return { total: Math.max(awake, 1) };
  const activatedAt = activation !== undefined && RFC3339.test(activation.trim()) ? Date.parse(activation.trim()) : undefined;
  const signals = [isvc.metadata?.creationTimestamp, ctx.lastRequestTime, activatedAt]
    .map((t) => (t === undefined ? Number.NaN : t instanceof Date ? t.getTime() : typeof t === 'number' ? t : Date.parse(t)))
    .filter((t) => Number.isFinite(t));
  const lastActivity = signals.length ? Math.max(...signals) : undefined;
  const lastActivityTime = lastActivity !== undefined ? rfc3339(new Date(lastActivity)) : undefined;
  const deadline = lastActivity !== undefined ? lastActivity + idleMs : Number.POSITIVE_INFINITY;
  const requeue = Number.isFinite(deadline) && deadline > now ? Math.max(1, Math.ceil((deadline - now) / 1000)) : undefined;

  // A recent activation wakes even a service scaled to zero by hand.
  if (activatedAt !== undefined && activatedAt + idleMs > now) return { total: Math.max(awake, 1), requeueAfterSeconds: requeue };
  if (awake === 0) {
    const previous = isvc.status?.scaledToZero;
    const since = previous?.reason === 'ReplicasZero' ? previous.since : rfc3339(ctx.now);
    return { total: 0, scaledToZero: { reason: 'ReplicasZero', since, ...(lastActivityTime ? { lastActivityTime } : {}) } };
  }
  if (deadline <= now) return { total: 0, scaledToZero: { reason: 'IdleTimeout', since: rfc3339(new Date(deadline)), ...(lastActivityTime ? { lastActivityTime } : {}) } };
  return { total: awake, ...(requeue !== undefined ? { requeueAfterSeconds: requeue } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Deployments

interface TrackVersion {
  model: DefaultedSpec['model'];
  runtime: DefaultedSpec['runtime'];
}

/** The model and runtime a track runs (the canary's: `canaryVersion`). */
export function trackVersion(spec: DefaultedSpec, track: Track): TrackVersion {
  return track === 'stable' ? { model: spec.model, runtime: spec.runtime } : canaryVersion(spec);
}

/** Directory name of a model on a cache PVC: stable per storage URI. */
export function cacheKey(storageUri: string): string {
  return createHash('sha256').update(storageUri).digest('hex').slice(0, 16);
}

function deployment(isvc: DefaultedInferenceService, track: Track, replicas: number, metadata: ChildMeta, ctx: DesiredContext, claimTemplate: string | undefined): V1Deployment {
  const spec = isvc.spec;
  const name = isvc.metadata?.name ?? '';
  const { model, runtime } = trackVersion(spec, track);
  const startupSeconds = parseDuration(runtime.startupTimeout) ?? 1200;
  const gpus = gpusPerReplica(spec);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas,
      selector: { matchLabels: selectorLabels(name, track) },
      // Accelerator nodes rarely have a spare GPU for a surge pod, so with GPUs and other replicas
      // to keep serving, pods are replaced one at a time in place; a single replica surges instead
      // (a stuck surge pod leaves the old one serving, an in-place swap would be an outage).
      strategy: { type: 'RollingUpdate', rollingUpdate: gpus > 0 && replicas > 1 ? { maxSurge: 0, maxUnavailable: 1 } : { maxSurge: 1, maxUnavailable: 0 } },
      revisionHistoryLimit: 3,
      // A rollout may take as long as a model load plus an image pull before it counts as stuck.
      progressDeadlineSeconds: startupSeconds + 600,
      template: {
        metadata: { labels: childLabels(name, track) },
        spec: podSpec(spec, model, runtime, startupSeconds, ctx, claimTemplate),
      },
    },
  };
}

function podSpec(spec: DefaultedSpec, model: TrackVersion['model'], runtime: TrackVersion['runtime'], startupSeconds: number, ctx: DesiredContext, claimTemplate: string | undefined): V1PodSpec {
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const initContainers: V1Container[] = [];

  if (model.pvc) {
    volumes.push({ name: 'model', persistentVolumeClaim: { claimName: model.pvc.claimName, readOnly: true } });
    mounts.push({ name: 'model', mountPath: MODEL_DIR, readOnly: true, ...(model.pvc.subPath ? { subPath: model.pvc.subPath } : {}) });
  } else if (model.storageUri) {
    const subdir = model.cache ? `models/${cacheKey(model.storageUri)}` : 'model';
    const volumeName = model.cache ? 'model-cache' : 'model';
    volumes.push(model.cache ? { name: volumeName, persistentVolumeClaim: { claimName: model.cache.claimName } } : { name: volumeName, emptyDir: {} });
    mounts.push({ name: volumeName, mountPath: MODEL_DIR, subPath: subdir, readOnly: true });
    const init = ctx.storageInitializer ?? DEFAULT_STORAGE_INITIALIZER;
    initContainers.push({
      name: 'model-download',
      image: init.image,
      command: ['/bin/sh', '-c', DOWNLOAD_SCRIPT, 'model-download', init.entrypoint, model.storageUri, `${MODEL_STORE_DIR}/${subdir}`],
      ...(model.credentialsSecretName ? { envFrom: [{ secretRef: { name: model.credentialsSecretName } }] } : {}),
      volumeMounts: [{ name: volumeName, mountPath: MODEL_STORE_DIR }],
      securityContext: { allowPrivilegeEscalation: false },
    });
  }
  volumes.push({ name: 'shm', emptyDir: { medium: 'Memory' } });
  mounts.push({ name: 'shm', mountPath: '/dev/shm' });

  const env: V1EnvVar[] = mergeEnv<V1EnvVar>(
    [
      { name: 'OLMPUB_MODEL_NAME', value: model.name },
      { name: 'OLMPUB_MODEL_DIR', value: MODEL_DIR },
      ...(model.format !== undefined ? [{ name: 'OLMPUB_MODEL_FORMAT', value: model.format }] : []),
    ],
    runtime.env,
  );

  const requests: Record<string, string> = quantities(spec.resources?.requests);
  const limits: Record<string, string> = quantities(spec.resources?.limits);
  const gpu = spec.resources?.gpu;
  if (gpu && gpu.count > 0) {
    requests[gpu.resourceName] = String(gpu.count);
    limits[gpu.resourceName] = String(gpu.count);
  }

  const probe = (extra: Omit<V1Probe, 'httpGet'>): V1Probe => ({ httpGet: { path: runtime.healthPath, port: 'http' }, ...extra });
  const server: V1Container = {
    name: 'server',
    image: runtime.image,
    ...(runtime.args ? { args: [...runtime.args] } : {}),
    env,
    ports: [{ name: 'http', containerPort: runtime.port, protocol: 'TCP' }],
    resources: {
      ...(Object.keys(requests).length ? { requests: sorted(requests) } : {}),
      ...(Object.keys(limits).length ? { limits: sorted(limits) } : {}),
      ...(claimTemplate ? { claims: [{ name: 'devices' }] } : {}),
    },
    volumeMounts: mounts,
    // Model loads take minutes: the startup probe holds liveness off for up to runtime.startupTimeout.
    startupProbe: probe({ periodSeconds: 10, timeoutSeconds: 5, failureThreshold: Math.max(1, Math.ceil(startupSeconds / 10)) }),
    // Ready means the model is loaded: the runtime answers healthPath with 200 only then.
    readinessProbe: probe({ periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3, successThreshold: 1 }),
    livenessProbe: probe({ periodSeconds: 30, timeoutSeconds: 10, failureThreshold: 3 }),
    securityContext: { allowPrivilegeEscalation: false },
  };

  const placement = spec.placement;
  return {
    ...(initContainers.length ? { initContainers } : {}),
    containers: [server],
    volumes,
    ...(claimTemplate ? { resourceClaims: [{ name: 'devices', resourceClaimTemplateName: claimTemplate }] } : {}),
    ...(placement?.nodeSelector ? { nodeSelector: sorted(placement.nodeSelector) } : {}),
    ...(placement?.tolerations ? { tolerations: structuredClone(placement.tolerations) } : {}),
    ...(placement?.affinity ? { affinity: structuredClone(placement.affinity) } : {}),
    ...(placement?.priorityClassName ? { priorityClassName: placement.priorityClassName } : {}),
    // Service links inject *_PORT variables that some runtimes misread (vLLM reads VLLM_PORT).
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
  };
}

function serviceFor(metadata: ChildMeta, selector: Record<string, string>): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }] },
  };
}

function quantities(q: Record<string, string | number> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(q ?? {}).map(([k, v]) => [k, String(v)]));
}

function sorted<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]!]));
}

/** Hash of an object's desired content, stored on it so an unchanged object needs no write. */
export function desiredHash(obj: unknown): string {
  return createHash('sha256').update(canonicalJSON(obj)).digest('hex').slice(0, 32);
}

function withHash<T extends ChildObject>(obj: T): T {
  const hash = desiredHash(obj);
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata?.annotations, [DESIRED_HASH_ANNOTATION]: hash } } } as T;
}
