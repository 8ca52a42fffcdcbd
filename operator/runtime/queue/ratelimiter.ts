/**
 * Per-item rate limiters (client-go util/workqueue). controller-runtime's priority queue (the default
 * since v0.23) uses only the per-item exponential limiter: 5 ms · 2^failures, capped at 1000 s.
 */

export interface RateLimiter<T> {
  /** How long to wait before the item's next attempt; counts a failure. */
  when(item: T): number;
  /** Resets the item's failures (after a success). */
  forget(item: T): void;
  numRequeues(item: T): number;
}

export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly baseDelayMs = 5,
    readonly maxDelayMs = 1_000_000,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const delay = this.baseDelayMs * 2 ** exp;
    return !Number.isFinite(delay) || delay > this.maxDelayMs ? this.maxDelayMs : delay;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** client-go's token bucket (qps, burst), shared by all items; optional. */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(_item: T): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The largest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];
  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }
  when(item: T): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(item)));
  }
  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }
  numRequeues(item: T): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(item)));
  }
}
