/**
 * A controller (controller-runtime pkg/internal/controller): informer events become requests in a
 * work queue; N workers (MaxConcurrentReconciles, default 1) call the Reconciler; the result decides
 * what happens next, exactly as controller-runtime v0.23:
 * - throws TerminalError        → not requeued; errors_total, terminal_reconcile_errors_total
 * - throws anything else        → requeued rate-limited (5 ms … 1000 s per item); errors_total
 *   (a TypeError/ReferenceError/RangeError or a non-Error value counts as a panic as well:
 *   reconcile_panics_total; the JS analogue of a recovered Go panic)
 * - `{requeueAfter: ms}`        → backoff forgotten, requeued after the delay (RequeueAfter)
 * - `{requeue: true}`           → requeued rate-limited (deprecated in controller-runtime)
 * - otherwise                   → success, backoff forgotten
 * `result.priority` sets the priority of the requeue (default: the priority it was dequeued with).
 */
import { randomUUID } from 'node:crypto';
import { aborted, realClock, sleep, type Clock } from '../clock.js';
import type { Informer } from '../cache/informer.js';
import type { KubeObject } from '../kube/types.js';
import { silentLogger, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics/registry.js';
import type { RateLimiter } from '../queue/ratelimiter.js';
import { LOW_PRIORITY, WorkQueue, type AddOptions } from '../queue/workqueue.js';
import { enqueueRequestForObject, eventPriority, requestFromKey, requestKey, type EventMapper, type ObjectEvent, type Predicate, type Request } from './handler.js';

/** What a reconcile asks for next. */
export interface Result {
  /** Reconcile again after this many milliseconds (RequeueAfter). */
  requeueAfter?: number;
  /** Priority of the requeue (higher first). */
  priority?: number;
  /** Requeue with the rate limiter's backoff (deprecated in controller-runtime; prefer requeueAfter). */
  requeue?: boolean;
}

/** An error that retrying cannot fix (reconcile.TerminalError): counted, logged, never requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function isTerminalError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = (e as Error).cause, depth++) if (e instanceof TerminalError) return true;
  return false;
}

/** Programming errors: the JS analogue of a Go panic. */
export function isPanic(err: unknown): boolean {
  return !(err instanceof Error) || err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError;
}

export interface ReconcileContext {
  /** Aborted at the reconciliation timeout or when shutdown's grace period ends. */
  signal: AbortSignal;
  log: Logger;
  controller: string;
  /** The priority the request was dequeued with. */
  priority: number;
  /** Failures so far for this request (the rate limiter's count). */
  retries: number;
  reconcileID: string;
}

export interface Reconciler {
  reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> | Result | void;
}

export interface ControllerOptions {
  /** Default 1. */
  maxConcurrentReconciles?: number;
  /** Default: per-item exponential 5 ms … 1000 s. */
  rateLimiter?: RateLimiter<string>;
  /** Count panics and treat them as errors (default true); false rethrows them (crashing the process). */
  recoverPanic?: boolean;
  /** Aborts each reconcile's signal after this long (counted in reconcile_timeouts_total). Default: none. */
  reconciliationTimeoutMs?: number;
  /** How long start() waits for the watched informers to sync. Default 2 min. */
  cacheSyncTimeoutMs?: number;
  /** After the stop signal, in-flight reconciles get this long before their signal aborts. Default 30 s. */
  gracefulShutdownTimeoutMs?: number;
  /** Run only on the leader (default true). */
  needLeaderElection?: boolean;
  clock?: Clock;
  logger?: Logger;
  metrics?: RuntimeMetrics;
}

interface Watch {
  informer: Informer<KubeObject>;
  mapper: EventMapper<KubeObject>;
  predicates: Predicate<KubeObject>[];
}

export interface ControllerStats {
  reconciles: number;
  successes: number;
  errors: number;
  terminalErrors: number;
  panics: number;
  timeouts: number;
}

export class Controller {
  readonly queue: WorkQueue<string>;
  readonly needLeaderElection: boolean;
  readonly stats: ControllerStats = { reconciles: 0, successes: 0, errors: 0, terminalErrors: 0, panics: 0, timeouts: 0 };
  private readonly watches: Watch[] = [];
  private readonly maxConcurrent: number;
  private readonly recoverPanic: boolean;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics?: RuntimeMetrics;
  private readonly hardStop = new AbortController();
  private started = false;
  private active = 0;

  constructor(
    readonly name: string,
    private readonly reconciler: Reconciler,
    private readonly options: ControllerOptions = {},
  ) {
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) throw new Error(`controller name ${JSON.stringify(name)} must be a lower-case DNS-like name`);
    this.maxConcurrent = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.recoverPanic = options.recoverPanic ?? true;
    this.needLeaderElection = options.needLeaderElection ?? true;
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child('controller', { controller: name });
    this.metrics = options.metrics;
    this.queue = new WorkQueue<string>({ name, controller: name, rateLimiter: options.rateLimiter, clock: this.clock, metrics: this.metrics });
    this.metrics?.initController(name, this.maxConcurrent);
  }

  /**
   * Watches an informer: each event passes the predicates, is mapped to requests (default: the object
   * itself) and enqueued; initial-list and unchanged events get LOW_PRIORITY.
   */
  watch<T extends KubeObject>(informer: Informer<T>, mapper: EventMapper<T> = enqueueRequestForObject<T>(), ...predicates: Predicate<T>[]): this {
    if (this.started) throw new Error(`controller ${this.name}: watch() after start()`);
    this.watches.push({ informer, mapper, predicates } as unknown as Watch);
    return this;
  }

  /** Enqueues a request directly (e.g. from a webhook or a timer). */
  enqueue(req: Request, options?: AddOptions): void {
    this.queue.add(requestKey(req), options);
  }

  get activeWorkers(): number {
    return this.active;
  }

  /**
   * Registers the event handlers, waits for the informers to sync (starting any that are not yet
   * started), runs the workers, and returns after `signal` aborts and in-flight reconciles finished
   * (or the graceful shutdown timeout passed).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} already started`);
    this.started = true;
    const removers: (() => void)[] = [];
    try {
      for (const w of this.watches) {
        removers.push(w.informer.addEventHandler(this.handlerFor(w)));
        if (!w.informer.started) w.informer.start(signal);
      }
      const timeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
      for (const w of this.watches) {
        const ok = await w.informer.waitForSync({ timeoutMs, signal });
        if (signal.aborted) return;
        if (!ok) throw new Error(`controller ${this.name}: timed out after ${timeoutMs} ms waiting for the ${w.informer.type.kind} cache to sync`);
      }
      this.log.info('starting workers', { workerCount: this.maxConcurrent });
      const workers = Array.from({ length: this.maxConcurrent }, () => this.worker());
      await aborted(signal);
      this.log.info('shutdown signal received, waiting for in-flight reconciles to finish');
      this.queue.shutDown();
      const grace = this.options.gracefulShutdownTimeoutMs ?? 30_000;
      const graceCtrl = new AbortController();
      const finished = await Promise.race([Promise.all(workers).then(() => true), sleep(this.clock, grace, graceCtrl.signal).then(() => false)]);
      graceCtrl.abort();
      if (!finished) {
        this.log.warn('in-flight reconciles did not finish within the graceful shutdown timeout; aborting them', { timeoutMs: grace });
        this.hardStop.abort();
      }
      this.log.info('all workers finished');
    } finally {
      this.queue.shutDown();
      for (const r of removers) r();
    }
  }

  private handlerFor(w: Watch) {
    const handle = (event: ObjectEvent) => {
      for (const p of w.predicates) if (!p(event)) return;
      const priority = eventPriority(event, LOW_PRIORITY);
      for (const req of w.mapper(event)) if (req.name) this.queue.add(requestKey(req), { priority });
    };
    return {
      onAdd: (obj: KubeObject, isInInitialList: boolean) => handle({ type: 'create', obj, isInInitialList }),
      onUpdate: (oldObj: KubeObject, obj: KubeObject) => handle({ type: 'update', oldObj, obj }),
      onDelete: (obj: KubeObject) => handle({ type: 'delete', obj }),
    };
  }

  private async worker(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (!next) return;
      this.active++;
      this.metrics?.activeWorkers.inc({ controller: this.name });
      try {
        await this.reconcileHandler(next.item, next.priority);
      } finally {
        this.queue.done(next.item);
        this.active--;
        this.metrics?.activeWorkers.dec({ controller: this.name });
      }
    }
  }

  private async reconcileHandler(key: string, dequeuedPriority: number): Promise<void> {
    const req = requestFromKey(key);
    const reconcileID = randomUUID();
    const log = this.log.withFields({ namespace: req.namespace || undefined, name: req.name, reconcileID });
    const ctrl = new AbortController();
    const onHardStop = () => ctrl.abort(new Error('shutdown'));
    this.hardStop.signal.addEventListener('abort', onHardStop, { once: true });
    let timedOut = false;
    const timeoutMs = this.options.reconciliationTimeoutMs;
    const timer = timeoutMs
      ? this.clock.setTimeout(() => {
          timedOut = true;
          ctrl.abort(new Error(`reconcile timed out after ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
    const started = this.clock.now();
    let result: Result = {};
    let error: unknown;
    let failed = false;
    this.stats.reconciles++;
    try {
      result =
        (await this.reconciler.reconcile(req, {
          signal: ctrl.signal,
          log,
          controller: this.name,
          priority: dequeuedPriority,
          retries: this.queue.numRequeues(key),
          reconcileID,
        })) ?? {};
    } catch (err) {
      error = err;
      failed = true;
    } finally {
      if (timer) this.clock.clearTimeout(timer);
      this.hardStop.signal.removeEventListener('abort', onHardStop);
      this.metrics?.reconcileTime.observe({ controller: this.name }, (this.clock.now() - started) / 1000);
    }
    if (timedOut) {
      this.stats.timeouts++;
      this.metrics?.reconcileTimeouts.inc({ controller: this.name });
    }
    const priority = result.priority ?? dequeuedPriority;
    const labels = (result: string) => ({ controller: this.name, result });
    if (failed) {
      if (isPanic(error)) {
        this.stats.panics++;
        this.metrics?.reconcilePanics.inc({ controller: this.name });
        log.error('observed a panic in reconciler', { err: error instanceof Error ? error : new Error(String(error)), stack: error instanceof Error ? error.stack : undefined });
        if (!this.recoverPanic) throw error;
      }
      this.stats.errors++;
      if (isTerminalError(error)) {
        this.stats.terminalErrors++;
        this.metrics?.terminalReconcileErrors.inc({ controller: this.name });
        this.queue.forget(key);
      } else {
        this.queue.add(key, { rateLimited: true, priority });
      }
      this.metrics?.reconcileErrors.inc({ controller: this.name });
      this.metrics?.reconcileTotal.inc(labels('error'));
      log.error('Reconciler error', { err: error instanceof Error ? error : new Error(String(error)), terminal: isTerminalError(error) || undefined });
      return;
    }
    if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
      this.queue.forget(key);
      this.queue.add(key, { after: result.requeueAfter, priority });
      this.metrics?.reconcileTotal.inc(labels('requeue_after'));
    } else if (result.requeue) {
      this.queue.add(key, { rateLimited: true, priority });
      this.metrics?.reconcileTotal.inc(labels('requeue'));
    } else {
      this.queue.forget(key);
      this.stats.successes++;
      this.metrics?.reconcileTotal.inc(labels('success'));
    }
  }
}
