/**
 * The per-item rate limiter (client-go util/workqueue). controller-runtime's priority queue (the default
 * since v0.23) uses only this one: 5 ms · 2^failures, capped at 1000 s.
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
