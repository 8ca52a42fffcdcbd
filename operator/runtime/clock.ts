/**
 * Time, injected. Every component of the runtime that waits or measures takes a `Clock`, so unit
 * tests drive time with `FakeClock` (operator/runtime/testing.ts) instead of sleeping.
 */

/** An opaque timer handle returned by `Clock.setTimeout`. */
export type TimerHandle = { readonly __timer: true } | object;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)) as unknown as TimerHandle,
  clearTimeout: (handle) => clearTimeout(handle as unknown as NodeJS.Timeout),
};

/**
 * Waits `ms` on `clock`. Resolves `true` after the delay, or `false` as soon as `signal` aborts
 * (never rejects, so loops can simply `if (!(await sleep(...))) return`).
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clock.clearTimeout(handle);
      resolve(false);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** client-go's `wait.Jitter`: `base + random * maxFactor * base` (maxFactor <= 0 means 1). */
export function jitter(baseMs: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor <= 0 ? 1 : maxFactor;
  return baseMs + random() * factor * baseMs;
}

/** A promise that settles when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
