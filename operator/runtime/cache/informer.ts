/**
 * An informer: reflectors (one for all namespaces, or one per watched namespace) feeding one indexed
 * store, with add/update(old, new)/delete handlers, a real synced signal, and a periodic resync that
 * replays the cache to the handlers as update(obj, obj) without calling the apiserver.
 */
import { realClock, sleep, type Clock, type TimerHandle } from '../clock.js';
import type { KubeClient } from '../kube/client.js';
import { objectKey, type KubeObject, type TypeRef } from '../kube/types.js';
import { silentLogger, type Logger } from '../log.js';
import { Backoff } from '../backoff.js';
import { Reflector, type ReflectorOptions, type ReflectorStats } from './reflector.js';
import { deepFreeze, Store, type IndexFunc } from './store.js';

export interface EventHandler<T extends KubeObject = KubeObject> {
  /** `isInInitialList`: the object came with the first list (or the replay to a late handler). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called with the same object twice on resync and for unchanged objects of a relist. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** The reflector's options (passed to each reflector as they are), plus what the informer adds. */
export interface InformerOptions<T extends KubeObject = KubeObject> extends Omit<ReflectorOptions, 'client' | 'type' | 'namespace'> {
  /** Namespaces to watch; empty or undefined: all namespaces with one watch. */
  namespaces?: string[];
  indexers?: Record<string, IndexFunc<T>>;
  /** Replays the cache to handlers this often (±5 % jitter). 0 or undefined: never. */
  resyncPeriodMs?: number;
  /** Applied to every object before it is stored (e.g. drop managedFields to save memory). */
  transform?: (obj: T) => T;
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  private reflectorList: Reflector<T>[] = [];
  private handlers: EventHandler<T>[] = [];
  private ctrl?: AbortController;
  private running: Promise<void>[] = [];
  private syncedCount = 0;
  private syncWaiters: (() => void)[] = [];
  private resyncTimer?: TimerHandle;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: Logger;

  constructor(
    readonly client: KubeClient,
    readonly type: TypeRef,
    private readonly options: InformerOptions<T> = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = (options.logger ?? silentLogger).child('informer', { kind: type.kind });
    this.store = new Store<T>(options.indexers ?? {});
  }

  /** The reflectors (one per watched namespace, or one for all); empty until the kind is resolved after start(). */
  get reflectors(): readonly Reflector<T>[] {
    return this.reflectorList;
  }

  private makeReflectors(namespaced: boolean): void {
    const scopes: (string | undefined)[] = namespaced && this.options.namespaces?.length ? [...new Set(this.options.namespaces)] : [undefined];
    const { namespaces: _n, indexers: _i, resyncPeriodMs: _r, transform: _t, ...reflectorOptions } = this.options;
    this.reflectorList = scopes.map((namespace) => {
      let synced = false;
      return new Reflector<T>(
        { ...reflectorOptions, client: this.client, type: this.type, namespace, clock: this.clock, random: this.random, logger: this.log },
        {
          onList: (items, initial) => {
            this.onList(items, initial, namespace);
            if (!synced) {
              synced = true;
              this.markSynced();
            }
          },
          onEvent: (type, obj) => this.onEvent(type, obj),
        },
      );
    });
  }

  /** Registers handlers. Objects already cached are replayed at once as onAdd(obj, true). Returns an unregister function. */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers.push(handler);
    for (const obj of this.store.list()) this.call(handler, 'onAdd', () => handler.onAdd?.(obj, true));
    return () => {
      this.handlers = this.handlers.filter((h) => h !== handler);
    };
  }

  get started(): boolean {
    return this.ctrl !== undefined;
  }

  /** Starts the reflectors (idempotent); `signal` also stops them. */
  start(signal?: AbortSignal): void {
    if (this.ctrl) return;
    const ctrl = (this.ctrl = new AbortController());
    signal?.addEventListener('abort', () => ctrl.abort(), { once: true });
    this.running = [this.run(ctrl.signal)];
    this.scheduleResync();
  }

  /** Resolves whether the kind is namespaced (retrying discovery with backoff), then runs the reflectors. */
  private async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ clock: this.clock, random: this.random, ...this.options.backoff });
    let namespaced: boolean | undefined;
    while (namespaced === undefined) {
      if (signal.aborted) return;
      try {
        namespaced = (await this.client.resource(this.type)).namespaced;
      } catch (err) {
        const delay = backoff.next();
        this.log.warn('cannot resolve the kind; retrying', { err: err as Error, retryInMs: Math.round(delay) });
        if (!(await sleep(this.clock, delay, signal))) return;
      }
    }
    this.makeReflectors(namespaced);
    await Promise.all(this.reflectorList.map((r) => r.run(signal)));
  }

  /** Stops the reflectors and waits for them to end. */
  async stop(): Promise<void> {
    this.ctrl?.abort();
    if (this.resyncTimer) this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    await Promise.all(this.running);
    for (const w of this.syncWaiters.splice(0)) w();
  }

  /** True once every reflector has completed its first list. */
  hasSynced(): boolean {
    return this.reflectorList.length > 0 && this.syncedCount === this.reflectorList.length;
  }

  /** Resolves true when synced, false on timeout or abort. */
  waitForSync(opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = (v: boolean) => {
        if (timer) this.clock.clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        resolve(v);
      };
      const waiter = () => done(this.hasSynced());
      const onAbort = () => done(false);
      this.syncWaiters.push(waiter);
      if (opts.timeoutMs !== undefined) timer = this.clock.setTimeout(() => done(false), opts.timeoutMs);
      if (opts.signal?.aborted) done(false);
      else opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  get(name: string, namespace?: string): T | undefined {
    return this.store.getByName(namespace, name);
  }

  list(namespace?: string): T[] {
    return this.store.list(namespace);
  }

  byIndex(index: string, value: string): T[] {
    return this.store.byIndex(index, value);
  }

  /** Summed reflector statistics. */
  stats(): ReflectorStats {
    const sum: ReflectorStats = { lists: 0, relists: 0, watches: 0, errors: 0, gone: 0, events: 0, bookmarks: 0 };
    for (const r of this.reflectorList) for (const k of Object.keys(sum) as (keyof ReflectorStats)[]) sum[k] += r.stats[k];
    return sum;
  }

  private markSynced(): void {
    this.syncedCount++;
    if (this.hasSynced()) {
      this.log.debug('synced', { objects: this.store.size });
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private prepare(obj: T): T {
    return deepFreeze(this.options.transform ? this.options.transform(obj) : obj);
  }

  private onList(items: T[], initial: boolean, namespace: string | undefined): void {
    const changes = this.store.replace(items.map((o) => this.prepare(o)), namespace);
    for (const obj of changes.added) this.dispatch('onAdd', (h) => h.onAdd?.(obj, initial));
    for (const [oldObj, newObj] of changes.updated) this.dispatch('onUpdate', (h) => h.onUpdate?.(oldObj, newObj));
    for (const obj of changes.deleted) this.dispatch('onDelete', (h) => h.onDelete?.(obj));
  }

  private onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: T): void {
    const obj = this.prepare(raw);
    if (type === 'DELETED') {
      this.store.remove(objectKey(obj));
      this.dispatch('onDelete', (h) => h.onDelete?.(obj));
      return;
    }
    const old = this.store.upsert(obj);
    if (old) this.dispatch('onUpdate', (h) => h.onUpdate?.(old, obj));
    else this.dispatch('onAdd', (h) => h.onAdd?.(obj, false));
  }

  private dispatch(what: string, fn: (h: EventHandler<T>) => void): void {
    for (const h of this.handlers) this.call(h, what, () => fn(h));
  }

  private call(_h: EventHandler<T>, what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error('event handler failed', { handler: what, err: err as Error });
    }
  }

  private scheduleResync(): void {
    const period = this.options.resyncPeriodMs ?? 0;
    if (!period || !this.ctrl || this.ctrl.signal.aborted) return;
    const delay = period * (0.95 + 0.1 * this.random());
    this.resyncTimer = this.clock.setTimeout(() => {
      if (this.ctrl?.signal.aborted) return;
      if (this.hasSynced()) {
        this.log.debug('resync', { objects: this.store.size });
        for (const obj of this.store.list()) this.dispatch('onUpdate', (h) => h.onUpdate?.(obj, obj));
      }
      this.scheduleResync();
    }, delay);
  }
}
