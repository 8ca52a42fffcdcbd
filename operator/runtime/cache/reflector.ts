/**
 * The reflector: keeps a local view of one kind in one scope (a namespace, or all) in step with the
 * apiserver. List (paginated with limit/continue) then watch from the list's resourceVersion with
 * bookmarks; a 410 Gone (watch ERROR event or HTTP 410, also an expired continue token) relists; every
 * other error is logged, counted and retried with exponential backoff, forever: it never stops silently.
 * Each watch asks the server to end it after timeoutSeconds (5–10 min, jittered, as client-go), and an
 * inactivity watchdog abandons a connection that stays silent past that (a half-open TCP connection).
 */
import { Backoff, type BackoffOptions } from '../backoff.js';
import { realClock, sleep, type Clock } from '../clock.js';
import { isGone, isTooManyRequests } from '../kube/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject, TypeRef } from '../kube/types.js';
import { silentLogger, type Logger } from '../log.js';

/** The connection was refused (apiserver restarting): retry the watch rather than relisting. */
export function isConnectionRefused(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
  return false;
}

export interface ReflectorSink<T extends KubeObject> {
  /** A complete list of the scope: the first one (`initial`), or a relist. */
  onList(items: T[], initial: boolean): void;
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

export interface ReflectorOptions {
  client: KubeClient;
  type: TypeRef;
  /** Undefined: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of lists. Default 500. */
  pageSize?: number;
  /** Watches last between this and twice this (server-side timeoutSeconds). Default 300 s. */
  minWatchTimeoutSeconds?: number;
  /** The watchdog fires when nothing arrived for timeoutSeconds plus this. Default 60 s. */
  watchInactivityGraceMs?: number;
  /** Error backoff. Default client-go's: 800 ms doubling to 30 s, jitter 1.0, reset after 2 min. */
  backoff?: BackoffOptions;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

export interface ReflectorStats {
  lists: number;
  relists: number;
  watches: number;
  /** Watch or list failures (each followed by a backoff). */
  errors: number;
  /** 410 Gone answers (each followed by a relist). */
  gone: number;
  events: number;
  bookmarks: number;
}

export class Reflector<T extends KubeObject = KubeObject> {
  readonly stats: ReflectorStats = { lists: 0, relists: 0, watches: 0, errors: 0, gone: 0, events: 0, bookmarks: 0 };
  lastError?: Error;
  private rv = '';
  private synced = false;
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly pageSize: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly graceMs: number;

  constructor(
    private readonly options: ReflectorOptions,
    private readonly sink: ReflectorSink<T>,
  ) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ clock: this.clock, random: this.random, ...options.backoff });
    this.pageSize = options.pageSize ?? 500;
    this.minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? 300;
    this.graceMs = options.watchInactivityGraceMs ?? 60_000;
    this.log = (options.logger ?? silentLogger).withFields({
      kind: options.type.kind,
      apiVersion: options.type.apiVersion,
      ...(options.namespace ? { namespace: options.namespace } : {}),
    });
  }

  /** The resourceVersion the next watch starts from ('' before the first list or after a 410). */
  get resourceVersion(): string {
    return this.rv;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Runs until `signal` aborts. Never rejects. As client-go: a watch that ends cleanly (its timeout)
   * is re-opened from the last resourceVersion; a watch refused (connection refused, 429) is retried
   * after backoff from the same resourceVersion; 410 Gone relists at once; any other watch failure
   * (reset, watchdog, server error) relists after backoff; a failed list is retried after backoff.
   */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      let listing = needList;
      try {
        if (needList) {
          await this.list(signal);
          needList = false;
          listing = false;
        }
        const started = this.clock.now();
        const eventsBefore = this.stats.events + this.stats.bookmarks;
        await this.watch(signal);
        if (!signal.aborted && this.clock.now() - started < 1000 && this.stats.events + this.stats.bookmarks === eventsBefore) {
          // A watch that ends at once without a single event: do not spin.
          this.log.debug('watch ended immediately; backing off');
          if (!(await sleep(this.clock, this.backoff.next(), signal))) return;
        }
      } catch (err) {
        if (signal.aborted) return;
        this.lastError = err as Error;
        if (isGone(err)) {
          this.stats.gone++;
          this.log.info('resourceVersion too old (410 Gone); relisting', { resourceVersion: this.rv });
          this.rv = '';
          needList = true;
          continue;
        }
        this.stats.errors++;
        if (!listing && !isConnectionRefused(err) && !isTooManyRequests(err)) needList = true;
        const delay = this.backoff.next();
        this.log.warn(listing ? 'list failed; retrying' : needList ? 'watch failed; relisting' : 'watch refused; retrying', { err: err as Error, retryInMs: Math.round(delay) });
        if (!(await sleep(this.clock, delay, signal))) return;
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const { client, type, namespace, labelSelector, fieldSelector } = this.options;
    const items: T[] = [];
    let token: string | undefined;
    let rv = '';
    let limit: number | undefined = this.pageSize;
    for (;;) {
      let page;
      try {
        page = await client.list<T>(type, { namespace, labelSelector, fieldSelector, limit, continue: token, signal });
      } catch (err) {
        if (token && isGone(err)) {
          // The continue token expired mid-list: start over with one unpaginated list.
          this.log.info('continue token expired; listing without pagination');
          items.length = 0;
          token = undefined;
          limit = undefined;
          continue;
        }
        throw err;
      }
      items.push(...page.items);
      rv = page.metadata.resourceVersion ?? '';
      token = page.metadata.continue || undefined;
      if (!token) break;
    }
    if (signal.aborted) return;
    const initial = !this.synced;
    this.stats.lists++;
    if (!initial) this.stats.relists++;
    this.sink.onList(items, initial);
    this.rv = rv;
    this.synced = true;
    this.backoff.reset();
    this.log.debug('listed', { items: items.length, resourceVersion: rv, initial });
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const { client, type, namespace, labelSelector, fieldSelector } = this.options;
    const timeoutSeconds = Math.floor(this.minWatchTimeoutSeconds * (1 + this.random()));
    this.stats.watches++;
    await client.watch<T>(
      type,
      {
        namespace,
        labelSelector,
        fieldSelector,
        resourceVersion: this.rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        inactivityTimeoutMs: timeoutSeconds * 1000 + this.graceMs,
        signal,
      },
      (event) => {
        const rv = event.object?.metadata?.resourceVersion;
        if (event.type === 'BOOKMARK') {
          this.stats.bookmarks++;
        } else {
          this.stats.events++;
          this.sink.onEvent(event.type as 'ADDED' | 'MODIFIED' | 'DELETED', event.object);
        }
        if (rv) this.rv = rv;
        this.backoff.reset();
      },
    );
  }
}
