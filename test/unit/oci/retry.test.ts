import assert from 'node:assert/strict';
import { DEFAULT_RETRY_POLICY, backoff, isRetryableStatus, parseRetryAfter, retryDelay, schedule } from '../../../bundle/oci/retry.js';

const clock = (random: number, now = Date.parse('2026-01-01T00:00:00Z')) => ({ now: () => now, random: () => random });

describe('oci/retry: oras-go backoff schedule', () => {
  it('is 250 ms × 2^n without jitter, clamped to 200 ms–3 s', () => {
    assert.deepEqual(schedule(DEFAULT_RETRY_POLICY, () => 0.5), [250, 500, 1000, 2000, 3000]);
  });
  it('spreads ±10 %', () => {
    assert.deepEqual(schedule(DEFAULT_RETRY_POLICY, () => 0), [225, 450, 900, 1800, 3000]);
    assert.deepEqual(schedule(DEFAULT_RETRY_POLICY, () => 0.999999), [275, 550, 1100, 2200, 3000]);
  });
  it('floors at minWait', () => {
    assert.equal(backoff({ ...DEFAULT_RETRY_POLICY, base: 10 }, 0, () => 0.5), 200);
  });
  it('retries 5xx, 408 and 429, and network failures, up to 5 times', () => {
    for (const s of [500, 502, 503, 504, 408, 429]) assert.ok(isRetryableStatus(s), String(s));
    for (const s of [400, 401, 403, 404, 416]) assert.ok(!isRetryableStatus(s), String(s));
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 404 }, clock(0.5)), -1);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, {}, clock(0.5)), 250);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 4, { status: 500 }, clock(0.5)), 3000);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 5, { status: 500 }, clock(0.5)), -1);
  });
  it('honours Retry-After on 429 and 503 (seconds or HTTP date), capped and floored', () => {
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 429, retryAfter: '2' }, clock(0.5)), 2000);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 503, retryAfter: '7' }, clock(0.5)), 7000);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 429, retryAfter: '3600' }, clock(0.5)), 60_000);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 429, retryAfter: 'Thu, 01 Jan 2026 00:00:05 GMT' }, clock(0.5)), 5000);
    // Not on other statuses; invalid or past values fall back to the backoff.
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 0, { status: 500, retryAfter: '9' }, clock(0.5)), 250);
    assert.equal(retryDelay(DEFAULT_RETRY_POLICY, 1, { status: 429, retryAfter: 'soon' }, clock(0.5)), 500);
    assert.equal(parseRetryAfter('0', 0), undefined);
    assert.equal(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', 1000), undefined);
  });
});
