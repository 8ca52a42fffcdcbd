import assert from 'node:assert/strict';
import { Controller, TerminalError, type ReconcileContext, type Result } from '../../../operator/runtime/controller/controller.js';
import { enqueueRequestForOwner, eventPriority, generationChangedPredicate, type Request } from '../../../operator/runtime/controller/handler.js';
import { LOW_PRIORITY } from '../../../operator/runtime/queue/workqueue.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { FakeClock, flushPromises } from '../../../operator/runtime/testing.js';

type Behaviour = (req: Request, ctx: ReconcileContext, call: number) => Promise<Result | void> | Result | void;

function setup(behaviour: Behaviour, opts: { maxConcurrentReconciles?: number } = {}) {
  const clock = new FakeClock();
  const metrics = new RuntimeMetrics({ defaultMetrics: false });
  const calls: { key: string; at: number; priority: number }[] = [];
  const c = new Controller(
    'test',
    {
      reconcile: (req, ctx) => {
        calls.push({ key: `${req.namespace}/${req.name}`, at: clock.now(), priority: ctx.priority });
        return behaviour(req, ctx, calls.length);
      },
    },
    { clock, metrics, maxConcurrentReconciles: opts.maxConcurrentReconciles, gracefulShutdownTimeoutMs: 5_000 },
  );
  const ctrl = new AbortController();
  const done = c.start(ctrl.signal);
  return { clock, metrics, calls, c, ctrl, done };
}

const value = async (metrics: RuntimeMetrics, re: RegExp) => Number(re.exec(await metrics.text())?.[1]);

describe('runtime/controller: Controller result handling (controller-runtime semantics)', () => {
  it('pre-initialises controller_runtime_reconcile_total for every result, and the gauges', async () => {
    const { metrics, ctrl, done } = setup(() => {});
    const text = await metrics.text();
    for (const r of ['success', 'error', 'requeue', 'requeue_after']) assert.match(text, new RegExp(`controller_runtime_reconcile_total\\{controller="test",result="${r}"\\} 0`));
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="test"\} 1/);
    assert.match(text, /controller_runtime_active_workers\{controller="test"\} 0/);
    assert.match(text, /controller_runtime_reconcile_errors_total\{controller="test"\} 0/);
    assert.match(text, /controller_runtime_terminal_reconcile_errors_total\{controller="test"\} 0/);
    assert.match(text, /controller_runtime_reconcile_panics_total\{controller="test"\} 0/);
    ctrl.abort();
    await done;
  });

  it('success forgets; errors requeue with per-item exponential backoff from 5 ms', async () => {
    const { clock, metrics, calls, c, ctrl, done } = setup((_r, _c, n) => {
      if (n <= 4) throw new Error('boom');
    });
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(1_000);
    assert.equal(calls.length, 5);
    const gaps = calls.slice(1).map((x, i) => x.at - calls[i]!.at);
    assert.deepEqual(gaps, [5, 10, 20, 40]);
    assert.equal(await value(metrics, /controller_runtime_reconcile_errors_total\{controller="test"\} (\d+)/), 4);
    assert.equal(await value(metrics, /controller_runtime_reconcile_total\{controller="test",result="success"\} (\d+)/), 1);
    assert.equal(c.queue.numRequeues('ns/a'), 0, 'success forgets the backoff');
    ctrl.abort();
    await done;
  });

  it('a TerminalError is counted and not requeued', async () => {
    const { clock, metrics, calls, c, ctrl, done } = setup(() => {
      throw new TerminalError('spec can never work');
    });
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(10_000);
    assert.equal(calls.length, 1);
    assert.equal(c.queue.len(), 0);
    assert.equal(await value(metrics, /controller_runtime_terminal_reconcile_errors_total\{controller="test"\} (\d+)/), 1);
    assert.equal(await value(metrics, /controller_runtime_reconcile_errors_total\{controller="test"\} (\d+)/), 1);
    assert.equal(await value(metrics, /controller_runtime_reconcile_total\{controller="test",result="error"\} (\d+)/), 1);
    ctrl.abort();
    await done;
  });

  it('a panic (TypeError) is recovered, counted as panic and error, and requeued', async () => {
    const { clock, metrics, calls, c, ctrl, done } = setup((_r, _c, n) => {
      if (n === 1) (undefined as unknown as { x: number }).x;
    });
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(100);
    assert.equal(calls.length, 2);
    assert.equal(await value(metrics, /controller_runtime_reconcile_panics_total\{controller="test"\} (\d+)/), 1);
    assert.equal(await value(metrics, /controller_runtime_reconcile_errors_total\{controller="test"\} (\d+)/), 1);
    ctrl.abort();
    await done;
  });

  it('requeueAfter requeues after the delay with the result priority', async () => {
    const { clock, metrics, calls, c, ctrl, done } = setup((_r, _c, n) => (n === 1 ? { requeueAfter: 30_000, priority: 7 } : {}));
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(29_999);
    assert.equal(calls.length, 1);
    await clock.advance(1);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.priority, 7);
    assert.equal(await value(metrics, /controller_runtime_reconcile_total\{controller="test",result="requeue_after"\} (\d+)/), 1);
    ctrl.abort();
    await done;
  });

  it('never reconciles one key concurrently; adds during processing collapse into one more run', async () => {
    let release!: () => void;
    let active = 0;
    let maxActive = 0;
    const { clock, calls, c, ctrl, done } = setup(
      async (req, _ctx, n) => {
        if (req.name !== 'a') return;
        active++;
        maxActive = Math.max(maxActive, active);
        if (n === 1) await new Promise<void>((r) => (release = r));
        active--;
      },
      { maxConcurrentReconciles: 4 },
    );
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(0);
    for (let i = 0; i < 10; i++) c.enqueue({ namespace: 'ns', name: 'a' });
    c.enqueue({ namespace: 'ns', name: 'b' });
    await clock.advance(0);
    assert.deepEqual(
      calls.map((x) => x.key),
      ['ns/a', 'ns/b'],
      'b runs on another worker while a is busy; a is not handed out again',
    );
    release();
    await clock.advance(0);
    await flushPromises();
    assert.deepEqual(
      calls.map((x) => x.key),
      ['ns/a', 'ns/b', 'ns/a'],
      'exactly one more run of a',
    );
    assert.equal(maxActive, 1);
    ctrl.abort();
    await done;
  });

  it('shutdown stops intake and waits for in-flight reconciles', async () => {
    let release!: () => void;
    let finished = false;
    const { clock, c, ctrl, done, calls } = setup(async () => {
      await new Promise<void>((r) => (release = r));
      finished = true;
    });
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(0);
    ctrl.abort();
    c.enqueue({ namespace: 'ns', name: 'b' });
    let resolved = false;
    void done.then(() => (resolved = true));
    await clock.advance(1_000);
    assert.equal(resolved, false, 'still waiting for a');
    release();
    await done;
    assert.equal(finished, true);
    assert.equal(calls.length, 1, 'b was not taken after shutdown');
  });

  it('aborts in-flight reconciles after the graceful shutdown timeout', async () => {
    let sawAbort = false;
    const { clock, c, ctrl, done } = setup(
      (_r, ctx) =>
        new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve();
          });
        }),
    );
    c.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(0);
    ctrl.abort();
    await clock.advance(5_000);
    await done;
    assert.equal(sawAbort, true);
  });
});

describe('runtime/controller: handlers and priorities', () => {
  const obj = (rv: string, gen = 1) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'x', resourceVersion: rv, generation: gen } });

  it('gives initial-list and unchanged updates LOW_PRIORITY', () => {
    assert.equal(eventPriority({ type: 'create', obj: obj('1'), isInInitialList: true }, LOW_PRIORITY), LOW_PRIORITY);
    assert.equal(eventPriority({ type: 'create', obj: obj('1'), isInInitialList: false }, LOW_PRIORITY), undefined);
    assert.equal(eventPriority({ type: 'update', oldObj: obj('1'), obj: obj('1') }, LOW_PRIORITY), LOW_PRIORITY);
    assert.equal(eventPriority({ type: 'update', oldObj: obj('1'), obj: obj('2') }, LOW_PRIORITY), undefined);
    assert.equal(eventPriority({ type: 'delete', obj: obj('1') }, LOW_PRIORITY), undefined);
  });

  it('maps owned objects to their controller owner (group and kind, any version)', () => {
    const map = enqueueRequestForOwner({ apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService' });
    const owned = {
      metadata: {
        namespace: 'ns',
        name: 'd',
        ownerReferences: [
          { apiVersion: 'inference.olmpub.dev/v1alpha1', kind: 'InferenceService', name: 'svc', uid: 'u', controller: true },
          { apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService', name: 'other', uid: 'u2' },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'dep', uid: 'u3', controller: false },
        ],
      },
    };
    assert.deepEqual(map({ type: 'delete', obj: owned }), [{ namespace: 'ns', name: 'svc' }]);
  });

  it('generationChangedPredicate drops status-only updates', () => {
    const p = generationChangedPredicate();
    assert.equal(p({ type: 'update', oldObj: obj('1', 1), obj: obj('2', 1) }), false);
    assert.equal(p({ type: 'update', oldObj: obj('1', 1), obj: obj('2', 2) }), true);
  });
});
