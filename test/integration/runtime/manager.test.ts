import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { Manager } from '../../../operator/runtime/manager.js';
import { enqueueRequestsFromMapFunc } from '../../../operator/runtime/controller/handler.js';
import type { Controller } from '../../../operator/runtime/controller/controller.js';
import { LEASE, type Lease } from '../../../operator/runtime/leader/leaselock.js';
import { Logger } from '../../../operator/runtime/log.js';
import { EVENT } from '../../../operator/runtime/events.js';
import { eventually } from '../../support/env.js';
import { CM, client, createNamespace, deleteNamespace } from './support.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

function probe(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      })
      .on('error', reject);
  });
}

/**
 * A small controller: for every ConfigMap `src-<x>` it keeps `derived-<x>` with the same data, using
 * server-side apply only when the cached copy differs (so a resync writes nothing).
 */
function buildManager(c: KubeClient, ns: string, leaseName: string, identity: string, lost: string[]) {
  const mgr = new Manager({
    client: c,
    namespaces: [ns],
    syncPeriodMs: 1_000,
    leaderElection: true,
    leaderElectionID: leaseName,
    leaderElectionNamespace: ns,
    leaseDurationMs: 4_000,
    renewDeadlineMs: 2_500,
    retryPeriodMs: 500,
    leaderElectionReleaseOnCancel: true,
    identity,
    onLeadershipLost: () => lost.push(identity),
    healthProbeBindAddress: '127.0.0.1:0',
    metricsBindAddress: '127.0.0.1:0',
    gracefulShutdownTimeoutMs: 5_000,
    logger: new Logger({ level: 'error', sink: () => {} }),
  });
  const configMaps = mgr.informerFor<ConfigMap>(CM);
  const recorder = mgr.eventRecorder('olmpub.dev/runtime-test');
  const controller: Controller = mgr.newController('configmap-sync', {
    async reconcile(req) {
      if (!req.name.startsWith('src-')) return;
      const src = configMaps.get(req.name, req.namespace);
      if (!src) return;
      const name = `derived-${req.name.slice(4)}`;
      const current = configMaps.get(name, req.namespace);
      if (JSON.stringify(current?.data ?? null) === JSON.stringify(src.data ?? {})) return;
      await c.apply({ ...CM, metadata: { name, namespace: req.namespace }, data: src.data ?? {} }, { fieldManager: 'runtime-test' });
      recorder.normal(src, 'Synced', 'Apply', `derived ConfigMap ${name} updated`);
    },
  });
  controller.watch(configMaps).watch(
    configMaps,
    enqueueRequestsFromMapFunc((o) => (o.metadata?.name?.startsWith('derived-') ? [{ namespace: o.metadata.namespace ?? '', name: `src-${o.metadata.name.slice(8)}` }] : [])),
  );
  return { mgr, controller, configMaps, recorder };
}

describe('runtime/manager: probes, leader-gated controllers, events, steady state and shutdown (real apiserver)', function () {
  this.timeout(120_000);
  let c: KubeClient;
  let ns: string;
  const leaseName = `rt-manager-${randomBytes(3).toString('hex')}`;
  // Managers still running when an assertion fails are stopped here, so a failure never leaves the run hanging.
  const running: { ctrl: AbortController; done: Promise<void> }[] = [];

  before(async () => {
    c = client();
    ns = await createNamespace(c, 'rt-manager');
  });
  after(async () => {
    for (const r of running) r.ctrl.abort();
    await Promise.allSettled(running.map((r) => r.done));
    await deleteNamespace(c, ns);
    await c.close();
  });

  it('runs the controller on the leader only, keeps the standby ready, writes nothing in steady state, and hands over on shutdown', async () => {
    const lost: string[] = [];
    const a = buildManager(c, ns, leaseName, 'manager-a', lost);
    const aCtrl = new AbortController();
    const aDone = a.mgr.start(aCtrl.signal);
    running.push({ ctrl: aCtrl, done: aDone });
    await a.mgr.elected();
    await eventually('a is ready', async () => a.mgr.probes.port && (await probe(a.mgr.probes.port, '/readyz')).status === 200);
    assert.equal((await probe(a.mgr.probes.port!, '/healthz')).body, 'ok');
    assert.match((await probe(a.mgr.probes.port!, '/readyz?verbose')).body, /\[\+\]informers ok/);

    const b = buildManager(c, ns, leaseName, 'manager-b', lost);
    const bCtrl = new AbortController();
    const bDone = b.mgr.start(bCtrl.signal);
    running.push({ ctrl: bCtrl, done: bDone });
    await eventually('the standby is ready too', async () => b.mgr.probes.port && (await probe(b.mgr.probes.port, '/readyz')).status === 200);
    assert.equal(b.mgr.isLeader(), false);

    await c.apply({ ...CM, metadata: { name: 'src-one', namespace: ns }, data: { model: 'llama' } }, { fieldManager: 'runtime-test' });
    await eventually('the leader reconciles', async () => (await c.tryGet<ConfigMap>(CM, 'derived-one', ns))?.data?.model === 'llama');
    assert.equal(b.controller.stats.reconciles, 0, 'the standby does not reconcile');
    await a.recorder.flush();
    const events = await c.list<KubeObject & { reason?: string; regarding?: { name?: string } }>(EVENT, { namespace: ns });
    assert.ok(events.items.some((e) => e.reason === 'Synced' && e.regarding?.name === 'src-one'));

    // Steady state: resyncs (every ~1 s) reconcile again but write nothing.
    await eventually('a caught up', async () => a.configMaps.get('derived-one', ns)?.data?.model === 'llama');
    const writes = () => c.writes.count({ exclude: ['leases.coordination.k8s.io', 'events.events.k8s.io'] });
    const before = writes();
    const reconciles = a.controller.stats.reconciles;
    await eventually('two resyncs', async () => a.controller.stats.reconciles >= reconciles + 4, 20_000);
    assert.equal(writes(), before, 'a resync of an unchanged object writes nothing');

    const text = await a.mgr.metrics.text();
    assert.match(text, /controller_runtime_reconcile_total\{controller="configmap-sync",result="success"\} [1-9]/);
    assert.match(text, new RegExp(`leader_election_master_status\\{name="${leaseName}"\\} 1`));
    assert.match(text, /workqueue_adds_total\{name="configmap-sync",controller="configmap-sync"\} [1-9]/);
    assert.match(text, /rest_client_requests_total\{code="200",method="PUT",host="127\.0\.0\.1:\d+"\} [1-9]/, 'lease renewals');
    assert.match(text, /controller_runtime_active_workers\{controller="configmap-sync"\} 0/);

    // Graceful shutdown of the leader: the lease is released and the standby takes over at once.
    aCtrl.abort();
    await aDone;
    const lease = await c.get<Lease>(LEASE, leaseName, ns);
    assert.equal(lease.spec?.holderIdentity ?? '', '');
    await b.mgr.elected();
    await eventually('the new leader reconciles', async () => b.controller.stats.reconciles > 0);
    await c.apply({ ...CM, metadata: { name: 'src-one', namespace: ns }, data: { model: 'mistral' } }, { fieldManager: 'runtime-test' });
    await eventually('the new leader keeps the derived object in sync', async () => (await c.tryGet<ConfigMap>(CM, 'derived-one', ns))?.data?.model === 'mistral');
    bCtrl.abort();
    await bDone;
    assert.deepEqual(lost, []);
  });
});
