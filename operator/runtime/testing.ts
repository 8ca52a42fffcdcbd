/**
 * Helpers for unit tests of code built on the runtime: a fake clock driven by the test, and an
 * in-memory Lease lock with optimistic concurrency for leader-election logic. Integration tests use
 * the real apiserver instead.
 */
import type { Clock, TimerHandle } from './clock.js';
import type { LeaderElectionRecord, ResourceLock } from './leader/election.js';

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Yields to pending promise callbacks and I/O callbacks a few times. */
export async function flushPromises(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers = new Map<object, FakeTimer>();

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.timers.set(handle, { at: this.t + Math.max(0, ms), seq: this.seq++, fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle);
  }

  /** Timers waiting to fire. */
  pending(): number {
    return this.timers.size;
  }

  /** Milliseconds until the next timer, or undefined. */
  nextTimerIn(): number | undefined {
    let next: number | undefined;
    for (const t of this.timers.values()) if (next === undefined || t.at < next) next = t.at;
    return next === undefined ? undefined : next - this.t;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise callbacks run after
   * each one (so async loops observe every step).
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await flushPromises();
    for (;;) {
      let next: [object, FakeTimer] | undefined;
      for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq))) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
      await flushPromises();
    }
    this.t = end;
    await flushPromises();
  }
}

/** One elector's view of an InMemoryLease; `failing` makes this replica's calls fail (a partition). */
export interface InMemoryLock extends ResourceLock {
  failing: boolean;
}

/** A Lease in memory with resourceVersion-based optimistic concurrency, shared by several electors. */
export class InMemoryLease {
  record?: LeaderElectionRecord;
  resourceVersion = 0;
  writes = 0;

  /** A lock view of this lease for one elector. */
  lock(): InMemoryLock {
    const lease = this;
    let seenVersion = -1;
    const lock: InMemoryLock = {
      failing: false,
      describe: () => 'memory/lease',
      async get(): Promise<LeaderElectionRecord | undefined> {
        if (lock.failing) throw new Error('apiserver unreachable');
        if (!lease.record) return undefined;
        seenVersion = lease.resourceVersion;
        return { ...lease.record };
      },
      async create(record: LeaderElectionRecord): Promise<void> {
        if (lock.failing) throw new Error('apiserver unreachable');
        if (lease.record) throw Object.assign(new Error('already exists'), { reason: 'AlreadyExists' });
        lease.record = { ...record };
        lease.resourceVersion++;
        lease.writes++;
        seenVersion = lease.resourceVersion;
      },
      async update(record: LeaderElectionRecord): Promise<void> {
        if (lock.failing) throw new Error('apiserver unreachable');
        if (!lease.record) throw new Error('lease not found');
        if (seenVersion !== lease.resourceVersion) throw Object.assign(new Error('conflict'), { reason: 'Conflict' });
        lease.record = { ...record };
        lease.resourceVersion++;
        lease.writes++;
        seenVersion = lease.resourceVersion;
      },
    };
    return lock;
  }
}

/** A clock that reads `offsetMs` ahead of (or behind) another, sharing its timers: clock skew between replicas. */
export class SkewedClock implements Clock {
  constructor(
    private readonly base: Clock,
    private readonly offsetMs: number,
  ) {}
  now(): number {
    return this.base.now() + this.offsetMs;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.base.setTimeout(fn, ms);
  }
  clearTimeout(handle: TimerHandle): void {
    this.base.clearTimeout(handle);
  }
}
