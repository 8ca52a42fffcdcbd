/**
 * Event handlers and predicates (controller-runtime pkg/handler, pkg/predicate): they turn informer
 * events into reconcile requests. The controller gives initial-list and unchanged (resync) events
 * LOW_PRIORITY (-100), so failing or changed objects are handled before resync traffic.
 */
import { parseApiVersion, type KubeObject, type TypeRef } from '../kube/types.js';

/** What a reconciler is asked to reconcile: one object by namespace and name. */
export interface Request {
  /** '' for cluster-scoped objects. */
  namespace: string;
  name: string;
}

export function requestKey(req: Request): string {
  return req.namespace ? `${req.namespace}/${req.name}` : req.name;
}

export function requestFromKey(key: string): Request {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export function requestFor(obj: KubeObject): Request {
  return { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' };
}

export type ObjectEvent<T extends KubeObject = KubeObject> =
  | { type: 'create'; obj: T; isInInitialList: boolean }
  | { type: 'update'; oldObj: T; obj: T }
  | { type: 'delete'; obj: T };

/** Maps one event to the requests it should enqueue. */
export type EventMapper<T extends KubeObject = KubeObject> = (event: ObjectEvent<T>) => Request[];

/** A filter on events (controller-runtime predicates); all must pass. */
export type Predicate<T extends KubeObject = KubeObject> = (event: ObjectEvent<T>) => boolean;

/** Enqueues the object itself (handler.EnqueueRequestForObject). */
export function enqueueRequestForObject<T extends KubeObject>(): EventMapper<T> {
  return (event) => [requestFor(event.obj)];
}

/**
 * Enqueues the owner named in ownerReferences (handler.EnqueueRequestForOwner): the owner's group
 * and kind must match (any version). `onlyController` (default true) follows only the reference with
 * `controller: true`. The owner is looked up in the object's namespace.
 */
export function enqueueRequestForOwner<T extends KubeObject>(owner: TypeRef, options: { onlyController?: boolean } = {}): EventMapper<T> {
  const onlyController = options.onlyController ?? true;
  const group = parseApiVersion(owner.apiVersion).group;
  const ownersOf = (obj: T): Request[] =>
    (obj.metadata?.ownerReferences ?? [])
      .filter((ref) => ref.kind === owner.kind && parseApiVersion(ref.apiVersion).group === group && (!onlyController || ref.controller === true))
      .map((ref) => ({ namespace: obj.metadata?.namespace ?? '', name: ref.name }));
  return (event) => {
    if (event.type !== 'update') return ownersOf(event.obj);
    const seen = new Map<string, Request>();
    for (const r of [...ownersOf(event.oldObj), ...ownersOf(event.obj)]) seen.set(requestKey(r), r);
    return [...seen.values()];
  };
}

/** Enqueues whatever `map` returns for the object (handler.EnqueueRequestsFromMapFunc); on update, for old and new. */
export function enqueueRequestsFromMapFunc<T extends KubeObject>(map: (obj: T) => Request[]): EventMapper<T> {
  return (event) => {
    const out = event.type === 'update' ? [...map(event.oldObj), ...map(event.obj)] : map(event.obj);
    const seen = new Map<string, Request>();
    for (const r of out) seen.set(requestKey(r), r);
    return [...seen.values()];
  };
}

/** Passes updates only when metadata.generation changed (spec changes); create and delete pass. */
export function generationChangedPredicate<T extends KubeObject>(): Predicate<T> {
  return (event) => event.type !== 'update' || event.oldObj.metadata?.generation !== event.obj.metadata?.generation;
}

/**
 * The priority controller-runtime's handlers give an event: LOW for objects of the initial list and
 * for updates that changed nothing (resync, relist); undefined (0) otherwise.
 */
export function eventPriority(event: ObjectEvent, low: number): number | undefined {
  if (event.type === 'create' && event.isInInitialList) return low;
  if (event.type === 'update' && event.oldObj.metadata?.resourceVersion === event.obj.metadata?.resourceVersion) return low;
  return undefined;
}
