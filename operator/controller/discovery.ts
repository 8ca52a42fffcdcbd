/**
 * Optional APIs the reconciler adapts to: the Gateway API's HTTPRoute (traffic split by weight) and
 * DRA's ResourceClaimTemplate (resource.k8s.io/v1, Kubernetes 1.34+). Whether the cluster serves
 * them is asked through discovery and refreshed occasionally (a CRD installed after the operator
 * started is noticed within `refreshMs`); the informer of such a kind is created the first time the
 * API is seen, so the operator never waits for the cache of a kind the cluster does not have.
 */
import { realClock, type Clock } from '../runtime/clock.js';
import type { Informer } from '../runtime/cache/informer.js';
import type { KubeClient } from '../runtime/kube/client.js';
import { isNotFound } from '../runtime/kube/errors.js';
import type { KubeObject } from '../runtime/kube/types.js';
import { groupVersionPath } from '../runtime/kube/resources.js';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

interface Entry {
  served: boolean;
  checkedAt: number;
  pending?: Promise<boolean>;
}

/** Whether group/version/resource is served, asked through discovery and cached for `refreshMs`. */
export class ServedResources {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly refreshMs: number;

  constructor(
    private readonly client: KubeClient,
    options: { refreshMs?: number; clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.refreshMs = options.refreshMs ?? 5 * 60_000;
  }

  /**
   * True when discovery lists the resource. A failing discovery request keeps the last answer
   * (false if there is none) and is asked again on the next call.
   */
  async served(gvr: GroupVersionResource, signal?: AbortSignal): Promise<boolean> {
    const key = `${gvr.group}/${gvr.version}/${gvr.resource}`;
    const entry = this.entries.get(key);
    const now = this.clock.now();
    if (entry && !entry.pending && now - entry.checkedAt < this.refreshMs) return entry.served;
    if (entry?.pending) return entry.pending;
    const pending = this.ask(gvr, signal).then(
      (served) => {
        this.entries.set(key, { served, checkedAt: this.clock.now() });
        return served;
      },
      () => {
        const previous = entry?.served ?? false;
        this.entries.set(key, { served: previous, checkedAt: Number.NEGATIVE_INFINITY });
        return previous;
      },
    );
    this.entries.set(key, { served: entry?.served ?? false, checkedAt: entry?.checkedAt ?? Number.NEGATIVE_INFINITY, pending });
    return pending;
  }

  private async ask(gvr: GroupVersionResource, signal?: AbortSignal): Promise<boolean> {
    const path = groupVersionPath(gvr.group, gvr.version);
    try {
      const list = await this.client.requestJSON<{ resources?: { name: string }[] }>({ path, signal, timeoutMs: 10_000 });
      return (list.resources ?? []).some((r) => r.name === gvr.resource);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

/**
 * The informer of a kind that may not be served: created (by `make`) the first time discovery lists
 * it, then kept. `get` resolves to the synced informer, or undefined while the API is not served.
 */
export class OptionalInformer<T extends KubeObject> {
  private informer?: Informer<T>;

  constructor(
    private readonly discovery: ServedResources,
    readonly gvr: GroupVersionResource,
    private readonly make: () => Informer<T>,
    private readonly syncTimeoutMs = 60_000,
  ) {}

  /** An informer created elsewhere (the API was served at startup). */
  static of<T extends KubeObject>(discovery: ServedResources, gvr: GroupVersionResource, informer: Informer<T>): OptionalInformer<T> {
    const o = new OptionalInformer<T>(discovery, gvr, () => informer);
    o.informer = informer;
    return o;
  }

  /** Whether the API is served (discovery, cached for the refresh interval). */
  served(signal?: AbortSignal): Promise<boolean> {
    return this.discovery.served(this.gvr, signal);
  }

  /** The informer if it exists already (no discovery request). */
  get current(): Informer<T> | undefined {
    return this.informer;
  }

  async get(signal?: AbortSignal): Promise<Informer<T> | undefined> {
    if (!this.informer) {
      if (!(await this.discovery.served(this.gvr, signal))) return undefined;
      this.informer ??= this.make();
    }
    if (!this.informer.hasSynced()) {
      const ok = await this.informer.waitForSync({ timeoutMs: this.syncTimeoutMs, signal });
      if (!ok) throw new Error(`the ${this.gvr.resource}.${this.gvr.group} cache did not sync within ${this.syncTimeoutMs} ms`);
    }
    return this.informer;
  }
}
