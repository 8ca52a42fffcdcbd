/**
 * The work queue, with the semantics of controller-runtime's priority queue (the default since v0.23):
 * - an item is handed to at most one worker at a time; adding it while it is processed keeps it
 *   pending, and it is handed out again only after `done` (so re-adds during processing re-queue once);
 * - N adds of a pending item collapse into one; a re-add keeps the highest priority and the earliest
 *   ready time;
 * - among ready items, higher priority first, then FIFO by the time each became ready;
 * - `add({after})` delays (RequeueAfter); `add({rateLimited: true})` delays by the per-item limiter
 *   (5 ms · 2^failures up to 1000 s) or by `after` if that is shorter; `forget` resets the failures;
 * - `shutDown` stops intake and hands nothing more out; `drain` waits for in-flight items.
 * Time comes from an injected Clock, so tests need no sleeps.
 */
import { realClock, type Clock, type TimerHandle } from '../clock.js';
import type { RuntimeMetrics } from '../metrics/registry.js';
import { ItemExponentialFailureRateLimiter, type RateLimiter } from './ratelimiter.js';

/** controller-runtime's handler.LowPriority: initial-list and resync events. */
export const LOW_PRIORITY = -100;

export interface AddOptions {
  /** Delay in milliseconds before the item becomes ready. */
  after?: number;
  /** Delay by the rate limiter (min with `after` when both are given). */
  rateLimited?: boolean;
  /** Higher first. Default 0. */
  priority?: number;
}

export interface QueueItem<T> {
  item: T;
  priority: number;
}

export interface WorkQueueOptions<T> {
  /** Queue name (the `name` label); controller-runtime uses the controller name. */
  name: string;
  /** The `controller` label. Default: name. */
  controller?: string;
  rateLimiter?: RateLimiter<T>;
  clock?: Clock;
  metrics?: RuntimeMetrics;
}

interface Entry<T> {
  item: T;
  priority: number;
  readyAt: number;
  seq: number;
}

export class WorkQueue<T = string> {
  readonly name: string;
  readonly controller: string;
  readonly rateLimiter: RateLimiter<T>;
  private readonly clock: Clock;
  private readonly metrics?: RuntimeMetrics;
  private readonly pending = new Map<T, Entry<T>>();
  private readonly processing = new Map<T, number>();
  private waiters: ((v: QueueItem<T> | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private timer?: TimerHandle;
  private timerAt = Number.POSITIVE_INFINITY;
  private seq = 0;
  private shutdownFlag = false;
  private readonly unregister?: () => void;

  constructor(options: WorkQueueOptions<T>) {
    this.name = options.name;
    this.controller = options.controller ?? options.name;
    this.rateLimiter = options.rateLimiter ?? new ItemExponentialFailureRateLimiter<T>(5, 1_000_000);
    this.clock = options.clock ?? realClock;
    this.metrics = options.metrics;
    this.unregister = this.metrics?.registerQueue({
      name: this.name,
      controller: this.controller,
      unfinishedWorkSeconds: () => this.unfinishedWorkSeconds(),
      longestRunningProcessorSeconds: () => this.longestRunningProcessorSeconds(),
    });
  }

  private get labels() {
    return { name: this.name, controller: this.controller };
  }

  add(item: T, options: AddOptions = {}): void {
    if (this.shutdownFlag) return;
    let after = options.after ?? 0;
    if (options.rateLimited) {
      const d = this.rateLimiter.when(item);
      if (after <= 0 || d < after) after = d;
    }
    const now = this.clock.now();
    const readyAt = after > 0 ? now + after : now;
    if (after > 0) this.metrics?.workqueueRetries.inc(this.labels);
    const priority = options.priority ?? 0;
    const existing = this.pending.get(item);
    if (!existing) {
      this.pending.set(item, { item, priority, readyAt, seq: this.seq++ });
      this.metrics?.workqueueAdds.inc(this.labels);
      this.metrics?.workqueueDepth.inc({ ...this.labels, priority: String(priority) });
    } else {
      if (priority > existing.priority) {
        this.metrics?.workqueueDepth.dec({ ...this.labels, priority: String(existing.priority) });
        this.metrics?.workqueueDepth.inc({ ...this.labels, priority: String(priority) });
        existing.priority = priority;
      }
      if (readyAt < existing.readyAt) existing.readyAt = readyAt;
    }
    this.dispatch();
  }

  addAfter(item: T, afterMs: number, priority?: number): void {
    this.add(item, { after: afterMs, priority });
  }

  addRateLimited(item: T, priority?: number): void {
    this.add(item, { rateLimited: true, priority });
  }

  /** The next ready item not being processed, highest priority first; undefined once shut down. */
  get(): Promise<QueueItem<T> | undefined> {
    if (this.shutdownFlag) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.dispatch();
    });
  }

  /** Marks the item processed; a re-add that arrived meanwhile becomes eligible. */
  done(item: T): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    this.metrics?.workqueueWorkDuration.observe(this.labels, (this.clock.now() - started) / 1000);
    if (this.processing.size === 0) for (const w of this.drainWaiters.splice(0)) w();
    this.dispatch();
  }

  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /** Pending items (ready or waiting), excluding the ones being processed. */
  len(): number {
    return this.pending.size;
  }

  /** Items handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  isProcessing(item: T): boolean {
    return this.processing.has(item);
  }

  isPending(item: T): boolean {
    return this.pending.has(item);
  }

  /** Pending entry details (tests, debugging). */
  peek(item: T): { priority: number; readyAt: number } | undefined {
    const e = this.pending.get(item);
    return e && { priority: e.priority, readyAt: e.readyAt };
  }

  get shuttingDown(): boolean {
    return this.shutdownFlag;
  }

  /** Stops intake: further adds are ignored, waiting `get`s resolve undefined, pending items are dropped. */
  shutDown(): void {
    if (this.shutdownFlag) return;
    this.shutdownFlag = true;
    for (const e of this.pending.values()) this.metrics?.workqueueDepth.dec({ ...this.labels, priority: String(e.priority) });
    this.pending.clear();
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    for (const w of this.waiters.splice(0)) w(undefined);
    this.unregister?.();
  }

  /** Resolves true when no item is in flight, false if `timeoutMs` passes first. */
  drain(timeoutMs?: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const waiter = () => {
        if (timer) this.clock.clearTimeout(timer);
        resolve(true);
      };
      this.drainWaiters.push(waiter);
      if (timeoutMs !== undefined)
        timer = this.clock.setTimeout(() => {
          this.drainWaiters = this.drainWaiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs);
    });
  }

  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let sum = 0;
    for (const started of this.processing.values()) sum += (now - started) / 1000;
    return sum;
  }

  longestRunningProcessorSeconds(): number {
    const now = this.clock.now();
    let max = 0;
    for (const started of this.processing.values()) max = Math.max(max, (now - started) / 1000);
    return max;
  }

  private pickReady(now: number): Entry<T> | undefined {
    let best: Entry<T> | undefined;
    for (const e of this.pending.values()) {
      if (e.readyAt > now || this.processing.has(e.item)) continue;
      if (!best || e.priority > best.priority || (e.priority === best.priority && (e.readyAt < best.readyAt || (e.readyAt === best.readyAt && e.seq < best.seq)))) best = e;
    }
    return best;
  }

  private dispatch(): void {
    if (this.shutdownFlag) return;
    const now = this.clock.now();
    while (this.waiters.length > 0) {
      const e = this.pickReady(now);
      if (!e) break;
      this.pending.delete(e.item);
      this.processing.set(e.item, now);
      this.metrics?.workqueueDepth.dec({ ...this.labels, priority: String(e.priority) });
      this.metrics?.workqueueQueueDuration.observe(this.labels, Math.max(0, now - e.readyAt) / 1000);
      this.waiters.shift()!({ item: e.item, priority: e.priority });
    }
    this.armTimer(now);
  }

  private armTimer(now: number): void {
    let next = Number.POSITIVE_INFINITY;
    if (this.waiters.length > 0) for (const e of this.pending.values()) if (e.readyAt > now && e.readyAt < next) next = e.readyAt;
    if (next === this.timerAt) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.dispatch();
    }, next - now);
  }
}
