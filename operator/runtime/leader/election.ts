/**
 * Lease-based leader election, a port of client-go's tools/leaderelection with controller-runtime's
 * defaults (lease 15 s, renew deadline 10 s, retry period 2 s, jitter 1.2, identity hostname_uuid).
 *
 * - Expiry is judged by the local clock: when the record changes we note *our* time of observation
 *   (observedTime); another holder's lease is valid until observedTime + its leaseDurationSeconds.
 *   Clock skew between replicas therefore does not matter.
 * - Acquire: try every retryPeriod · [1, 2.2) (jitter 1.2) until it succeeds.
 * - Renew: every retryPeriod; a round that cannot renew within renewDeadline loses leadership
 *   (onStoppedLeading('lost'); the manager then exits the process, as controller-runtime does).
 * - Renewing keeps acquireTime and leaseTransitions; taking over increments leaseTransitions.
 * - A fast path updates the cached Lease directly while the lease is valid; a failure falls back to
 *   GET + update (leader_election_slowpath_total).
 * - releaseOnCancel: on a deliberate stop the leader writes an empty holder (leaseDurationSeconds 1),
 *   so a standby takes over at once.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { jitter, realClock, sleep, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics/registry.js';

/** The Lease spec fields of an election (coordination.k8s.io/v1). Times are MicroTime strings. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** Where the record lives. `update` must fail when the lock changed since this lock's last get/create/update. */
export interface ResourceLock {
  /** undefined when the lock does not exist yet. */
  get(signal?: AbortSignal): Promise<LeaderElectionRecord | undefined>;
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  describe(): string;
}

export const JITTER_FACTOR = 1.2;

/** A canonical serialisation of the record: a change means the holder wrote (renewed or changed). */
function recordRaw(r: LeaderElectionRecord): string {
  return JSON.stringify([r.holderIdentity, r.leaseDurationSeconds, r.acquireTime, r.renewTime, r.leaseTransitions]);
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** client-go's identity: `<hostname>_<uuid>`. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

export type StoppedReason = 'lost' | 'released' | 'cancelled';

export interface LeaderElectorOptions {
  lock: ResourceLock;
  /** Default hostname_uuid. */
  identity?: string;
  /** The `name` label of leader_election_master_status (the lease name). */
  name: string;
  /** Default 15 s. Stored in the Lease in whole seconds. */
  leaseDurationMs?: number;
  /** Default 10 s. */
  renewDeadlineMs?: number;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /** Write an empty holder when stopped deliberately. Default false (controller-runtime's default). */
  releaseOnCancel?: boolean;
  /** Called when this replica becomes leader; `signal` aborts when leadership ends. */
  onStartedLeading: (signal: AbortSignal) => void;
  /** Called when leadership ends: lost (renew deadline passed), released, or cancelled without release. */
  onStoppedLeading?: (reason: StoppedReason) => void;
  /** Called when a different holder is observed (including this replica). */
  onNewLeader?: (identity: string) => void;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
  metrics?: RuntimeMetrics;
}

export class LeaderElector {
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: Logger;
  private observed?: LeaderElectionRecord;
  private observedRaw = '';
  private observedTime = 0;
  private reportedLeader = '';
  private leading = false;
  private running = false;

  constructor(private readonly options: LeaderElectorOptions) {
    this.identity = options.identity ?? defaultIdentity();
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!this.identity) throw new Error('leader election: identity must not be empty');
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leader election: leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= JITTER_FACTOR * this.retryPeriodMs) throw new Error('leader election: renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.leaseDurationMs < 1000 || this.retryPeriodMs <= 0) throw new Error('leader election: leaseDuration must be at least 1 s and retryPeriod positive');
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = (options.logger ?? silentLogger).child('leader-election', { lock: options.lock.describe(), identity: this.identity });
  }

  /** True while this replica holds leadership (between onStartedLeading and onStoppedLeading). */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last observed ('' when none). */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /** The record last observed or written, and when (local clock) it was observed. */
  observation(): { record?: LeaderElectionRecord; observedTime: number } {
    return { record: this.observed && { ...this.observed }, observedTime: this.observedTime };
  }

  /** Campaigns, leads, and returns when leadership ends or `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('leader elector already running');
    this.running = true;
    this.setMetric(0);
    try {
      if (!(await this.acquire(signal))) return;
      this.leading = true;
      this.setMetric(1);
      const leaderCtrl = new AbortController();
      try {
        this.options.onStartedLeading(leaderCtrl.signal);
      } catch (err) {
        this.log.error('onStartedLeading failed', { err: err as Error });
      }
      const outcome = await this.renew(signal);
      this.leading = false;
      this.setMetric(0);
      leaderCtrl.abort();
      let reason: StoppedReason = outcome;
      if (outcome === 'cancelled' && this.options.releaseOnCancel) {
        if (await this.release()) reason = 'released';
      }
      if (reason === 'lost') this.log.error('leader election lost');
      else this.log.info('stopped leading', { reason });
      try {
        this.options.onStoppedLeading?.(reason);
      } catch (err) {
        this.log.error('onStoppedLeading failed', { err: err as Error });
      }
    } finally {
      this.running = false;
    }
  }

  private setMetric(v: number): void {
    this.options.metrics?.leaderElectionMasterStatus.set({ name: this.options.name }, v);
  }

  private holdsObserved(): boolean {
    return this.observed?.holderIdentity === this.identity;
  }

  private isLeaseValid(now: number): boolean {
    return this.observed !== undefined && this.observedTime + this.observed.leaseDurationSeconds * 1000 > now;
  }

  private setObserved(record: LeaderElectionRecord, at: number): void {
    this.observed = { ...record };
    this.observedRaw = recordRaw(record);
    this.observedTime = at;
  }

  private maybeReportTransition(): void {
    const holder = this.observed?.holderIdentity ?? '';
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    if (holder) this.log.info('new leader observed', { leader: holder });
    if (holder && this.options.onNewLeader) {
      try {
        this.options.onNewLeader(holder);
      } catch (err) {
        this.log.error('onNewLeader failed', { err: err as Error });
      }
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('attempting to acquire leader lease');
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok && !signal.aborted) {
        this.log.info('successfully acquired lease');
        return true;
      }
      if (!(await sleep(this.clock, jitter(this.retryPeriodMs, JITTER_FACTOR, this.random), signal))) return false;
    }
    return false;
  }

  private async renew(signal: AbortSignal): Promise<'lost' | 'cancelled'> {
    while (!signal.aborted) {
      const deadline = this.clock.now() + this.renewDeadlineMs;
      let ok = false;
      for (;;) {
        ok = await this.tryAcquireOrRenew(signal);
        if (ok || signal.aborted) break;
        const now = this.clock.now();
        if (now >= deadline) break;
        if (!(await sleep(this.clock, Math.min(this.retryPeriodMs, deadline - now), signal))) break;
        if (this.clock.now() >= deadline) break;
      }
      this.maybeReportTransition();
      if (signal.aborted) return 'cancelled';
      if (!ok) {
        this.log.error('failed to renew lease: timed out', { renewDeadlineMs: this.renewDeadlineMs });
        return 'lost';
      }
      if (!(await sleep(this.clock, this.retryPeriodMs, signal))) return 'cancelled';
    }
    return 'cancelled';
  }

  /** One attempt (client-go tryAcquireOrRenew). Exposed for tests. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const { lock } = this.options;
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.round(this.leaseDurationMs / 1000)),
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: 0,
    };

    // 1. Fast path: we hold a valid lease; update the cached lock directly.
    if (this.holdsObserved() && this.isLeaseValid(now)) {
      const fast = { ...record, acquireTime: this.observed!.acquireTime, leaseTransitions: this.observed!.leaseTransitions };
      try {
        await lock.update(fast, signal);
        this.setObserved(fast, this.clock.now());
        return true;
      } catch (err) {
        this.options.metrics?.leaderElectionSlowpath.inc({ name: this.options.name });
        this.log.debug('fast path renewal failed; taking the slow path', { err: err as Error });
      }
    }

    // 2. Get or create.
    let got: LeaderElectionRecord | undefined;
    try {
      got = await lock.get(signal);
    } catch (err) {
      this.log.warn('error retrieving resource lock', { err: err as Error });
      return false;
    }
    if (!got) {
      try {
        await lock.create(record, signal);
      } catch (err) {
        this.log.warn('error initially creating leader election record', { err: err as Error });
        return false;
      }
      this.setObserved(record, this.clock.now());
      return true;
    }

    // 3. Record obtained: note changes with our own clock; respect another holder's valid lease.
    if (recordRaw(got) !== this.observedRaw) this.setObserved(got, this.clock.now());
    if (got.holderIdentity && this.isLeaseValid(now) && !this.holdsObserved()) {
      this.log.trace('lock is held and has not yet expired', { holder: got.holderIdentity });
      return false;
    }

    // 4. Take over or renew.
    if (this.holdsObserved()) {
      record.acquireTime = got.acquireTime;
      record.leaseTransitions = got.leaseTransitions;
    } else {
      record.leaseTransitions = (got.leaseTransitions ?? 0) + 1;
    }
    try {
      await lock.update(record, signal);
    } catch (err) {
      this.log.warn('failed to update lock', { err: err as Error });
      return false;
    }
    this.setObserved(record, this.clock.now());
    return true;
  }

  /** Writes an empty holder if we hold the lease (client-go release). */
  async release(): Promise<boolean> {
    if (!this.holdsObserved()) return true;
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: this.observed!.leaseTransitions,
    };
    // A renewal cut short by the stop may still have landed, leaving our copy of the Lease stale: on a
    // failed update, read it again and retry once if it is still ours.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.lock.update(record);
        break;
      } catch (err) {
        const current = attempt === 0 ? await this.options.lock.get().catch(() => undefined) : undefined;
        if (current?.holderIdentity === this.identity) continue;
        if (attempt === 0 && current && current.holderIdentity !== this.identity) return true;
        this.log.error('failed to release lock', { err: err as Error });
        return false;
      }
    }
    this.setObserved(record, this.clock.now());
    return true;
  }
}
