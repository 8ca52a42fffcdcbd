/**
 * The InferenceService reconciler: the thin I/O shell around the pure desired state (desired.ts) and
 * status (status.ts).
 *
 *   1. Read the object from the cache. Gone: forget it (children go with their owner references).
 *   2. Being deleted: bounded cleanup of every child (owned, or carrying our labels without an
 *      owner), then remove the finalizer `inference.olmpub.dev/cleanup` last; failures are retried
 *      with backoff and reported as Warning events.
 *   3. Otherwise add the finalizer (once), compute the desired children, server-side apply (field
 *      manager `olmpub-operator`, force) only those whose cached copy differs (the desired-hash
 *      annotation, plus the Deployment replica count others may change), delete children listed in
 *      `absent`, compute the status and apply it to the status subresource only when it changed.
 *      A steady-state resync therefore sends no write request at all.
 *   4. Events (Normal/Warning) for scaling, rollouts, readiness, canary promotion and rollback,
 *      scale to zero and wake-up, and errors.
 *   5. Result: RequeueAfter for the scale-to-zero idle deadline; errors requeue with backoff; a spec
 *      the cluster rejects (422/400 on a child, DRA devices without DRA) is a TerminalError plus
 *      Degraded=True/InvalidSpec, retried only when the object changes.
 *
 * Writes the cache has not seen yet are remembered ("expectations"), so a reconcile that runs on a
 * stale cache right after a write does not repeat it.
 */
import type { V1Container, V1Deployment, V1ResourceClaimTemplate, V1Service } from '@kubernetes/client-node';
import {
  API_VERSION_V1,
  CLEANUP_FINALIZER,
  GROUP,
  KIND,
  LABEL_ISVC,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  PLURAL,
  rfc3339,
  type Condition,
} from '../api/meta.js';
import type { InferenceService, InferenceServiceStatus } from '../api/v1.js';
import { requires } from '../rbac-declarations.js';
import { realClock, type Clock } from '../runtime/clock.js';
import type { Informer } from '../runtime/cache/informer.js';
import { TerminalError, type ReconcileContext, type Reconciler, type Result } from '../runtime/controller/controller.js';
import type { Request } from '../runtime/controller/handler.js';
import type { KubeClient } from '../runtime/kube/client.js';
import { isConflict, isInvalid, isNotFound, KubeApiError } from '../runtime/kube/errors.js';
import type { KubeObject, TypeRef } from '../runtime/kube/types.js';
import { childNames, desiredHash, desiredState, DESIRED_HASH_ANNOTATION, type ChildObject, type DesiredState, type GatewayRef, type HTTPRoute } from './desired.js';
import type { OptionalInformer } from './discovery.js';
import { computeStatus, scalingEvents, setCondition, statusChanged, statusEvents, type StatusEvent } from './status.js';

export const FIELD_MANAGER = 'olmpub-operator';
/** On Deployments: hash of the pod template, to tell a rollout from a scale change. */
export const TEMPLATE_HASH_ANNOTATION = `${GROUP}/template-hash`;
/** Label selector of every child the operator manages (the child informers watch only these). */
export const CHILD_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

export const ISVC: TypeRef = { apiVersion: API_VERSION_V1, kind: KIND };
export const DEPLOYMENT: TypeRef = { apiVersion: 'apps/v1', kind: 'Deployment' };
export const SERVICE: TypeRef = { apiVersion: 'v1', kind: 'Service' };
export const HTTP_ROUTE: TypeRef = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' };
export const CLAIM_TEMPLATE: TypeRef = { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaimTemplate' };
export const HTTP_ROUTE_GVR = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'httproutes' };
export const CLAIM_TEMPLATE_GVR = { group: 'resource.k8s.io', version: 'v1', resource: 'resourceclaimtemplates' };

const CHILD_VERBS = ['list', 'watch', 'create', 'patch', 'delete'] as const;
/** What the reconciler does with the API (collected into the operator's ClusterRole). */
export const RECONCILER_RBAC = [
  requires({ group: GROUP, resource: PLURAL, verbs: ['list', 'watch', 'patch'], reason: 'reads InferenceServices (cache); adds and removes the cleanup finalizer' }),
  requires({ group: GROUP, resource: PLURAL, subresource: 'status', verbs: ['patch'], reason: 'server-side applies status' }),
  requires({
    group: GROUP,
    resource: PLURAL,
    subresource: 'finalizers',
    verbs: ['update'],
    reason: 'children carry blockOwnerDeletion owner references (OwnerReferencesPermissionEnforcement)',
  }),
  requires({ group: 'apps', resource: 'deployments', verbs: [...CHILD_VERBS, 'get'], reason: 'owns the stable and canary Deployments (server-side apply; get checks a name before creating)' }),
  requires({ group: '', resource: 'services', verbs: [...CHILD_VERBS, 'get'], reason: 'owns the Services' }),
  requires({ group: 'gateway.networking.k8s.io', resource: 'httproutes', verbs: [...CHILD_VERBS, 'get'], reason: 'owns the HTTPRoute when the Gateway API is served' }),
  requires({ group: 'resource.k8s.io', resource: 'resourceclaimtemplates', verbs: [...CHILD_VERBS, 'get'], reason: 'owns the ResourceClaimTemplate of DRA devices' }),
  requires({ group: 'events.k8s.io', resource: 'events', verbs: ['create', 'patch'], reason: 'records Events about InferenceServices' }),
];

/** The part of the EventRecorder the reconciler uses. */
export interface EventSink {
  event(regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void;
}

export interface InferenceServiceReconcilerOptions {
  client: KubeClient;
  isvcs: Informer<InferenceService>;
  deployments: Informer<V1Deployment & KubeObject>;
  services: Informer<V1Service & KubeObject>;
  httpRoutes: OptionalInformer<HTTPRoute>;
  claimTemplates: OptionalInformer<V1ResourceClaimTemplate & KubeObject>;
  events: EventSink;
  /** The Gateway HTTPRoutes attach to; without it traffic is split by replicas. */
  gateway?: GatewayRef;
  ingressDomain?: string;
  /** Default cluster.local. */
  clusterDomain?: string;
  storageInitializer?: { image: string; entrypoint: string };
  /** Bound of one cleanup attempt. Default 30 s. */
  cleanupTimeoutMs?: number;
  fieldManager?: string;
  clock?: Clock;
}

/** A child with our name that this InferenceService does not own: never taken over. */
export class ChildConflictError extends Error {
  override readonly name = 'ChildConflictError';
}

/** A spec the cluster can never accept as it is. */
export class InvalidSpecError extends Error {
  override readonly name = 'InvalidSpecError';
}

type Child = KubeObject & { spec?: unknown; status?: unknown };

interface Expectation {
  /** resourceVersion of the cached object when we wrote ('' when it was absent). */
  fromRV: string;
}
/** A child we applied: its desired hash and what the apiserver answered. */
interface ChildExpectation extends Expectation {
  hash: string;
  result: KubeObject;
}
/** A status we wrote. */
interface StatusExpectation extends Expectation {
  status: InferenceServiceStatus;
}

const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

/** Whether `obj` is controlled by the InferenceService with this uid. */
export function controlledBy(obj: KubeObject | undefined, uid: string | undefined): boolean {
  return !!uid && !!obj?.metadata?.ownerReferences?.some((r) => r.controller === true && r.uid === uid);
}

/**
 * May the reconciler write this existing child? Yes when we control it, or when it is an orphan that
 * carries our labels for this InferenceService (it was ours; adopted again). Anything else with the
 * same name belongs to someone else.
 */
export function mayAdopt(obj: KubeObject, isvcName: string, uid: string | undefined): boolean {
  if (controlledBy(obj, uid)) return true;
  const hasController = obj.metadata?.ownerReferences?.some((r) => r.controller === true) ?? false;
  const labels = obj.metadata?.labels ?? {};
  return !hasController && labels[LABEL_ISVC] === isvcName && labels[LABEL_MANAGED_BY] === MANAGED_BY;
}

/**
 * Whether the cached child differs from the desired one: a different desired-hash annotation, or a
 * Deployment whose replica count someone else changed (kubectl scale). Pure.
 */
export function needsApply(desired: ChildObject, current: { metadata?: { annotations?: Record<string, string> }; spec?: unknown } | undefined): boolean {
  if (!current) return true;
  const want = desired.metadata?.annotations?.[DESIRED_HASH_ANNOTATION];
  if (!want || current.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] !== want) return true;
  if (desired.kind === 'Deployment') return (current.spec as { replicas?: number } | undefined)?.replicas !== (desired as V1Deployment).spec?.replicas;
  return false;
}

/**
 * The status of an InferenceService whose spec cannot work: Degraded and Progressing say why; Ready
 * and the observed replica counts stay as they were (the previous version may still serve). Pure.
 */
export function invalidSpecStatus(isvc: InferenceService, message: string, now: Date): InferenceServiceStatus {
  const previous = isvc.status ?? {};
  const generation = isvc.metadata?.generation;
  const gen = generation !== undefined ? { observedGeneration: generation } : {};
  const ready = previous.conditions?.find((c) => c.type === 'Ready');
  const conditions: Condition[] = [
    ready ?? setCondition(undefined, { type: 'Ready', status: 'False', reason: 'InvalidSpec', message, ...gen }, now),
    setCondition(previous.conditions as Condition[] | undefined, { type: 'Progressing', status: 'False', reason: 'InvalidSpec', message, ...gen }, now),
    setCondition(previous.conditions as Condition[] | undefined, { type: 'Degraded', status: 'True', reason: 'InvalidSpec', message, ...gen }, now),
  ];
  return { ...previous, ...gen, conditions };
}

/** Sets Degraded=True with `reason` on a computed status (keeps the rest). Pure. */
export function withDegraded(status: InferenceServiceStatus, previous: InferenceServiceStatus | undefined, reason: string, message: string, now: Date, generation?: number): InferenceServiceStatus {
  const others = (status.conditions ?? []).filter((c) => c.type !== 'Degraded');
  const degraded = setCondition(previous?.conditions as Condition[] | undefined, { type: 'Degraded', status: 'True', reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) }, now);
  return { ...status, conditions: [...others, degraded] };
}

/** Problems the cluster would only report later (or never), found before applying. Pure. */
export function specProblems(isvc: InferenceService, capabilities: { dra: boolean }): string[] {
  const problems: string[] = [];
  if (isvc.spec?.devices?.length && !capabilities.dra)
    problems.push('spec.devices needs Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 or later), which this cluster does not serve; use resources.gpu instead');
  return problems;
}

const serverContainer = (d: V1Deployment | undefined): V1Container | undefined => d?.spec?.template?.spec?.containers?.find((c) => c.name === 'server');
const modelEnv = (c: V1Container | undefined) => c?.env?.find((e) => e.name === 'OLMPUB_MODEL_NAME')?.value;

/** Whether dropping the canary promotes it: the stable track now runs what the canary ran. Pure. */
export function isPromotion(desiredStable: V1Deployment, observedCanary: V1Deployment | undefined): boolean {
  const next = serverContainer(desiredStable);
  const canary = serverContainer(observedCanary);
  return !!next && !!canary && next.image === canary.image && JSON.stringify(next.args ?? []) === JSON.stringify(canary.args ?? []) && modelEnv(next) === modelEnv(canary);
}

function errorMessage(err: unknown): string {
  if (err instanceof KubeApiError) return err.apiStatus.message || err.message;
  return err instanceof Error ? err.message : String(err);
}

export class InferenceServiceReconciler implements Reconciler {
  private readonly clock: Clock;
  private readonly fieldManager: string;
  private readonly childExpectations = new Map<string, ChildExpectation>();
  private readonly statusExpectations = new Map<string, StatusExpectation>();
  private readonly deleteExpectations = new Map<string, string>();
  /** Writes this reconciler sent, by kind (for tests and debugging). */
  readonly stats = { applies: 0, statusWrites: 0, deletes: 0, finalizerWrites: 0 };

  private readonly observing = new WeakSet<object>();

  constructor(private readonly o: InferenceServiceReconcilerOptions) {
    this.clock = o.clock ?? realClock;
    this.fieldManager = o.fieldManager ?? FIELD_MANAGER;
    this.observe(o.deployments as unknown as Informer<Child>);
    this.observe(o.services as unknown as Informer<Child>);
    o.isvcs.addEventHandler({
      onUpdate: (_old, obj) => this.settle(this.statusExpectations, `${obj.metadata?.namespace}/${obj.metadata?.name}`, obj, false),
      onDelete: (obj) => this.settle(this.statusExpectations, `${obj.metadata?.namespace}/${obj.metadata?.name}`, obj, true),
    });
  }

  /**
   * Expectations end as soon as the cache shows anything newer than what we wrote over (our own
   * write, someone else's, or a deletion): the informer calls these handlers before the reconcile
   * the same event triggers.
   */
  private observe(informer: Informer<Child> | undefined): void {
    if (!informer || this.observing.has(informer)) return;
    this.observing.add(informer);
    const key = (obj: KubeObject) => keyOf(obj.kind ?? '', obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
    informer.addEventHandler({
      onAdd: (obj) => this.settle(this.childExpectations, key(obj), obj, false),
      onUpdate: (_old, obj) => this.settle(this.childExpectations, key(obj), obj, false),
      onDelete: (obj) => {
        this.settle(this.childExpectations, key(obj), obj, true);
        if (this.deleteExpectations.get(key(obj)) === obj.metadata?.uid) this.deleteExpectations.delete(key(obj));
      },
    });
  }

  private settle(map: Map<string, Expectation>, key: string, obj: KubeObject, deleted: boolean): void {
    const e = map.get(key);
    if (e && (deleted || (obj.metadata?.resourceVersion ?? '') !== e.fromRV)) map.delete(key);
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const cached = this.o.isvcs.get(req.name, req.namespace);
    if (!cached) {
      this.forget(req);
      return;
    }
    if (cached.metadata?.deletionTimestamp) return this.finalize(cached, ctx);

    let isvc: InferenceService = cached;
    if (!(isvc.metadata?.finalizers ?? []).includes(CLEANUP_FINALIZER)) isvc = await this.addFinalizer(isvc, ctx);

    const now = new Date(this.clock.now());
    const [routes, claims] = await Promise.all([this.o.httpRoutes.get(ctx.signal), this.o.claimTemplates.get(ctx.signal)]);
    this.observe(routes as unknown as Informer<Child> | undefined);
    this.observe(claims as unknown as Informer<Child> | undefined);
    const problems = specProblems(isvc, { dra: !!claims });
    if (problems.length) return this.invalidSpec(isvc, problems.join('; '), now, ctx);

    const uid = isvc.metadata?.uid;
    const ns = req.namespace;
    const names = childNames(req.name);
    const cachedStable = this.owned(this.o.deployments.get(names.stable, ns), uid);
    const cachedCanary = this.owned(this.o.deployments.get(names.canary, ns), uid);
    let desired: DesiredState;
    try {
      desired = desiredState(isvc, {
        now,
        gatewayAPI: !!routes,
        ...(this.o.gateway ? { gateway: this.o.gateway } : {}),
        ...(this.o.ingressDomain ? { ingressDomain: this.o.ingressDomain } : {}),
        ...(this.o.clusterDomain ? { clusterDomain: this.o.clusterDomain } : {}),
        ...(this.o.storageInitializer ? { storageInitializer: this.o.storageInitializer } : {}),
        canaryReadyReplicas: cachedCanary?.status?.readyReplicas ?? 0,
      });
    } catch (err) {
      return this.invalidSpec(isvc, `cannot compute the children: ${errorMessage(err)}`, now, ctx);
    }

    const events: StatusEvent[] = [];
    // Scaling events, recorded for the Deployments that are really applied.
    const scaling = new Map<string, StatusEvent[]>([
      [names.stable, scalingEvents({ stable: cachedStable }, desired)],
      [names.canary, scalingEvents({ canary: cachedCanary }, desired)],
    ]);
    const observed = new Map<string, KubeObject>();
    let canaryDeleted = false;
    const promoted = !desired.canary && !!cachedCanary && isPromotion(desired.stable, cachedCanary);
    try {
      for (const obj of desired.objects) {
        const result = await this.applyChild(isvc, obj, { routes, claims }, events, scaling, ctx);
        if (result) observed.set(keyOf(obj.kind!, ns, obj.metadata!.name!), result);
      }
      for (const ref of desired.absent) {
        const deleted = await this.deleteChild(isvc, ref, { routes, claims }, ctx);
        if (deleted && ref.kind === 'Deployment' && ref.name === names.canary) canaryDeleted = true;
      }
    } catch (err) {
      if (err instanceof InvalidSpecError || (err instanceof KubeApiError && (isInvalid(err) || err.status === 400)))
        return this.invalidSpec(isvc, errorMessage(err), now, ctx);
      if (err instanceof ChildConflictError) {
        const status = withDegraded(computeStatus(isvc, desired, { stable: cachedStable, canary: cachedCanary }, now), isvc.status, 'ChildConflict', err.message, now, isvc.metadata?.generation);
        await this.writeStatus(isvc, status, ctx).catch((e) => ctx.log.warn('could not write status', { err: e as Error }));
      }
      if (!isConflict(err) && !ctx.signal.aborted) this.o.events.event(isvc, 'Warning', err instanceof ChildConflictError ? 'ChildConflict' : 'ReconcileFailed', 'Reconcile', errorMessage(err));
      throw err;
    }

    const stable = observed.get(keyOf('Deployment', ns, names.stable)) as V1Deployment | undefined;
    const canary = desired.canary ? (observed.get(keyOf('Deployment', ns, names.canary)) as V1Deployment | undefined) : undefined;
    const status = computeStatus(isvc, desired, { stable, canary }, now);
    const wrote = await this.writeStatus(isvc, status, ctx);
    if (wrote) {
      for (const e of statusEvents(wrote.previous, status)) {
        if (promoted && e.reason === 'CanaryRemoved') continue;
        events.push(e);
      }
    }
    if (promoted && canaryDeleted)
      events.push({ type: 'Normal', reason: 'CanaryPromoted', message: `the canary's version is now the stable version (Deployment ${names.stable}); the canary Deployment ${names.canary} was removed` });
    for (const e of events) this.o.events.event(isvc, e.type, e.reason, actionOf(e.reason), e.message);

    return desired.requeueAfterSeconds !== undefined ? { requeueAfter: desired.requeueAfterSeconds * 1000 } : undefined;
  }

  // -------------------------------------------------------------------------------------------
  // children

  private owned<T extends KubeObject>(obj: T | undefined, uid: string | undefined): T | undefined {
    return obj && controlledBy(obj, uid) ? obj : undefined;
  }

  private informerOf(kind: string, optional: { routes?: Informer<HTTPRoute>; claims?: Informer<V1ResourceClaimTemplate & KubeObject> }): Informer<Child> | undefined {
    switch (kind) {
      case 'Deployment':
        return this.o.deployments as unknown as Informer<Child>;
      case 'Service':
        return this.o.services as unknown as Informer<Child>;
      case 'HTTPRoute':
        return optional.routes as unknown as Informer<Child> | undefined;
      case 'ResourceClaimTemplate':
        return optional.claims as unknown as Informer<Child> | undefined;
      default:
        return undefined;
    }
  }

  /** Applies one child if it differs from the cache; returns the object as the cluster has it. */
  private async applyChild(
    isvc: InferenceService,
    obj: ChildObject,
    optional: { routes?: Informer<HTTPRoute>; claims?: Informer<V1ResourceClaimTemplate & KubeObject> },
    events: StatusEvent[],
    scaling: Map<string, StatusEvent[]>,
    ctx: ReconcileContext,
  ): Promise<KubeObject | undefined> {
    const name = obj.metadata!.name!;
    const ns = obj.metadata!.namespace!;
    const key = keyOf(obj.kind!, ns, name);
    const uid = isvc.metadata?.uid;
    const informer = this.informerOf(obj.kind!, optional);
    if (!informer) throw new InvalidSpecError(`${obj.kind} ${name} is needed but ${obj.apiVersion} is not served by this cluster`);
    const current = informer.get(name, ns);
    if (current && !mayAdopt(current, isvc.metadata?.name ?? '', uid))
      throw new ChildConflictError(`${obj.kind} ${ns}/${name} exists and is not owned by this InferenceService; rename the InferenceService or delete that ${obj.kind}`);
    if (!needsApply(obj, current) && controlledBy(current, uid)) return current;

    const hash = obj.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] ?? desiredHash(obj);
    const fromRV = current?.metadata?.resourceVersion ?? '';
    const expected = this.childExpectations.get(key);
    if (expected && expected.hash === hash && expected.fromRV === fromRV) return expected.result; // written; the cache lags

    if (!current) {
      // Not in our (label-filtered) cache: make sure the name is free, or ours.
      const live = await this.o.client.tryGet<Child>({ apiVersion: obj.apiVersion!, kind: obj.kind! }, name, ns, { signal: ctx.signal });
      if (live && !mayAdopt(live, isvc.metadata?.name ?? '', uid))
        throw new ChildConflictError(`${obj.kind} ${ns}/${name} exists and is not owned by this InferenceService; rename the InferenceService or delete that ${obj.kind}`);
    }

    let body: ChildObject = obj;
    if (obj.kind === 'Deployment') {
      const deployment = obj as V1Deployment;
      const templateHash = desiredHash(deployment.spec?.template ?? {});
      body = { ...deployment, metadata: { ...deployment.metadata!, annotations: { ...deployment.metadata!.annotations, [TEMPLATE_HASH_ANNOTATION]: templateHash } } } as V1Deployment;
      const before = current as V1Deployment | undefined;
      const previousTemplate = before?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION];
      if (before && previousTemplate && previousTemplate !== templateHash) {
        const image = serverContainer(deployment)?.image;
        const was = serverContainer(before)?.image;
        events.push({
          type: 'Normal',
          reason: 'RolloutStarted',
          message: `Deployment ${name}: rolling out a new version${image && was && image !== was ? ` (image ${was} → ${image})` : ''}`,
        });
      }
      events.push(...(scaling.get(name) ?? []));
    }
    const result = await this.o.client.apply(body as KubeObject, { fieldManager: this.fieldManager, force: true, signal: ctx.signal });
    this.stats.applies++;
    this.childExpectations.set(key, { fromRV, hash, result });
    ctx.log.debug('applied', { kind: obj.kind, child: name });
    return result;
  }

  private async deleteChild(
    isvc: InferenceService,
    ref: { apiVersion: string; kind: string; name: string },
    optional: { routes?: Informer<HTTPRoute>; claims?: Informer<V1ResourceClaimTemplate & KubeObject> },
    ctx: ReconcileContext,
  ): Promise<boolean> {
    const ns = isvc.metadata!.namespace!;
    const informer = this.informerOf(ref.kind, optional);
    const current = informer?.get(ref.name, ns);
    if (!current || !controlledBy(current, isvc.metadata?.uid) || current.metadata?.deletionTimestamp) return false;
    const key = keyOf(ref.kind, ns, ref.name);
    const currentUID = current.metadata?.uid ?? '';
    if (this.deleteExpectations.get(key) === currentUID) return false; // deleted; the cache lags
    await this.o.client.delete(ref, ref.name, ns, { ignoreNotFound: true, propagationPolicy: 'Background', preconditions: { uid: currentUID }, signal: ctx.signal });
    this.stats.deletes++;
    this.deleteExpectations.set(key, currentUID);
    this.childExpectations.delete(key);
    ctx.log.debug('deleted', { kind: ref.kind, child: ref.name });
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // status

  /**
   * Applies the status when it changed. Returns the status it compared with (the cached one, or the
   * one this reconciler wrote if the cache has not caught up) when it wrote, undefined otherwise.
   */
  private async writeStatus(isvc: InferenceService, status: InferenceServiceStatus, ctx: ReconcileContext): Promise<{ previous: InferenceServiceStatus | undefined } | undefined> {
    const key = `${isvc.metadata?.namespace}/${isvc.metadata?.name}`;
    const fromRV = isvc.metadata?.resourceVersion ?? '';
    const expected = this.statusExpectations.get(key);
    const previous = expected && expected.fromRV === fromRV ? expected.status : isvc.status;
    if (!statusChanged(previous, status)) return undefined;
    await this.o.client.applyStatus(
      { apiVersion: API_VERSION_V1, kind: KIND, metadata: { name: isvc.metadata!.name!, namespace: isvc.metadata!.namespace! }, status } as KubeObject,
      { fieldManager: this.fieldManager, force: true, signal: ctx.signal },
    );
    this.stats.statusWrites++;
    this.statusExpectations.set(key, { fromRV, status });
    if (ctx.log.enabled('debug'))
      ctx.log.debug('status written', { fromRV, previous: previous && summary(previous), status: summary(status) });
    return { previous };
  }

  private async invalidSpec(isvc: InferenceService, message: string, now: Date, ctx: ReconcileContext): Promise<never> {
    const status = invalidSpecStatus(isvc, message, now);
    const wrote = await this.writeStatus(isvc, status, ctx);
    if (wrote) for (const e of statusEvents(wrote.previous, status)) this.o.events.event(isvc, e.type, e.reason, actionOf(e.reason), e.message);
    throw new TerminalError(`invalid spec: ${message}`);
  }

  // -------------------------------------------------------------------------------------------
  // finalizer

  private async addFinalizer(isvc: InferenceService, ctx: ReconcileContext): Promise<InferenceService> {
    const finalizers = [...(isvc.metadata?.finalizers ?? []), CLEANUP_FINALIZER];
    const out = await this.o.client.patch<InferenceService>(
      ISVC,
      isvc.metadata!.name!,
      isvc.metadata!.namespace!,
      { metadata: { finalizers, resourceVersion: isvc.metadata?.resourceVersion } },
      'merge',
      { signal: ctx.signal, fieldManager: this.fieldManager },
    );
    this.stats.finalizerWrites++;
    return out;
  }

  /**
   * Deletes every child (live list by our label, so nothing the cache has not seen yet survives),
   * within cleanupTimeoutMs, then removes the finalizer. Failures are retried with backoff.
   */
  private async finalize(isvc: InferenceService, ctx: ReconcileContext): Promise<Result | void> {
    if (!(isvc.metadata?.finalizers ?? []).includes(CLEANUP_FINALIZER)) return;
    const name = isvc.metadata!.name!;
    const ns = isvc.metadata!.namespace!;
    const uid = isvc.metadata?.uid;
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(this.o.cleanupTimeoutMs ?? 30_000)]);
    let deleted = 0;
    try {
      const kinds: TypeRef[] = [DEPLOYMENT, SERVICE];
      const [routes, claims] = await Promise.all([this.o.httpRoutes.get(signal), this.o.claimTemplates.get(signal)]);
      if (routes) kinds.push(HTTP_ROUTE);
      if (claims) kinds.push(CLAIM_TEMPLATE);
      for (const kind of kinds) {
        const list = await this.o.client.listAll<Child>(kind, { namespace: ns, labelSelector: `${LABEL_ISVC}=${name}`, signal });
        for (const child of list.items) {
          if (child.metadata?.deletionTimestamp || !mayAdopt(child, name, uid)) continue;
          await this.o.client.delete(kind, child.metadata!.name!, ns, {
            ignoreNotFound: true,
            propagationPolicy: 'Background',
            preconditions: { uid: child.metadata!.uid! },
            signal,
          });
          this.stats.deletes++;
          deleted++;
        }
      }
      const finalizers = (isvc.metadata?.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
      try {
        await this.o.client.patch(ISVC, name, ns, { metadata: { finalizers, resourceVersion: isvc.metadata?.resourceVersion } }, 'merge', { signal, fieldManager: this.fieldManager });
        this.stats.finalizerWrites++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    } catch (err) {
      const why = signal.aborted && !ctx.signal.aborted ? `cleanup did not finish within ${this.o.cleanupTimeoutMs ?? 30_000} ms` : errorMessage(err);
      if (!isConflict(err)) this.o.events.event(isvc, 'Warning', 'CleanupFailed', 'Delete', `cleanup before deletion failed (retrying with backoff): ${why}`);
      throw err instanceof Error && !signal.aborted ? err : new Error(why, { cause: err });
    }
    this.o.events.event(isvc, 'Normal', 'CleanedUp', 'Delete', `deleted ${deleted} child object(s); finalizer ${CLEANUP_FINALIZER} removed`);
    this.forget({ namespace: ns, name });
    ctx.log.info('cleaned up', { deleted, since: isvc.metadata?.deletionTimestamp ?? rfc3339(new Date(this.clock.now())) });
  }

  private forget(req: Request): void {
    const children = new Set(Object.values(childNames(req.name)).map((n) => `/${req.namespace}/${n}`));
    for (const map of [this.childExpectations, this.deleteExpectations]) {
      for (const key of map.keys()) if (children.has(key.slice(key.indexOf('/')))) map.delete(key);
    }
    this.statusExpectations.delete(`${req.namespace}/${req.name}`);
  }
}

/** A one-line status summary for debug logs. */
function summary(s: InferenceServiceStatus): string {
  const conds = (s.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}@${c.lastTransitionTime}`).join(' ');
  return `gen=${s.observedGeneration} replicas=${s.replicas}/${s.readyReplicas} ${conds}${s.canary ? ` canary=${JSON.stringify(s.canary)}` : ''}${s.scaledToZero ? ` zero=${JSON.stringify(s.scaledToZero)}` : ''}`;
}

/** The Event `action` (what the operator did) for a reason. */
function actionOf(reason: string): string {
  switch (reason) {
    case 'Scaled':
    case 'ScaledToZero':
    case 'Activated':
      return 'Scale';
    case 'RolloutStarted':
    case 'RolloutComplete':
      return 'Rollout';
    case 'CanaryPromoted':
    case 'CanaryRemoved':
    case 'CanaryRolledBack':
    case 'CanaryTrafficShifted':
      return 'Canary';
    default:
      return 'Reconcile';
  }
}
