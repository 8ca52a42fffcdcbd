import assert from 'node:assert/strict';
import { RuntimeMetrics, RECONCILE_TIME_BUCKETS, WORKQUEUE_BUCKETS } from '../../../operator/runtime/metrics/registry.js';

/** name → label names, from controller-runtime v0.23 (reference/operator.md §2.3). */
const EXPECTED: Record<string, string[]> = {
  controller_runtime_reconcile_total: ['controller', 'result'],
  controller_runtime_reconcile_errors_total: ['controller'],
  controller_runtime_terminal_reconcile_errors_total: ['controller'],
  controller_runtime_reconcile_panics_total: ['controller'],
  controller_runtime_reconcile_timeouts_total: ['controller'],
  controller_runtime_reconcile_time_seconds: ['controller'],
  controller_runtime_max_concurrent_reconciles: ['controller'],
  controller_runtime_active_workers: ['controller'],
  workqueue_depth: ['name', 'controller', 'priority'],
  workqueue_adds_total: ['name', 'controller'],
  workqueue_queue_duration_seconds: ['name', 'controller'],
  workqueue_work_duration_seconds: ['name', 'controller'],
  workqueue_unfinished_work_seconds: ['name', 'controller'],
  workqueue_longest_running_processor_seconds: ['name', 'controller'],
  workqueue_retries_total: ['name', 'controller'],
  leader_election_master_status: ['name'],
  leader_election_slowpath_total: ['name'],
  rest_client_requests_total: ['code', 'method', 'host'],
  controller_runtime_webhook_requests_total: ['webhook', 'code'],
  controller_runtime_webhook_latency_seconds: ['webhook'],
  controller_runtime_webhook_requests_in_flight: ['webhook'],
  certwatcher_read_certificate_total: [],
  certwatcher_read_certificate_errors_total: [],
};

describe('runtime/metrics: controller-runtime metric names and labels', () => {
  it('registers every metric with its exact name and labels', async () => {
    const m = new RuntimeMetrics({ defaultMetrics: false });
    const json = await m.registry.getMetricsAsJSON();
    const byName = new Map(json.map((x) => [x.name, x]));
    for (const [name, labels] of Object.entries(EXPECTED)) {
      const metric = m.registry.getSingleMetric(name) as unknown as { labelNames: string[] } | undefined;
      assert.ok(metric, `missing ${name}`);
      assert.deepEqual([...metric.labelNames], labels, `labels of ${name}`);
      assert.ok(byName.has(name));
    }
  });

  it('uses controller-runtime buckets', () => {
    assert.equal(RECONCILE_TIME_BUCKETS.length, 40);
    assert.equal(RECONCILE_TIME_BUCKETS[0], 0.005);
    assert.equal(RECONCILE_TIME_BUCKETS.at(-1), 60);
    assert.deepEqual(WORKQUEUE_BUCKETS, [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
  });

  it('pre-initialises a controller and feeds rest_client_requests_total', async () => {
    const m = new RuntimeMetrics({ defaultMetrics: false });
    m.initController('isvc', 3);
    m.onRestResponse({ code: '200', method: 'GET', host: '127.0.0.1:6443' });
    const text = await m.text();
    assert.match(text, /controller_runtime_reconcile_total\{controller="isvc",result="requeue_after"\} 0/);
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="isvc"\} 3/);
    assert.match(text, /rest_client_requests_total\{code="200",method="GET",host="127.0.0.1:6443"\} 1/);
  });

  it('includes process metrics by default and keeps registries apart', async () => {
    const a = new RuntimeMetrics();
    const b = new RuntimeMetrics();
    assert.match(await a.text(), /process_cpu_user_seconds_total/);
    a.initController('only-a', 1);
    assert.doesNotMatch(await b.text(), /only-a/);
  });
});
