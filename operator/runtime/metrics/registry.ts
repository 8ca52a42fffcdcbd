/**
 * The runtime's Prometheus metrics, with controller-runtime's exact names, labels and buckets
 * (reference/operator.md §2.3; pkg/internal/controller/metrics, pkg/internal/metrics/workqueue.go,
 * pkg/metrics/leaderelection.go, pkg/webhook/internal/metrics, client-go's rest_client adapter,
 * pkg/certwatcher/metrics). Each RuntimeMetrics owns its own prom-client Registry, so two managers
 * (or two tests) in one process never collide.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** controller-runtime's reconcile_time_seconds buckets. */
export const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5,
  4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** prometheus.ExponentialBuckets(10e-9, 10, 12): 1e-8 … 1e3. */
export const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** The results controller_runtime_reconcile_total is pre-initialised with. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResultLabel = (typeof RECONCILE_RESULTS)[number];

/** What a work queue reports at scrape time. */
export interface QueueProbe {
  name: string;
  controller: string;
  /** Seconds of work in progress not yet observed by work_duration. */
  unfinishedWorkSeconds(): number;
  /** Seconds the longest running item has been processed. */
  longestRunningProcessorSeconds(): number;
}

export interface RuntimeMetricsOptions {
  /** Also collect prom-client's process_* and nodejs_* metrics. Default true. */
  defaultMetrics?: boolean;
}

export class RuntimeMetrics {
  readonly registry = new Registry();

  // controller
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcilePanics: Counter<'controller'>;
  readonly reconcileTimeouts: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;

  // workqueue
  readonly workqueueDepth: Gauge<'name' | 'controller' | 'priority'>;
  readonly workqueueAdds: Counter<'name' | 'controller'>;
  readonly workqueueQueueDuration: Histogram<'name' | 'controller'>;
  readonly workqueueWorkDuration: Histogram<'name' | 'controller'>;
  readonly workqueueUnfinishedWork: Gauge<'name' | 'controller'>;
  readonly workqueueLongestRunningProcessor: Gauge<'name' | 'controller'>;
  readonly workqueueRetries: Counter<'name' | 'controller'>;

  // leader election
  readonly leaderElectionMasterStatus: Gauge<'name'>;
  readonly leaderElectionSlowpath: Counter<'name'>;

  // client
  readonly restClientRequests: Counter<'code' | 'method' | 'host'>;

  // webhooks
  readonly webhookRequests: Counter<'webhook' | 'code'>;
  readonly webhookLatency: Histogram<'webhook'>;
  readonly webhookInFlight: Gauge<'webhook'>;

  // certificates
  readonly certwatcherReads: Counter<string>;
  readonly certwatcherReadErrors: Counter<string>;

  private readonly queues = new Set<QueueProbe>();

  constructor(options: RuntimeMetricsOptions = {}) {
    const registers = [this.registry];
    this.reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers });
    this.reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers });
    this.terminalReconcileErrors = new Counter({ name: 'controller_runtime_terminal_reconcile_errors_total', help: 'Total number of terminal reconciliation errors per controller', labelNames: ['controller'], registers });
    this.reconcilePanics = new Counter({ name: 'controller_runtime_reconcile_panics_total', help: 'Total number of reconciliation panics per controller', labelNames: ['controller'], registers });
    this.reconcileTimeouts = new Counter({ name: 'controller_runtime_reconcile_timeouts_total', help: 'Total number of reconciliation timeouts per controller', labelNames: ['controller'], registers });
    this.reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets: RECONCILE_TIME_BUCKETS, registers });
    this.maxConcurrentReconciles = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'], registers });
    this.activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'], registers });

    this.workqueueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue by workqueue and priority', labelNames: ['name', 'controller', 'priority'], registers });
    this.workqueueAdds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name', 'controller'], registers });
    this.workqueueQueueDuration = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames: ['name', 'controller'], buckets: WORKQUEUE_BUCKETS, registers });
    this.workqueueWorkDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames: ['name', 'controller'], buckets: WORKQUEUE_BUCKETS, registers });
    const queues = this.queues;
    this.workqueueUnfinishedWork = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const q of queues) this.set({ name: q.name, controller: q.controller }, q.unfinishedWorkSeconds());
      },
    });
    this.workqueueLongestRunningProcessor = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const q of queues) this.set({ name: q.name, controller: q.controller }, q.longestRunningProcessorSeconds());
      },
    });
    this.workqueueRetries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name', 'controller'], registers });

    this.leaderElectionMasterStatus = new Gauge({
      name: 'leader_election_master_status',
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ['name'],
      registers,
    });
    this.leaderElectionSlowpath = new Counter({
      name: 'leader_election_slowpath_total',
      help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ['name'],
      registers,
    });

    this.restClientRequests = new Counter({ name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'], registers });

    this.webhookRequests = new Counter({ name: 'controller_runtime_webhook_requests_total', help: 'Total number of admission requests by HTTP status code.', labelNames: ['webhook', 'code'], registers });
    this.webhookLatency = new Histogram({ name: 'controller_runtime_webhook_latency_seconds', help: 'Histogram of the latency of processing admission requests', labelNames: ['webhook'], registers });
    this.webhookInFlight = new Gauge({ name: 'controller_runtime_webhook_requests_in_flight', help: 'Current number of admission requests being served.', labelNames: ['webhook'], registers });

    this.certwatcherReads = new Counter({ name: 'certwatcher_read_certificate_total', help: 'Total number of certificate reads', registers });
    this.certwatcherReadErrors = new Counter({ name: 'certwatcher_read_certificate_errors_total', help: 'Total number of certificate read errors', registers });

    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Pre-initialises a controller's series to 0, as controller-runtime does when a controller is built. */
  initController(controller: string, maxConcurrentReconciles: number): void {
    for (const result of RECONCILE_RESULTS) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalReconcileErrors.inc({ controller }, 0);
    this.reconcilePanics.inc({ controller }, 0);
    this.reconcileTimeouts.inc({ controller }, 0);
    this.maxConcurrentReconciles.set({ controller }, maxConcurrentReconciles);
    this.activeWorkers.set({ controller }, 0);
  }

  /** A work queue whose gauges are computed at scrape time. Returns an unregister function. */
  registerQueue(probe: QueueProbe): () => void {
    this.queues.add(probe);
    this.workqueueAdds.inc({ name: probe.name, controller: probe.controller }, 0);
    this.workqueueRetries.inc({ name: probe.name, controller: probe.controller }, 0);
    return () => this.queues.delete(probe);
  }

  /** A KubeClient `onResponse` hook feeding rest_client_requests_total. */
  readonly onRestResponse = (r: { code: string; method: string; host: string }): void => {
    this.restClientRequests.inc({ code: r.code, method: r.method, host: r.host });
  };

  /** The exposition text (what /metrics serves). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
