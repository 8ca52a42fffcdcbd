/**
 * An event recorder on events.k8s.io/v1 (controller-runtime v0.23's GetEventRecorder). Recording
 * never blocks the caller or throws: events are written in order in the background, failures logged.
 * - Identical events (same object, type, reason, action, note) within 6 minutes form a series: the
 *   first is created, repeats PATCH `series.count` and `series.lastObservedTime` instead of creating
 *   new objects (client-go's aggregation).
 * - A spam filter per object (client-go's: burst 25, then one per 5 minutes) drops floods.
 */
import { realClock, type Clock } from './clock.js';
import type { KubeClient } from './kube/client.js';
import { isNotFound } from './kube/errors.js';
import type { KubeObject } from './kube/types.js';
import { formatMicroTime } from './leader/election.js';
import { silentLogger, type Logger } from './log.js';

export const EVENT = { apiVersion: 'events.k8s.io/v1', kind: 'Event' } as const;

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** reportingController, e.g. `inference.olmpub.dev/operator`. */
  reportingController: string;
  /** reportingInstance, e.g. the Pod name or the leader-election identity. */
  reportingInstance: string;
  /** Series window. Default 6 min. */
  seriesWindowMs?: number;
  /** Spam filter burst per object. Default 25. */
  burst?: number;
  /** Spam filter refill interval. Default 5 min. */
  refillIntervalMs?: number;
  /** Events waiting to be written before new ones are dropped. Default 1000. */
  maxPending?: number;
  clock?: Clock;
  logger?: Logger;
}

interface SeriesEntry {
  name: string;
  namespace: string;
  count: number;
  lastObserved: number;
}

interface Bucket {
  tokens: number;
  last: number;
}

const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n - 3) + '...' : s);

export class EventRecorder {
  private readonly series = new Map<string, SeriesEntry>();
  private readonly buckets = new Map<string, Bucket>();
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly stats = { created: 0, patched: 0, dropped: 0, failed: 0 };

  constructor(
    private readonly client: KubeClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child('events');
  }

  /** Records an event about `regarding` (fire and forget). `action` is what was done, `reason` why (CamelCase). */
  event(regarding: KubeObject, type: EventType, reason: string, action: string, note: string, related?: KubeObject): void {
    const meta = regarding.metadata ?? {};
    const objKey = `${regarding.apiVersion}/${regarding.kind}/${meta.namespace ?? ''}/${meta.name ?? ''}/${meta.uid ?? ''}`;
    if (!this.allow(objKey)) {
      this.stats.dropped++;
      this.log.debug('event dropped by the spam filter', { reason, object: objKey });
      return;
    }
    if (this.pending >= (this.options.maxPending ?? 1000)) {
      this.stats.dropped++;
      return;
    }
    this.log.debug('event', { type, reason, action, note, object: `${meta.namespace ?? ''}/${meta.name ?? ''}` });
    const key = JSON.stringify([objKey, type, reason, action, note, related?.metadata?.uid ?? '']);
    this.pending++;
    this.chain = this.chain
      .then(() => this.write(key, regarding, type, reason, action, note, related))
      .catch((err) => {
        this.stats.failed++;
        this.log.warn('could not write event', { reason, err: err as Error });
      })
      .finally(() => {
        this.pending--;
      });
  }

  normal(regarding: KubeObject, reason: string, action: string, note: string): void {
    this.event(regarding, 'Normal', reason, action, note);
  }

  warning(regarding: KubeObject, reason: string, action: string, note: string): void {
    this.event(regarding, 'Warning', reason, action, note);
  }

  /** Resolves when every recorded event has been written (or failed). */
  flush(): Promise<void> {
    return this.chain;
  }

  private allow(objKey: string): boolean {
    const burst = this.options.burst ?? 25;
    const refill = this.options.refillIntervalMs ?? 300_000;
    const now = this.clock.now();
    const b = this.buckets.get(objKey) ?? { tokens: burst, last: now };
    b.tokens = Math.min(burst, b.tokens + (now - b.last) / refill);
    b.last = now;
    this.buckets.set(objKey, b);
    if (this.buckets.size > 10_000) for (const [k, v] of this.buckets) if (v.tokens >= burst) this.buckets.delete(k);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private async write(key: string, regarding: KubeObject, type: EventType, reason: string, action: string, note: string, related?: KubeObject): Promise<void> {
    const now = this.clock.now();
    const window = this.options.seriesWindowMs ?? 360_000;
    const existing = this.series.get(key);
    if (existing && now - existing.lastObserved <= window) {
      existing.count++;
      existing.lastObserved = now;
      try {
        await this.client.patch(EVENT, existing.name, existing.namespace, { series: { count: existing.count, lastObservedTime: formatMicroTime(now) } }, 'merge');
        this.stats.patched++;
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The event expired (events have a TTL): start a new one.
      }
    }
    const meta = regarding.metadata ?? {};
    const namespace = meta.namespace || 'default';
    const name = `${meta.name ?? 'event'}.${(BigInt(now) * 1_000_000n).toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
    const ref = (o: KubeObject) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name, namespace: o.metadata?.namespace, uid: o.metadata?.uid });
    await this.client.create({
      apiVersion: EVENT.apiVersion,
      kind: EVENT.kind,
      metadata: { name, namespace },
      eventTime: formatMicroTime(now),
      reportingController: cut(this.options.reportingController, 128),
      reportingInstance: cut(this.options.reportingInstance, 128),
      action: cut(action, 128),
      reason: cut(reason, 128),
      type,
      note: cut(note, 1024),
      regarding: ref(regarding),
      ...(related ? { related: ref(related) } : {}),
    } as KubeObject);
    this.stats.created++;
    this.series.set(key, { name, namespace, count: 1, lastObserved: now });
    if (this.series.size > 10_000) for (const [k, v] of this.series) if (now - v.lastObserved > window) this.series.delete(k);
  }
}
