import assert from 'node:assert/strict';
import { WorkQueue, LOW_PRIORITY } from '../../../operator/runtime/queue/workqueue.js';
import { ItemExponentialFailureRateLimiter } from '../../../operator/runtime/queue/ratelimiter.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { FakeClock, flushPromises } from '../../../operator/runtime/testing.js';

/** Resolves the value of a promise if it settled already, else 'pending'. */
async function state<T>(p: Promise<T>): Promise<T | 'pending'> {
  const marker = Symbol();
  const v = await Promise.race([p, flushPromises(3).then(() => marker)]);
  return v === marker ? 'pending' : (v as T);
}

describe('runtime/queue: WorkQueue', () => {
  let clock: FakeClock;
  let q: WorkQueue<string>;
  beforeEach(() => {
    clock = new FakeClock();
    q = new WorkQueue<string>({ name: 'test', clock });
  });
  afterEach(() => q.shutDown());

  it('collapses N adds of a pending item into one', async () => {
    for (let i = 0; i < 10; i++) q.add('a');
    q.add('b');
    assert.equal(q.len(), 2);
    assert.deepEqual(await q.get(), { item: 'a', priority: 0 });
    assert.deepEqual(await q.get(), { item: 'b', priority: 0 });
    assert.equal(await state(q.get()), 'pending');
  });

  it('never hands out an item that is being processed; a re-add during processing re-queues once after done', async () => {
    q.add('a');
    const first = await q.get();
    assert.equal(first?.item, 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 1);
    const second = q.get();
    assert.equal(await state(second), 'pending', 'a is still being processed');
    q.done('a');
    assert.deepEqual(await second, { item: 'a', priority: 0 });
    q.done('a');
    assert.equal(q.len(), 0);
    assert.equal(await state(q.get()), 'pending', 'no third time');
  });

  it('hands other items to other workers while one is processed', async () => {
    q.add('a');
    q.add('b');
    const w1 = await q.get();
    q.add('a');
    const w2 = await q.get();
    assert.equal(w1?.item, 'a');
    assert.equal(w2?.item, 'b', 'the pending re-add of a is skipped, b is handed out');
    assert.equal(q.inFlight(), 2);
  });

  it('orders by priority, then FIFO', async () => {
    q.add('low1', { priority: LOW_PRIORITY });
    q.add('n1');
    q.add('high', { priority: 10 });
    q.add('n2');
    q.add('low2', { priority: LOW_PRIORITY });
    const order: string[] = [];
    for (let i = 0; i < 5; i++) order.push((await q.get())!.item);
    assert.deepEqual(order, ['high', 'n1', 'n2', 'low1', 'low2']);
  });

  it('a re-add keeps the highest priority and the earliest ready time', async () => {
    q.add('a', { priority: LOW_PRIORITY });
    q.add('a', { priority: 5 });
    q.add('a', { priority: 1 });
    assert.equal(q.peek('a')?.priority, 5);
    q.add('b', { after: 10_000 });
    const t0 = clock.now();
    q.add('b', { after: 1_000 });
    q.add('b', { after: 5_000 });
    assert.equal(q.peek('b')?.readyAt, t0 + 1_000);
    q.add('c');
    q.add('c', { after: 5_000 });
    assert.equal(q.peek('c')?.readyAt, t0, 'an immediate item stays immediate');
  });

  it('addAfter delays until the clock reaches the ready time', async () => {
    q.addAfter('a', 5_000);
    const got = q.get();
    assert.equal(await state(got), 'pending');
    await clock.advance(4_999);
    assert.equal(await state(got), 'pending');
    await clock.advance(1);
    assert.deepEqual(await got, { item: 'a', priority: 0 });
  });

  it('a delayed item does not block ready ones', async () => {
    q.addAfter('later', 1_000, 100);
    q.add('now');
    assert.equal((await q.get())?.item, 'now');
  });

  it('backs off per item exponentially from 5 ms, and forget resets', async () => {
    const rl = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const delays = Array.from({ length: 5 }, () => rl.when('x'));
    assert.deepEqual(delays, [5, 10, 20, 40, 80]);
    assert.equal(rl.numRequeues('x'), 5);
    assert.equal(rl.when('y'), 5, 'per item');
    rl.forget('x');
    assert.equal(rl.when('x'), 5);
    for (let i = 0; i < 40; i++) rl.when('z');
    assert.equal(rl.when('z'), 1_000_000, 'capped at 1000 s');
  });

  it('addRateLimited uses the limiter and a shorter after wins', async () => {
    q.addRateLimited('a');
    const t0 = clock.now();
    assert.equal(q.peek('a')?.readyAt, t0 + 5);
    const got = await (async () => {
      await clock.advance(5);
      return q.get();
    })();
    assert.equal(got?.item, 'a');
    q.done('a');
    q.addRateLimited('a'); // second failure: 10 ms
    assert.equal(q.peek('a')?.readyAt, clock.now() + 10);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
  });

  it('shutDown stops intake, wakes waiters with undefined, and drain waits for in-flight items', async () => {
    q.add('a');
    const a = await q.get();
    const waiting = q.get();
    q.add('b');
    // b was handed to the waiting worker
    assert.equal((await waiting)?.item, 'b');
    const idle = q.get();
    q.shutDown();
    assert.equal(await idle, undefined);
    q.add('c');
    assert.equal(q.len(), 0, 'adds after shutdown are ignored');
    assert.equal(await q.get(), undefined);
    const drained = q.drain();
    assert.equal(await state(drained), 'pending');
    q.done(a!.item);
    assert.equal(await state(drained), 'pending');
    q.done('b');
    assert.equal(await drained, true);
  });

  it('drain gives up after its timeout', async () => {
    q.add('a');
    await q.get();
    q.shutDown();
    const drained = q.drain(1_000);
    await clock.advance(1_000);
    assert.equal(await drained, false);
  });

  it('feeds the workqueue metrics with name and controller labels', async () => {
    const metrics = new RuntimeMetrics({ defaultMetrics: false });
    const mq = new WorkQueue<string>({ name: 'isvc', clock, metrics });
    mq.add('a', { priority: LOW_PRIORITY });
    mq.add('a');
    mq.addAfter('b', 1_000);
    const text1 = await metrics.text();
    assert.match(text1, /workqueue_depth\{name="isvc",controller="isvc",priority="-100"\} 0/, 'the re-add raised the priority');
    assert.match(text1, /workqueue_depth\{name="isvc",controller="isvc",priority="0"\} 2/);
    assert.match(text1, /workqueue_adds_total\{name="isvc",controller="isvc"\} 2/);
    assert.match(text1, /workqueue_retries_total\{name="isvc",controller="isvc"\} 1/);
    await mq.get();
    await clock.advance(2_500);
    const text2 = await metrics.text();
    assert.match(text2, /workqueue_longest_running_processor_seconds\{name="isvc",controller="isvc"\} 2\.5/);
    assert.match(text2, /workqueue_unfinished_work_seconds\{name="isvc",controller="isvc"\} 2\.5/);
    mq.done('a');
    const text3 = await metrics.text();
    assert.match(text3, /workqueue_work_duration_seconds_count\{name="isvc",controller="isvc"\} 1/);
    assert.match(text3, /workqueue_queue_duration_seconds_count\{name="isvc",controller="isvc"\} 1/);
    mq.shutDown();
  });
});
