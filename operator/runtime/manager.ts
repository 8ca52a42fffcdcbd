/**
 * The manager (controller-runtime pkg/manager) wires the runtime together:
 *   1. the probe server (:8081) and the metrics server (:8443, HTTPS, TokenReview/SAR) start at once;
 *   2. the webhook server (:9443) starts if any webhook is registered;
 *   3. the informers start on every replica, and /readyz passes once they synced (standbys are ready
 *      too, so they serve webhooks);
 *   4. with leader election, controllers start only on the leader; without it, at once.
 * Shutdown on `signal`: controllers stop taking work and in-flight reconciles get
 * gracefulShutdownTimeoutMs; then the lease is released (if configured), informers and servers stop.
 * Losing leadership calls `onLeadershipLost` (default: log and exit 1, skipping graceful shutdown,
 * as controller-runtime's "leader election lost").
 */
import { aborted, realClock, sleep, type Clock } from './clock.js';
import { Informer, type InformerOptions } from './cache/informer.js';
import { Controller, type ControllerOptions, type Reconciler } from './controller/controller.js';
import { EventRecorder } from './events.js';
import { HealthProbes, ping, type Checker } from './healthz.js';
import { KubeClient } from './kube/client.js';
import { inClusterNamespace, parseWatchNamespaces, type LoadKubeConfigOptions } from './kube/config.js';
import type { KubeObject, TypeRef } from './kube/types.js';
import { defaultIdentity, LeaderElector } from './leader/election.js';
import { LeaseLock } from './leader/leaselock.js';
import { Logger } from './log.js';
import { RuntimeMetrics } from './metrics/registry.js';
import { MetricsServer, type Handler } from './metrics/server.js';
import { WebhookServer, type WebhookServerOptions } from './webhook/server.js';

/** Something the manager runs: until `signal` aborts. */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** Run only on the leader. Default true. */
  needLeaderElection?: boolean;
}

export interface ManagerOptions {
  /** Default: a client from the kubeconfig (explicit, KUBECONFIG, in-cluster, ~/.kube/config). */
  client?: KubeClient;
  kubeconfig?: LoadKubeConfigOptions;
  /** Namespaces the informers watch; empty = all. Default: WATCH_NAMESPACE (comma list). */
  namespaces?: string[];
  /** Cache resync period. Default 10 h (±5 %). */
  syncPeriodMs?: number;
  /** Default 2 min. */
  cacheSyncTimeoutMs?: number;

  /** Default false. */
  leaderElection?: boolean;
  /** Lease name; required with leader election. */
  leaderElectionID?: string;
  /** Default: POD_NAMESPACE, the in-cluster namespace, or the kubeconfig context's namespace. */
  leaderElectionNamespace?: string;
  /** Default 15 s. */
  leaseDurationMs?: number;
  /** Default 10 s. */
  renewDeadlineMs?: number;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /** Release the lease on a deliberate shutdown. Default false. */
  leaderElectionReleaseOnCancel?: boolean;
  /** Default hostname_uuid. */
  identity?: string;
  /** Called when leadership is lost. Default: log and process.exit(1). */
  onLeadershipLost?: () => void;

  /** Default `:8081`; `0` disables. */
  healthProbeBindAddress?: string;
  /** Default `:8443`; `0` disables. */
  metricsBindAddress?: string;
  /** Default true (HTTPS). */
  metricsSecure?: boolean;
  /** TokenReview + SubjectAccessReview. Default true. */
  metricsAuth?: boolean;
  /** Certificate directory of the metrics server; default: self-signed in memory. */
  metricsCertDir?: string;
  metricsExtraHandlers?: Record<string, Handler>;
  /** Webhook server options (bindAddress default `:9443`, certDir default `<tmp>/k8s-webhook-server/serving-certs`). */
  webhook?: WebhookServerOptions;

  /** Default 30 s. */
  gracefulShutdownTimeoutMs?: number;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
}

export class Manager {
  readonly client: KubeClient;
  readonly metrics: RuntimeMetrics;
  readonly logger: Logger;
  readonly probes: HealthProbes;
  readonly metricsServer: MetricsServer;
  readonly webhookServer: WebhookServer;
  readonly namespaces: string[];
  readonly identity: string;
  elector?: LeaderElector;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly runnables: Runnable[] = [];
  private readonly recorders: EventRecorder[] = [];
  private readonly clock: Clock;
  private electedResolve!: () => void;
  private readonly electedPromise: Promise<void>;
  private leading = false;
  private started = false;
  private readonly removeResponseListener: () => void;

  constructor(private readonly options: ManagerOptions = {}) {
    this.logger = options.logger ?? new Logger();
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.clock = options.clock ?? realClock;
    this.client = options.client ?? new KubeClient({ load: options.kubeconfig });
    this.removeResponseListener = this.client.addResponseListener(this.metrics.onRestResponse);
    this.namespaces = options.namespaces ?? parseWatchNamespaces(process.env.WATCH_NAMESPACE);
    this.identity = options.identity ?? defaultIdentity();
    this.probes = new HealthProbes({ bindAddress: options.healthProbeBindAddress ?? ':8081', logger: this.logger });
    this.metricsServer = new MetricsServer(this.metrics, {
      bindAddress: options.metricsBindAddress ?? ':8443',
      secure: options.metricsSecure ?? true,
      auth: options.metricsAuth ?? true,
      client: this.client,
      certDir: options.metricsCertDir,
      extraHandlers: options.metricsExtraHandlers,
      logger: this.logger,
    });
    this.webhookServer = new WebhookServer({ ...options.webhook, logger: this.logger, metrics: this.metrics });
    this.electedPromise = new Promise((resolve) => (this.electedResolve = resolve));
    if (options.leaderElection && !options.leaderElectionID) throw new Error('leaderElectionID is required with leader election');
  }

  /**
   * The shared informer for a kind (and selector): one watch per kind however many controllers use
   * it. Defaults: the manager's namespaces and resync period.
   */
  informerFor<T extends KubeObject = KubeObject>(type: TypeRef, options: Omit<InformerOptions<T>, 'clock' | 'logger'> = {}): Informer<T> {
    const key = JSON.stringify([type.apiVersion, type.kind, options.labelSelector ?? '', options.fieldSelector ?? '', options.namespaces ?? this.namespaces]);
    let inf = this.informers.get(key) as Informer<T> | undefined;
    if (!inf) {
      inf = new Informer<T>(this.client, type, {
        namespaces: this.namespaces,
        resyncPeriodMs: this.options.syncPeriodMs ?? 10 * 3600 * 1000,
        ...options,
        clock: this.clock,
        logger: this.logger,
      });
      this.informers.set(key, inf as unknown as Informer<KubeObject>);
      if (this.started) inf.start();
    } else if (options.indexers) {
      for (const [name, fn] of Object.entries(options.indexers)) if (!inf.store.indexNames().includes(name)) inf.store.addIndexer(name, fn);
    }
    return inf;
  }

  /** A controller registered with the manager (metrics, logger and graceful shutdown wired in). */
  newController(name: string, reconciler: Reconciler, options: Omit<ControllerOptions, 'metrics' | 'logger' | 'clock'> = {}): Controller {
    const c = new Controller(name, reconciler, {
      cacheSyncTimeoutMs: this.options.cacheSyncTimeoutMs,
      gracefulShutdownTimeoutMs: this.options.gracefulShutdownTimeoutMs,
      ...options,
      metrics: this.metrics,
      logger: this.logger,
      clock: this.clock,
    });
    this.add(c);
    return c;
  }

  add(runnable: Runnable | Controller): void {
    if (this.started) throw new Error('runnables must be added before start()');
    if (runnable instanceof Controller && this.runnables.some((r) => r instanceof Controller && r.name === runnable.name)) {
      throw new Error(`a controller named ${runnable.name} already exists (names label metrics and must be unique)`);
    }
    this.runnables.push(runnable);
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.probes.addHealthzCheck(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.probes.addReadyzCheck(name, check);
  }

  /** An events.k8s.io/v1 recorder reporting as `name` (e.g. `inference.olmpub.dev/operator`). */
  eventRecorder(name: string): EventRecorder {
    const recorder = new EventRecorder(this.client, { reportingController: name, reportingInstance: this.identity, logger: this.logger, clock: this.clock });
    this.recorders.push(recorder);
    return recorder;
  }

  /** Resolves when this replica leads (at once without leader election). */
  elected(): Promise<void> {
    return this.electedPromise;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** True once every informer synced. */
  cachesSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /**
   * Runs until `signal` aborts (resolves after a graceful shutdown) or something fatal happens
   * (rejects: a cache that never syncs, a server that cannot bind, leadership lost with a
   * non-exiting onLeadershipLost).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    const log = this.logger.child('manager');
    const fatal = new AbortController();
    let fatalError: Error | undefined;
    const fail = (err: Error) => {
      if (fatalError) return;
      fatalError = err;
      fatal.abort(err);
    };
    const stop = AbortSignal.any([signal, fatal.signal]);
    const grace = this.options.gracefulShutdownTimeoutMs ?? 30_000;

    if (!this.probes.healthz.size) this.probes.addHealthzCheck('ping', ping);
    this.probes.addReadyzCheck('informers', () => {
      if (!this.cachesSynced()) throw new Error('informers not synced');
    });
    const informersCtrl = new AbortController();
    const leaderRunCtrl = new AbortController();
    const electionCtrl = new AbortController();
    const running: Promise<void>[] = [];
    let electorDone: Promise<void> | undefined;
    try {
      await this.probes.start();
      await this.metricsServer.start();
      if (this.webhookServer.paths.length) {
        await this.webhookServer.start();
        this.probes.addReadyzCheck('webhook', this.webhookServer.startedChecker());
      }

      for (const inf of this.informers.values()) inf.start(informersCtrl.signal);
      const timeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
      for (const inf of this.informers.values()) {
        const ok = await inf.waitForSync({ timeoutMs, signal: stop });
        if (stop.aborted) break;
        if (!ok) throw new Error(`timed out after ${timeoutMs} ms waiting for the ${inf.type.kind} cache to sync`);
      }

      const runAll = (list: Runnable[], s: AbortSignal) => {
        for (const r of list)
          running.push(
            r.start(s).catch((err: Error) => {
              log.error('runnable failed', { err });
              fail(err);
            }),
          );
      };
      const leaderRunnables = this.runnables.filter((r) => r.needLeaderElection ?? true);
      if (!stop.aborted) runAll(this.runnables.filter((r) => !(r.needLeaderElection ?? true)), stop);

      const startLeading = (leaderSignal: AbortSignal) => {
        this.leading = true;
        this.electedResolve();
        runAll(leaderRunnables, AbortSignal.any([leaderRunCtrl.signal, leaderSignal]));
      };
      if (!stop.aborted) {
        if (this.options.leaderElection) {
          const namespace = this.options.leaderElectionNamespace ?? inClusterNamespace() ?? this.client.contextNamespace;
          if (!namespace) throw new Error('leader election needs a namespace: set leaderElectionNamespace or POD_NAMESPACE');
          const renewDeadlineMs = this.options.renewDeadlineMs ?? 10_000;
          this.elector = new LeaderElector({
            lock: new LeaseLock(this.client, namespace, this.options.leaderElectionID!, Math.max(renewDeadlineMs / 2, 1000)),
            identity: this.identity,
            name: this.options.leaderElectionID!,
            leaseDurationMs: this.options.leaseDurationMs,
            renewDeadlineMs,
            retryPeriodMs: this.options.retryPeriodMs,
            releaseOnCancel: this.options.leaderElectionReleaseOnCancel,
            clock: this.clock,
            logger: this.logger,
            metrics: this.metrics,
            onStartedLeading: startLeading,
            onStoppedLeading: (reason) => {
              this.leading = false;
              if (reason !== 'lost' || electionCtrl.signal.aborted) return;
              log.error('leader election lost');
              if (this.options.onLeadershipLost) this.options.onLeadershipLost();
              else process.exit(1);
              fail(new Error('leader election lost'));
            },
          });
          electorDone = this.elector.run(electionCtrl.signal);
        } else {
          startLeading(leaderRunCtrl.signal);
        }
      }

      await aborted(stop);
    } catch (err) {
      fail(err as Error);
    } finally {
      log.info('stopping');
      const lost = fatalError?.message === 'leader election lost';
      leaderRunCtrl.abort();
      // Runnables got the stop signal; bound the wait (0 when leadership was lost, as controller-runtime).
      const graceCtrl = new AbortController();
      await Promise.race([Promise.all(running), sleep(this.clock, lost ? 0 : grace + 1000, graceCtrl.signal)]);
      graceCtrl.abort();
      electionCtrl.abort();
      await electorDone;
      informersCtrl.abort();
      await Promise.all([...this.informers.values()].map((i) => i.stop()));
      await Promise.all([this.webhookServer.stop(), this.metricsServer.stop(), this.probes.stop()]);
      // Events recorded during shutdown (e.g. a finished cleanup) are written before the client closes.
      const flushCtrl = new AbortController();
      await Promise.race([Promise.all(this.recorders.map((r) => r.flush())), sleep(this.clock, lost ? 0 : grace, flushCtrl.signal)]);
      flushCtrl.abort();
      this.removeResponseListener();
      if (!this.options.client) await this.client.close();
      log.info('stopped');
    }
    if (fatalError) throw fatalError;
  }
}
