import assert from 'node:assert/strict';
import { LeaderElector, formatMicroTime, type StoppedReason } from '../../../operator/runtime/leader/election.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { FakeClock, InMemoryLease, SkewedClock, type InMemoryLock } from '../../../operator/runtime/testing.js';
import type { Clock } from '../../../operator/runtime/clock.js';

interface Candidate {
  elector: LeaderElector;
  lock: InMemoryLock;
  ctrl: AbortController;
  done: Promise<void>;
  stopped: StoppedReason[];
  started: number;
}

function candidate(lease: InMemoryLease, clock: Clock, identity: string, extra: { releaseOnCancel?: boolean; metrics?: RuntimeMetrics } = {}): Candidate {
  const lock = lease.lock();
  const ctrl = new AbortController();
  const c: Partial<Candidate> = { lock, ctrl, stopped: [], started: 0 };
  c.elector = new LeaderElector({
    lock,
    identity,
    name: 'test-lease',
    clock,
    random: () => 0.5,
    releaseOnCancel: extra.releaseOnCancel,
    metrics: extra.metrics,
    onStartedLeading: () => {
      c.started!++;
    },
    onStoppedLeading: (r) => c.stopped!.push(r),
  });
  c.done = c.elector.run(ctrl.signal);
  return c as Candidate;
}

/** Advances in small steps, asserting that there is never more than one leader. */
async function run(clock: FakeClock, ms: number, cands: Candidate[], step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    await clock.advance(step);
    const leaders = cands.filter((c) => c.elector.isLeader());
    assert.ok(leaders.length <= 1, `two leaders at +${t} ms: ${leaders.map((c) => c.elector.identity)}`);
  }
}

describe('runtime/leader: LeaderElector (client-go algorithm, injected clock)', () => {
  it('uses controller-runtime defaults and validates durations like client-go', () => {
    const lease = new InMemoryLease();
    const e = new LeaderElector({ lock: lease.lock(), name: 'x', onStartedLeading: () => {} });
    assert.equal(e.leaseDurationMs, 15_000);
    assert.equal(e.renewDeadlineMs, 10_000);
    assert.equal(e.retryPeriodMs, 2_000);
    assert.match(e.identity, /^.+_[0-9a-f-]{36}$/, 'hostname_uuid');
    assert.throws(() => new LeaderElector({ lock: lease.lock(), name: 'x', leaseDurationMs: 10_000, renewDeadlineMs: 10_000, onStartedLeading: () => {} }), /leaseDuration must be greater than renewDeadline/);
    assert.throws(() => new LeaderElector({ lock: lease.lock(), name: 'x', renewDeadlineMs: 2_400, retryPeriodMs: 2_000, onStartedLeading: () => {} }), /retryPeriod\*JitterFactor/);
  });

  it('formats MicroTime with six fractional digits', () => {
    assert.equal(formatMicroTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
  });

  it('creates the lease, renews every retry period keeping acquireTime, and reports the metric', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const metrics = new RuntimeMetrics({ defaultMetrics: false });
    const a = candidate(lease, clock, 'a', { metrics });
    await clock.advance(0);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.started, 1);
    assert.equal(lease.record?.holderIdentity, 'a');
    assert.equal(lease.record?.leaseDurationSeconds, 15);
    assert.equal(lease.record?.leaseTransitions, 0);
    const acquired = lease.record!.acquireTime;
    assert.match(await metrics.text(), /leader_election_master_status\{name="test-lease"\} 1/);
    const writes = lease.writes;
    await clock.advance(10_000);
    assert.equal(lease.writes - writes, 5, 'one renewal per 2 s retry period');
    assert.equal(lease.record?.acquireTime, acquired, 'renewals keep acquireTime');
    assert.equal(lease.record?.renewTime, formatMicroTime(clock.now()));
    a.ctrl.abort();
    await a.done;
    assert.deepEqual(a.stopped, ['cancelled']);
    assert.equal(lease.record?.holderIdentity, 'a', 'no release unless configured');
    assert.match(await metrics.text(), /leader_election_master_status\{name="test-lease"\} 0/);
  });

  it('a standby never leads while the holder renews', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const a = candidate(lease, clock, 'a');
    await clock.advance(0);
    const b = candidate(lease, clock, 'b');
    await run(clock, 60_000, [a, b]);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(b.elector.getLeader(), 'a');
    a.ctrl.abort();
    b.ctrl.abort();
    await Promise.all([a.done, b.done]);
  });

  it('the holder loses after renewDeadline and the standby takes over only after leaseDuration (never two leaders)', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const a = candidate(lease, clock, 'a');
    await clock.advance(0);
    const b = candidate(lease, clock, 'b');
    await run(clock, 5_000, [a, b]);
    const lastRenew = Date.parse(lease.record!.renewTime);
    a.lock.failing = true; // a is partitioned from the apiserver
    let lostAt: number | undefined;
    let tookOverAt: number | undefined;
    for (let t = 0; t < 30_000 && (lostAt === undefined || tookOverAt === undefined); t += 100) {
      await run(clock, 100, [a, b]);
      if (lostAt === undefined && !a.elector.isLeader()) lostAt = clock.now();
      if (tookOverAt === undefined && b.elector.isLeader()) tookOverAt = clock.now();
    }
    assert.ok(lostAt !== undefined && tookOverAt !== undefined);
    assert.deepEqual(a.stopped, ['lost']);
    assert.ok(lostAt - lastRenew <= 12_000 + 100, `a gave up ${lostAt - lastRenew} ms after its last renewal (retry 2 s + deadline 10 s)`);
    assert.ok(tookOverAt - lastRenew >= 15_000, `b took over ${tookOverAt - lastRenew} ms after the last renewal (lease 15 s)`);
    assert.ok(tookOverAt - lastRenew <= 15_000 + 2_000 * 2.2 + 100, 'within one jittered retry period after expiry');
    assert.ok(lostAt < tookOverAt);
    assert.equal(lease.record?.holderIdentity, 'b');
    assert.equal(lease.record?.leaseTransitions, 1, 'a takeover increments leaseTransitions');
    b.ctrl.abort();
    await Promise.all([a.done, b.done]);
  });

  it('judges expiry with the local clock, so a skewed holder clock does not matter', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    // a's clock is an hour behind: its renewTime values look long expired to b's clock.
    const a = candidate(lease, new SkewedClock(clock, -3_600_000), 'a');
    await clock.advance(0);
    const b = candidate(lease, clock, 'b');
    await run(clock, 30_000, [a, b]);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
    a.ctrl.abort();
    b.ctrl.abort();
    await Promise.all([a.done, b.done]);
  });

  it('releaseOnCancel writes an empty holder so the standby takes over at its next retry', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const a = candidate(lease, clock, 'a', { releaseOnCancel: true });
    await clock.advance(0);
    const b = candidate(lease, clock, 'b');
    await run(clock, 3_000, [a, b]);
    a.ctrl.abort();
    await a.done;
    assert.deepEqual(a.stopped, ['released']);
    assert.equal(lease.record?.holderIdentity, '');
    assert.equal(lease.record?.leaseDurationSeconds, 1);
    const releasedAt = clock.now();
    await run(clock, 5_000, [a, b]);
    assert.equal(b.elector.isLeader(), true);
    assert.ok(Date.parse(lease.record!.acquireTime) - releasedAt <= 2_000 * 2.2, 'well before the 15 s lease would have expired');
    b.ctrl.abort();
    await b.done;
  });

  it('release survives a renewal that landed unseen: it re-reads the lease and retries once', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const a = candidate(lease, clock, 'a', { releaseOnCancel: true });
    await run(clock, 3_000, [a]);
    assert.equal(a.elector.isLeader(), true);
    // Someone else's write (a renewal whose answer we never saw) moves the resourceVersion under us.
    lease.resourceVersion++;
    a.ctrl.abort();
    await a.done;
    assert.deepEqual(a.stopped, ['released']);
    assert.equal(lease.record?.holderIdentity, '');
  });

  it('a conflicting write loses the race (optimistic concurrency) and the loser does not lead', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const a = candidate(lease, clock, 'a');
    const b = candidate(lease, clock, 'b');
    await run(clock, 20_000, [a, b]);
    assert.equal([a, b].filter((c) => c.elector.isLeader()).length, 1);
    a.ctrl.abort();
    b.ctrl.abort();
    await Promise.all([a.done, b.done]);
  });

  it('tryAcquireOrRenew: the fast path falls back to the slow path when the cached lock is stale', async () => {
    const clock = new FakeClock();
    const lease = new InMemoryLease();
    const metrics = new RuntimeMetrics({ defaultMetrics: false });
    const lock = lease.lock();
    const e = new LeaderElector({ lock, identity: 'a', name: 'test-lease', clock, metrics, onStartedLeading: () => {} });
    assert.equal(await e.tryAcquireOrRenew(), true);
    lease.resourceVersion++; // someone touched the lease object (e.g. a label): the cached version is stale
    await clock.advance(1_000);
    assert.equal(await e.tryAcquireOrRenew(), true, 'renewed through GET + update');
    assert.match(await metrics.text(), /leader_election_slowpath_total\{name="test-lease"\} 1/);
  });
});
