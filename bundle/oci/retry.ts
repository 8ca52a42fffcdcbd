/**
 * Retries with backoff, as oras-go's `retry.DefaultPolicy` (v2.5): up to 5 retries, 250 ms × 2^n with
 * ±10 % jitter, clamped to 200 ms–3 s, on 408, 429, 5xx and timeouts or dropped connections;
 * `Retry-After` (seconds or an HTTP date) is honoured on 429 and 503, up to `maxRetryAfter`.
 * The clock is injectable so the schedule can be tested without waiting.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (oras-go: 5). */
  maxRetries: number;
  /** First backoff in ms (250). */
  base: number;
  /** Growth per attempt (2). */
  factor: number;
  /** ± fraction of random spread (0.1). */
  jitter: number;
  /** Floor of a wait in ms (200). */
  minWait: number;
  /** Ceiling of a computed backoff in ms (3000). */
  maxWait: number;
  /** Ceiling of a server-requested Retry-After wait in ms (60000). */
  maxRetryAfter: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 5,
  base: 250,
  factor: 2,
  jitter: 0.1,
  minWait: 200,
  maxWait: 3000,
  maxRetryAfter: 60_000,
});

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1) for jitter. */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** The computed backoff before retry number `attempt + 1` (attempt counts from 0), clamped to [minWait, maxWait]. */
export function backoff(policy: RetryPolicy, attempt: number, random: () => number): number {
  const temp = policy.base * Math.pow(policy.factor, attempt);
  const wait = temp * (1 - policy.jitter) + random() * 2 * policy.jitter * temp;
  return Math.round(Math.min(policy.maxWait, Math.max(policy.minWait, wait)));
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; undefined when absent, invalid, zero or past. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const secs = Number(trimmed);
    return secs > 0 ? secs * 1000 : undefined;
  }
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  const d = at - now;
  return d > 0 ? d : undefined;
}

/**
 * How long to wait before retrying, or -1 to give up. `status` is undefined for a network error or
 * timeout (which are retried); `retryAfter` is the response's Retry-After header.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  outcome: { status?: number; retryAfter?: string },
  clock: Pick<Clock, 'now' | 'random'>,
): number {
  if (attempt >= policy.maxRetries) return -1;
  if (outcome.status !== undefined && !isRetryableStatus(outcome.status)) return -1;
  if (outcome.status === 429 || outcome.status === 503) {
    const ra = parseRetryAfter(outcome.retryAfter, clock.now());
    if (ra !== undefined) return Math.max(policy.minWait, Math.min(policy.maxRetryAfter, ra));
  }
  return backoff(policy, attempt, clock.random);
}

/** The waits a policy would use for a run of failures (for documentation and tests). */
export function schedule(policy: RetryPolicy, random: () => number): number[] {
  return Array.from({ length: policy.maxRetries }, (_, i) => backoff(policy, i, random));
}
