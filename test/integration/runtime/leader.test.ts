import assert from 'node:assert/strict';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { LeaderElector, type LeaderElectionRecord, type ResourceLock, type StoppedReason } from '../../../operator/runtime/leader/election.js';
import { LEASE, LeaseLock, type Lease } from '../../../operator/runtime/leader/leaselock.js';
import { eventually } from '../../support/env.js';
import { client, createNamespace, deleteNamespace } from './support.js';

/** A LeaseLock whose calls can be made to fail: this replica is cut off from the apiserver. */
class PartitionableLock implements ResourceLock {
  partitioned = false;
  constructor(private readonly inner: LeaseLock) {}
  private check() {
    if (this.partitioned) throw new Error('network partition');
  }
  describe() {
    return this.inner.describe();
  }
  async get(signal?: AbortSignal) {
    this.check();
    return this.inner.get(signal);
  }
  async create(r: LeaderElectionRecord, signal?: AbortSignal) {
    this.check();
    return this.inner.create(r, signal);
  }
  async update(r: LeaderElectionRecord, signal?: AbortSignal) {
    this.check();
    return this.inner.update(r, signal);
  }
}

// Short but valid timings (lease > renewDeadline > 1.2 × retry) so the test takes seconds, not minutes.
const TIMING = { leaseDurationMs: 4_000, renewDeadlineMs: 2_500, retryPeriodMs: 500 };

interface Replica {
  elector: LeaderElector;
  lock: PartitionableLock;
  ctrl: AbortController;
  done: Promise<void>;
  stopped: StoppedReason[];
}

describe('runtime/leader: Lease election between two electors on the real apiserver', function () {
  this.timeout(120_000);
  let c: KubeClient;
  let ns: string;
  let samples: ReturnType<typeof setInterval> | undefined;
  let overlap = 0;

  before(async () => {
    c = client();
    ns = await createNamespace(c, 'rt-leader');
  });
  after(async () => {
    await deleteNamespace(c, ns);
    await c.close();
  });
  afterEach(() => {
    if (samples) clearInterval(samples);
  });

  function replica(name: string, identity: string, releaseOnCancel = false): Replica {
    const lock = new PartitionableLock(new LeaseLock(c, ns, name, 2_000));
    const ctrl = new AbortController();
    const r: Partial<Replica> = { lock, ctrl, stopped: [] };
    r.elector = new LeaderElector({ lock, identity, name, ...TIMING, releaseOnCancel, onStartedLeading: () => {}, onStoppedLeading: (x) => r.stopped!.push(x) });
    r.done = r.elector.run(ctrl.signal);
    return r as Replica;
  }

  /** Samples both replicas every 20 ms: there must never be two leaders. */
  function watchOverlap(a: Replica, b: Replica) {
    overlap = 0;
    samples = setInterval(() => {
      if (a.elector.isLeader() && b.elector.isLeader()) overlap++;
    }, 20);
  }

  it('one leader at a time; the standby takes over after the holder stops renewing, not before the lease expires', async () => {
    const a = replica('takeover', 'replica-a');
    await eventually('a leads', async () => a.elector.isLeader());
    const b = replica('takeover', 'replica-b');
    watchOverlap(a, b);
    await eventually('b observed a', async () => b.elector.getLeader() === 'replica-a');
    const lease0 = await c.get<Lease>(LEASE, 'takeover', ns);
    assert.equal(lease0.spec?.holderIdentity, 'replica-a');
    assert.equal(lease0.spec?.leaseDurationSeconds, 4);
    assert.match(lease0.spec!.renewTime!, /\.\d{6}Z$/, 'MicroTime');

    a.lock.partitioned = true; // a can no longer renew (nor learn that it lost)
    const cutAt = Date.now();
    await eventually('a gives up', async () => !a.elector.isLeader(), 20_000, 20);
    const aGaveUp = Date.now();
    await eventually('b takes over', async () => b.elector.isLeader(), 20_000, 20);
    const bTookOver = Date.now();
    assert.deepEqual(a.stopped, ['lost']);
    assert.ok(aGaveUp <= bTookOver, 'the old leader stopped before the new one started');
    assert.ok(bTookOver - cutAt >= TIMING.leaseDurationMs - TIMING.retryPeriodMs, `b waited for the lease to expire (${bTookOver - cutAt} ms)`);
    const lease1 = await c.get<Lease>(LEASE, 'takeover', ns);
    assert.equal(lease1.spec?.holderIdentity, 'replica-b');
    assert.equal(lease1.spec?.leaseTransitions, (lease0.spec?.leaseTransitions ?? 0) + 1);
    assert.equal(overlap, 0, 'never two leaders');

    b.ctrl.abort();
    await Promise.all([a.done, b.done]);
  });

  it('never two leaders while both campaign from the start, and a release on cancel hands over at once', async () => {
    const a = replica('release', 'replica-a', true);
    const b = replica('release', 'replica-b', true);
    watchOverlap(a, b);
    await eventually('someone leads', async () => a.elector.isLeader() || b.elector.isLeader());
    // let them contend for a few renew periods
    const until = Date.now() + 3 * TIMING.retryPeriodMs;
    await eventually('a few renewals', async () => Date.now() > until, 10_000, 50);
    const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a];
    assert.equal(standby.elector.isLeader(), false);
    leader.ctrl.abort();
    await leader.done;
    assert.deepEqual(leader.stopped, ['released']);
    const released = await c.get<Lease>(LEASE, 'release', ns);
    assert.equal(released.spec?.holderIdentity ?? '', '');
    const t0 = Date.now();
    await eventually('the standby takes over', async () => standby.elector.isLeader(), 20_000, 20);
    assert.ok(Date.now() - t0 < TIMING.leaseDurationMs, 'without waiting for the lease to expire');
    assert.equal(overlap, 0);
    standby.ctrl.abort();
    await standby.done;
  });
});
