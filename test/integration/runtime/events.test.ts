import assert from 'node:assert/strict';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { EVENT, EventRecorder } from '../../../operator/runtime/events.js';
import { CM, client, createNamespace, deleteNamespace } from './support.js';

type Event = KubeObject & {
  reason?: string;
  action?: string;
  note?: string;
  type?: string;
  reportingController?: string;
  reportingInstance?: string;
  eventTime?: string;
  regarding?: { kind?: string; name?: string; uid?: string };
  series?: { count: number; lastObservedTime: string };
};

describe('runtime/events: events.k8s.io/v1 recorder (real apiserver)', function () {
  this.timeout(60_000);
  let c: KubeClient;
  let ns: string;

  before(async () => {
    c = client();
    ns = await createNamespace(c, 'rt-events');
  });
  after(async () => {
    await deleteNamespace(c, ns);
    await c.close();
  });

  it('creates an event, then aggregates identical ones into a series instead of new objects', async () => {
    const regarding = await c.apply<KubeObject & { data?: object }>({ ...CM, metadata: { name: 'isvc', namespace: ns }, data: {} }, { fieldManager: 'rt-test' });
    const rec = new EventRecorder(c, { reportingController: 'inference.olmpub.dev/operator', reportingInstance: 'pod-1' });
    rec.normal(regarding, 'ScaledUp', 'Scale', 'replicas 0 -> 1');
    await rec.flush();
    let list = await c.list<Event>(EVENT, { namespace: ns });
    assert.equal(list.items.length, 1);
    const e = list.items[0]!;
    assert.equal(e.reason, 'ScaledUp');
    assert.equal(e.action, 'Scale');
    assert.equal(e.type, 'Normal');
    assert.equal(e.note, 'replicas 0 -> 1');
    assert.equal(e.reportingController, 'inference.olmpub.dev/operator');
    assert.equal(e.regarding?.uid, regarding.metadata?.uid);
    assert.match(e.eventTime!, /\.\d{6}Z$/);

    rec.normal(regarding, 'ScaledUp', 'Scale', 'replicas 0 -> 1');
    rec.normal(regarding, 'ScaledUp', 'Scale', 'replicas 0 -> 1');
    rec.warning(regarding, 'ModelLoadFailed', 'Load', 'weights not found');
    await rec.flush();
    list = await c.list<Event>(EVENT, { namespace: ns });
    assert.equal(list.items.length, 2, 'repeats went into the series');
    const series = list.items.find((x) => x.reason === 'ScaledUp')!;
    assert.equal(series.series?.count, 3);
    assert.deepEqual(rec.stats, { created: 2, patched: 2, dropped: 0, failed: 0 });
  });

  it('drops floods about one object (spam filter)', async () => {
    const regarding = await c.get(CM, 'isvc', ns);
    const rec = new EventRecorder(c, { reportingController: 'inference.olmpub.dev/operator', reportingInstance: 'pod-1', burst: 3 });
    for (let i = 0; i < 5; i++) rec.warning(regarding, 'Flapping', 'Reconcile', `attempt ${i}`);
    await rec.flush();
    assert.equal(rec.stats.created, 3);
    assert.equal(rec.stats.dropped, 2);
  });
});
