import assert from 'node:assert/strict';
import { Informer } from '../../../operator/runtime/cache/informer.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { Logger } from '../../../operator/runtime/log.js';
import { eventually } from '../../support/env.js';
import { CM, FaultyProxy, client, createNamespace, deleteNamespace } from './support.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

function recorder(inf: Informer<ConfigMap>) {
  const events: string[] = [];
  inf.addEventHandler({
    onAdd: (o, initial) => events.push(`add${initial ? '(initial)' : ''} ${o.metadata?.namespace}/${o.metadata?.name}`),
    onUpdate: (o, n) => {
      if (o.metadata?.resourceVersion !== n.metadata?.resourceVersion) events.push(`update ${n.metadata?.namespace}/${n.metadata?.name} ${o.data?.k}->${n.data?.k}`);
    },
    onDelete: (o) => events.push(`delete ${o.metadata?.namespace}/${o.metadata?.name}`),
  });
  return events;
}

const cm = (ns: string, name: string, k: string): ConfigMap => ({ ...CM, metadata: { namespace: ns, name }, data: { k } });

describe('runtime/informer: reflector and cache against the real apiserver', function () {
  this.timeout(120_000);
  let c: KubeClient;
  let ns: string;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    c = client();
    ns = await createNamespace(c, 'rt-informer');
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) await s();
  });
  after(async () => {
    await deleteNamespace(c, ns);
    await c.close();
  });

  it('sees create, update (old and new) and delete of ConfigMaps; cached objects are frozen', async () => {
    const inf = new Informer<ConfigMap>(c, CM, { namespaces: [ns] });
    const events = recorder(inf);
    inf.start();
    stops.push(() => inf.stop());
    assert.equal(await inf.waitForSync({ timeoutMs: 30_000 }), true);
    assert.equal(inf.hasSynced(), true);

    await c.apply(cm(ns, 'a', '1'), { fieldManager: 'rt-test' });
    await eventually('add of a', async () => events.includes(`add ${ns}/a`));
    await c.apply(cm(ns, 'a', '2'), { fieldManager: 'rt-test' });
    await eventually('update of a', async () => events.includes(`update ${ns}/a 1->2`));
    const cached = inf.get('a', ns)!;
    assert.equal(cached.data?.k, '2');
    assert.throws(() => {
      cached.data!.k = 'mutated';
    }, TypeError);
    await c.delete(CM, 'a', ns);
    await eventually('delete of a', async () => events.includes(`delete ${ns}/a`));
    assert.equal(inf.get('a', ns), undefined);
    const stats = inf.stats();
    assert.equal(stats.lists, 1);
    assert.equal(stats.errors, 0);
  });

  it('a late handler gets the cache replayed as initial adds', async () => {
    await c.apply(cm(ns, 'pre', 'x'), { fieldManager: 'rt-test' });
    const inf = new Informer<ConfigMap>(c, CM, { namespaces: [ns] });
    inf.start();
    stops.push(() => inf.stop());
    assert.equal(await inf.waitForSync({ timeoutMs: 30_000 }), true);
    const events = recorder(inf);
    assert.ok(events.includes(`add(initial) ${ns}/pre`), events.join('\n'));
    await c.delete(CM, 'pre', ns);
  });

  it('WATCH_NAMESPACE scoping: one watch per listed namespace, other namespaces invisible', async () => {
    const ns2 = await createNamespace(c, 'rt-informer-b');
    const ns3 = await createNamespace(c, 'rt-informer-c');
    stops.push(async () => {
      await deleteNamespace(c, ns2);
      await deleteNamespace(c, ns3);
    });
    const inf = new Informer<ConfigMap>(c, CM, { namespaces: [ns, ns2] });
    const events = recorder(inf);
    inf.start();
    stops.push(() => inf.stop());
    assert.equal(await inf.waitForSync({ timeoutMs: 30_000 }), true);
    assert.equal(inf.reflectors.length, 2);
    await c.apply(cm(ns3, 'hidden', '1'), { fieldManager: 'rt-test' });
    await c.apply(cm(ns2, 'seen', '1'), { fieldManager: 'rt-test' });
    await c.apply(cm(ns, 'seen-too', '1'), { fieldManager: 'rt-test' });
    await eventually('both watched namespaces', async () => events.includes(`add ${ns2}/seen`) && events.includes(`add ${ns}/seen-too`));
    assert.ok(!events.some((e) => e.includes(ns3)), 'nothing from an unwatched namespace');
    assert.deepEqual(inf.list(ns3), []);
    await c.delete(CM, 'seen-too', ns);
  });

  it('relists after the watch connection is cut, delivering what changed meanwhile', async () => {
    const proxy = FaultyProxy.forApiserver();
    await proxy.start();
    const pc = client({ server: proxy.url, requestTimeoutMs: 5_000 });
    stops.push(async () => {
      await pc.close();
      await proxy.stop();
    });
    await c.apply(cm(ns, 'keep', '1'), { fieldManager: 'rt-test' });
    await c.apply(cm(ns, 'gone', '1'), { fieldManager: 'rt-test' });
    const inf = new Informer<ConfigMap>(pc, CM, { namespaces: [ns], backoff: { initialMs: 200, maxMs: 1_000 } });
    const events = recorder(inf);
    inf.start();
    stops.push(() => inf.stop());
    assert.equal(await inf.waitForSync({ timeoutMs: 30_000 }), true);
    await eventually('the watch is open', async () => proxy.connections > 0 && inf.stats().watches > 0);

    proxy.reset(); // the watch breaks; relists fail until the network is back
    await c.apply(cm(ns, 'keep', '2'), { fieldManager: 'rt-test' });
    await c.delete(CM, 'gone', ns);
    await c.apply(cm(ns, 'new', '1'), { fieldManager: 'rt-test' });
    await eventually('the reflector notices the broken watch', async () => inf.stats().errors >= 2);
    assert.equal(inf.get('keep', ns)?.data?.k, '1', 'nothing seen while cut off');

    proxy.up();
    await eventually('the cache catches up', async () => inf.get('keep', ns)?.data?.k === '2' && !inf.get('gone', ns) && inf.get('new', ns));
    assert.ok(inf.stats().relists >= 1, 'recovered by relisting');
    assert.ok(events.includes(`update ${ns}/keep 1->2`), events.join('\n'));
    assert.ok(events.includes(`delete ${ns}/gone`));
    assert.ok(events.includes(`add ${ns}/new`));
    // and the new watch works
    await c.apply(cm(ns, 'after', '1'), { fieldManager: 'rt-test' });
    await eventually('events after recovery', async () => events.includes(`add ${ns}/after`));
    for (const n of ['keep', 'new', 'after']) await c.delete(CM, n, ns);
  });

  it('the inactivity watchdog abandons a silent (half-open) watch and recovers', async () => {
    const proxy = FaultyProxy.forApiserver();
    await proxy.start();
    const pc = client({ server: proxy.url, requestTimeoutMs: 3_000 });
    stops.push(async () => {
      await pc.close();
      await proxy.stop();
    });
    const lines: string[] = [];
    const logger = new Logger({ level: 'debug', sink: (l) => lines.push(l) });
    // 1 s server-side watch timeouts: the server ends each watch after a second, unless the proxy
    // swallows the end, in which case the watchdog (timeout + 1.5 s) must give up on the connection.
    const inf = new Informer<ConfigMap>(pc, CM, { namespaces: [ns], minWatchTimeoutSeconds: 1, watchInactivityGraceMs: 1_500, backoff: { initialMs: 200, maxMs: 1_000 }, logger });
    const events = recorder(inf);
    inf.start();
    stops.push(() => inf.stop());
    assert.equal(await inf.waitForSync({ timeoutMs: 30_000 }), true);
    await eventually('a watch is open', async () => inf.stats().watches > 0);
    proxy.blackhole();
    await eventually('the watchdog fires', async () => lines.some((l) => l.includes('watch inactive for')), 30_000);
    proxy.up();
    await c.apply(cm(ns, 'late', '1'), { fieldManager: 'rt-test' });
    await eventually('events flow again', async () => events.includes(`add ${ns}/late`) || inf.get('late', ns) !== undefined);
    await c.delete(CM, 'late', ns);
  });
});
