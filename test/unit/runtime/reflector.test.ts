/**
 * The reflector's loop logic (list → watch → relist/backoff decisions) driven by a scripted client and
 * a fake clock. This is a unit test of the state machine only; the same code runs against the real
 * apiserver in test/integration/runtime/informer.test.ts.
 */
import assert from 'node:assert/strict';
import { Reflector } from '../../../operator/runtime/cache/reflector.js';
import { KubeApiError, KubeTransportError } from '../../../operator/runtime/kube/errors.js';
import type { KubeClient, ListOptions, WatchOptions } from '../../../operator/runtime/kube/client.js';
import type { KubeList, KubeObject, WatchEvent } from '../../../operator/runtime/kube/types.js';
import { FakeClock, flushPromises } from '../../../operator/runtime/testing.js';

type ListStep = (opts: ListOptions) => KubeList | Error;
type WatchStep = (opts: WatchOptions, emit: (e: WatchEvent) => void) => Promise<void> | Error;

const cm = (name: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name, resourceVersion: rv } });
const page = (items: KubeObject[], rv: string, cont?: string): KubeList => ({ metadata: { resourceVersion: rv, continue: cont }, items });
const refused = () => new KubeTransportError('connect ECONNREFUSED', 'GET', '/x', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));

function scripted(lists: ListStep[], watches: WatchStep[]) {
  const log: string[] = [];
  const client = {
    async list(_t: unknown, opts: ListOptions) {
      const step = lists.shift();
      if (!step) return new Promise(() => {}); // nothing scripted: hang
      log.push(`list limit=${opts.limit ?? '-'} continue=${opts.continue ?? '-'}`);
      const r = step(opts);
      if (r instanceof Error) throw r;
      return r;
    },
    async watch(_t: unknown, opts: WatchOptions, onEvent: (e: WatchEvent) => void) {
      const step = watches.shift();
      log.push(`watch rv=${opts.resourceVersion} bookmarks=${opts.allowWatchBookmarks} timeout=${opts.timeoutSeconds}`);
      if (!step) return new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve()));
      const r = step(opts, onEvent);
      if (r instanceof Error) throw r;
      return r;
    },
  };
  return { client: client as unknown as KubeClient, log };
}

function reflector(client: KubeClient, clock: FakeClock) {
  const seen: string[] = [];
  const r = new Reflector(
    { client, type: { apiVersion: 'v1', kind: 'ConfigMap' }, namespace: 'ns', pageSize: 2, clock, random: () => 0 },
    {
      onList: (items, initial) => seen.push(`list(${initial ? 'initial' : 'relist'}) ${items.map((o) => o.metadata?.name).join(',')}`),
      onEvent: (type, obj) => seen.push(`${type} ${obj.metadata?.name}`),
    },
  );
  const ctrl = new AbortController();
  const done = r.run(ctrl.signal);
  return { r, seen, ctrl, done };
}

describe('runtime/cache: Reflector loop (scripted client, fake clock)', () => {
  it('lists page by page, then watches from the list resourceVersion with bookmarks and a jittered server timeout', async () => {
    const clock = new FakeClock();
    const { client, log } = scripted(
      [() => page([cm('a', '5'), cm('b', '6')], '10', 'tok'), () => page([cm('c', '7')], '10')],
      [
        async (_o, emit) => {
          emit({ type: 'ADDED', object: cm('d', '11') });
          emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } });
        },
      ],
    );
    const { r, seen, ctrl, done } = reflector(client, clock);
    await flushPromises(10);
    assert.deepEqual(seen, ['list(initial) a,b,c', 'ADDED d']);
    assert.deepEqual(log, ['list limit=2 continue=-', 'list limit=2 continue=tok', 'watch rv=10 bookmarks=true timeout=300', 'watch rv=15 bookmarks=true timeout=300']);
    assert.equal(r.hasSynced(), true);
    assert.equal(r.resourceVersion, '15', 'bookmarks advance the resourceVersion');
    ctrl.abort();
    await done;
  });

  it('relists at once on 410 Gone', async () => {
    const clock = new FakeClock();
    const gone = new KubeApiError(410, 'Expired', 'too old resource version', 'GET', '/x');
    const { client, log } = scripted([() => page([cm('a', '5')], '10'), () => page([cm('b', '12')], '20')], [() => gone]);
    const { r, seen, ctrl, done } = reflector(client, clock);
    await flushPromises(10);
    assert.deepEqual(seen, ['list(initial) a', 'list(relist) b']);
    assert.equal(log.filter((l) => l.startsWith('watch')).at(-1), 'watch rv=20 bookmarks=true timeout=300');
    assert.equal(r.stats.gone, 1);
    assert.equal(r.stats.relists, 1);
    ctrl.abort();
    await done;
  });

  it('relists after backoff when the watch breaks; re-watches from the same resourceVersion when refused', async () => {
    const clock = new FakeClock();
    const { client, log } = scripted(
      [() => page([cm('a', '5')], '10'), () => page([cm('a', '5')], '30')],
      [() => refused(), () => new KubeTransportError('watch connection closed', 'GET', '/x')],
    );
    const { r, ctrl, done } = reflector(client, clock);
    await flushPromises(10);
    assert.deepEqual(log, ['list limit=2 continue=-', 'watch rv=10 bookmarks=true timeout=300']);
    await clock.advance(800);
    assert.deepEqual(log.slice(2), ['watch rv=10 bookmarks=true timeout=300'], 'refused: same resourceVersion, no relist');
    await clock.advance(1600);
    assert.deepEqual(log.slice(3), ['list limit=2 continue=-', 'watch rv=30 bookmarks=true timeout=300'], 'broken: relist');
    assert.equal(r.stats.errors, 2);
    ctrl.abort();
    await done;
  });

  it('never stops retrying a failing list, backing off exponentially', async () => {
    const clock = new FakeClock();
    const fail = () => new KubeApiError(503, 'ServiceUnavailable', 'apiserver shutting down', 'GET', '/x');
    const { client, log } = scripted([fail, fail, fail, fail, () => page([], '3')], []);
    const { r, ctrl, done } = reflector(client, clock);
    await flushPromises(10);
    for (const wait of [800, 1600, 3200, 6400]) {
      const before = log.length;
      await clock.advance(wait - 1);
      assert.equal(log.length, before, `no retry before ${wait} ms`);
      await clock.advance(1);
      assert.equal(log[before], "list limit=2 continue=-");
    }
    await flushPromises(10);
    assert.equal(r.hasSynced(), true);
    assert.equal(r.stats.errors, 4);
    ctrl.abort();
    await done;
  });

  it('restarts an expired paginated list without pagination', async () => {
    const clock = new FakeClock();
    const expired = new KubeApiError(410, 'Expired', 'continue token expired', 'GET', '/x');
    const { client, log } = scripted([() => page([cm('a', '1'), cm('b', '1')], '10', 'tok'), () => expired, () => page([cm('a', '1'), cm('b', '1'), cm('c', '1')], '11')], []);
    const { seen, ctrl, done } = reflector(client, clock);
    await flushPromises(10);
    assert.deepEqual(log.slice(0, 3), ['list limit=2 continue=-', 'list limit=2 continue=tok', 'list limit=- continue=-']);
    assert.deepEqual(seen, ['list(initial) a,b,c']);
    ctrl.abort();
    await done;
  });
});
