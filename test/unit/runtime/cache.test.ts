import assert from 'node:assert/strict';
import { Store, deepFreeze } from '../../../operator/runtime/cache/store.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';

const cm = (ns: string, name: string, rv: string, labels: Record<string, string> = {}): KubeObject & { data?: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: ns, name, resourceVersion: rv, labels },
  data: { k: 'v' },
});

describe('runtime/cache: Store', () => {
  it('indexes by namespace and by custom indexers, and keeps indexes current on update and delete', () => {
    const s = new Store({ byApp: (o) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []) });
    s.upsert(cm('a', 'x', '1', { app: 'web' }));
    s.upsert(cm('a', 'y', '1', { app: 'db' }));
    s.upsert(cm('b', 'x', '1', { app: 'web' }));
    assert.deepEqual(s.list('a').map((o) => o.metadata?.name), ['x', 'y']);
    assert.deepEqual(s.byIndex('byApp', 'web').map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`), ['a/x', 'b/x']);
    s.upsert(cm('a', 'x', '2', { app: 'db' }));
    assert.deepEqual(s.byIndex('byApp', 'web').map((o) => o.metadata?.namespace), ['b']);
    assert.deepEqual(s.byIndex('byApp', 'db').map((o) => o.metadata?.name), ['x', 'y']);
    s.remove('a/y');
    assert.deepEqual(s.byIndex('byApp', 'db').map((o) => o.metadata?.name), ['x']);
    assert.equal(s.getByName('b', 'x')?.metadata?.resourceVersion, '1');
    assert.throws(() => s.byIndex('nope', 'x'), /no index/);
  });

  it('an indexer added later indexes existing objects', () => {
    const s = new Store();
    s.upsert(cm('a', 'x', '1', { tier: 'gpu' }));
    s.addIndexer('tier', (o) => [o.metadata?.labels?.tier ?? '']);
    assert.equal(s.byIndex('tier', 'gpu').length, 1);
  });

  it('freezes stored objects deeply, so a mutation throws instead of corrupting the cache', () => {
    const s = new Store();
    s.upsert(cm('a', 'x', '1'));
    const got = s.get('a/x') as KubeObject & { data: Record<string, string> };
    assert.throws(() => {
      got.data.k = 'changed';
    }, TypeError);
    assert.throws(() => {
      got.metadata!.labels!.new = '1';
    }, TypeError);
    const copy = structuredClone(got);
    copy.data.k = 'changed';
    assert.equal((s.get('a/x') as typeof got).data.k, 'v');
    assert.equal(Object.isFrozen(deepFreeze({ a: { b: [1] } }).a.b), true);
  });

  it('replace reports added, updated (with old and new) and deleted, within a namespace scope', () => {
    const s = new Store();
    s.upsert(cm('a', 'keep', '1'));
    s.upsert(cm('a', 'gone', '1'));
    s.upsert(cm('b', 'other', '1'));
    const changes = s.replace([cm('a', 'keep', '2'), cm('a', 'new', '1')], 'a');
    assert.deepEqual(changes.added.map((o) => o.metadata?.name), ['new']);
    assert.deepEqual(changes.updated.map(([o, n]) => [o.metadata?.resourceVersion, n.metadata?.resourceVersion]), [['1', '2']]);
    assert.deepEqual(changes.deleted.map((o) => o.metadata?.name), ['gone']);
    assert.ok(s.get('b/other'), 'another namespace is out of scope');
    const all = s.replace([]);
    assert.equal(all.deleted.length, 3);
    assert.equal(s.size, 0);
  });
});
