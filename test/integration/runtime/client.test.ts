import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { KubeApiError, isConflict, isNotFound } from '../../../operator/runtime/kube/errors.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { eventually } from '../../support/env.js';
import { CM, client, createNamespace, deleteNamespace } from './support.js';

const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as const;
type Widget = KubeObject & { spec?: { size?: number; color?: string }; status?: { phase?: string } };

describe('runtime/kube: client against the real apiserver', function () {
  this.timeout(120_000);
  let c: KubeClient;
  let ns: string;
  const metrics = new RuntimeMetrics({ defaultMetrics: false });
  const group = `rt${randomBytes(3).toString('hex')}.olmpub.dev`;
  const WIDGET = { apiVersion: `${group}/v1`, kind: 'Widget' };

  before(async () => {
    c = client({ onResponse: metrics.onRestResponse });
    ns = await createNamespace(c, 'rt-client');
    await c.create({
      ...CRD,
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
                  status: { type: 'object', properties: { phase: { type: 'string' } } },
                },
              },
            },
          },
        ],
      },
    } as KubeObject);
    await eventually('the CRD is established', async () => {
      const crd = await c.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(CRD, `widgets.${group}`);
      return crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    });
  });
  after(async () => {
    await c.delete(CRD, `widgets.${group}`, undefined, { ignoreNotFound: true });
    await deleteNamespace(c, ns);
    await c.close();
  });

  it('server-side applies a custom resource (kind resolved by discovery) and its status subresource', async () => {
    const before = c.writes.total;
    const w = await c.apply<Widget>({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, spec: { size: 1, color: 'red' } }, { fieldManager: 'olmpub-test' });
    assert.equal(w.kind, 'Widget');
    assert.equal(w.spec?.size, 1);
    const s = await c.applyStatus<Widget>({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, status: { phase: 'Ready' } }, { fieldManager: 'olmpub-test' });
    assert.equal(s.status?.phase, 'Ready');
    const again = await c.apply<Widget>({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, spec: { size: 2, color: 'red' } }, { fieldManager: 'olmpub-test' });
    assert.equal(again.status?.phase, 'Ready', 'a spec apply leaves status alone');
    assert.equal(again.spec?.size, 2);
    assert.equal(c.writes.total - before, 3);
    const by = c.writes.byResource();
    assert.ok((by[`widgets.${group}`] ?? 0) >= 2);
    assert.ok((by[`widgets.${group}/status`] ?? 0) >= 1);
    const managers = (again.metadata?.managedFields as { manager: string; subresource?: string }[]).map((f) => `${f.manager}${f.subresource ? `/${f.subresource}` : ''}`);
    assert.ok(managers.includes('olmpub-test') && managers.includes('olmpub-test/status'), managers.join(','));
  });

  it('reports a field-manager conflict as a typed 409 Conflict with the Status message', async () => {
    await assert.rejects(
      c.apply({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, spec: { size: 9 } }, { fieldManager: 'someone-else', force: false }),
      (err: unknown) => {
        assert.ok(err instanceof KubeApiError);
        assert.equal(err.status, 409);
        assert.equal(err.reason, 'Conflict');
        assert.ok(isConflict(err));
        assert.match(err.message, /conflict/i);
        assert.equal(err.code, 'KUBE_CONFLICT');
        return true;
      },
    );
    const forced = await c.apply<Widget>({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, spec: { size: 9 } }, { fieldManager: 'someone-else', force: true });
    assert.equal(forced.spec?.size, 9);
  });

  it('gets, lists with pagination, deletes, and types NotFound', async () => {
    for (let i = 0; i < 5; i++) await c.apply({ ...CM, metadata: { name: `p${i}`, namespace: ns, labels: { set: 'p' } }, data: { i: String(i) } }, { fieldManager: 'olmpub-test' });
    const first = await c.list(CM, { namespace: ns, labelSelector: 'set=p', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.metadata.continue);
    assert.equal(first.items[0]!.kind, 'ConfigMap', 'list items get apiVersion and kind');
    const all = await c.listAll(CM, { namespace: ns, labelSelector: 'set=p', pageSize: 2 });
    assert.deepEqual(all.items.map((o) => o.metadata?.name), ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.ok(all.metadata.resourceVersion);
    await c.delete(CM, 'p0', ns);
    await assert.rejects(c.get(CM, 'p0', ns), (err: unknown) => isNotFound(err) && (err as KubeApiError).status === 404);
    assert.equal(await c.tryGet(CM, 'p0', ns), undefined);
    assert.equal(await c.delete(CM, 'p0', ns, { ignoreNotFound: true }), undefined);
    assert.match(await metrics.text(), /rest_client_requests_total\{code="404",method="GET",host="127\.0\.0\.1:\d+"\} \d/);
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const agent = await (c as unknown as { agent(): Promise<import('node:https').Agent> }).agent();
    for (let i = 0; i < 5; i++) await c.get(CM, 'p1', ns);
    const sockets = Object.values(agent.sockets).flat().length + Object.values(agent.freeSockets).flat().length;
    assert.ok(sockets <= 2, `${sockets} sockets`);
  });
});
