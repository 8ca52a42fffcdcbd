/**
 * Exponential backoff with jitter and reset after a quiet period, the shape of client-go's
 * reflector backoff manager (800 ms initial, factor 2, cap 30 s, jitter 1.0, reset after 2 min).
 */
import { realClock, type Clock } from './clock.js';

export interface BackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Largest delay before jitter. Default 30 s. */
  maxMs?: number;
  /** Growth per failure. Default 2. */
  factor?: number;
  /** Up to this fraction of the delay is added at random. Default 1.0. */
  jitter?: number;
  /** A failure after this long without one starts over at `initialMs`. Default 2 min. */
  resetAfterMs?: number;
  clock?: Clock;
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitterFactor: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private current: number;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitterFactor = options.jitter ?? 1.0;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.current = this.initialMs;
  }

  /** The delay to wait before the next attempt; grows with every call. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastAt > this.resetAfterMs) this.current = this.initialMs;
    this.lastAt = now;
    const base = this.current;
    this.current = Math.min(this.current * this.factor, this.maxMs);
    return base + this.random() * this.jitterFactor * base;
  }

  /** Starts over at the initial delay (after a success). */
  reset(): void {
    this.current = this.initialMs;
    this.lastAt = Number.NEGATIVE_INFINITY;
  }
}
