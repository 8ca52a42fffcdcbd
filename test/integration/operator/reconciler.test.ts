/**
 * The InferenceService reconciler against the real control plane (default test environment; KWOK
 * makes pods Ready, so Deployments become Available). The operator runs in-process through the same
 * createOperator() as `olmpub operator run`, with its own client so its write requests can be counted.
 */
import assert from 'node:assert/strict';
import { promoteCanary, rollbackCanary, type InferenceService } from '../../../operator/api/index.js';
import { CLEANUP_FINALIZER, LABEL_ISVC, ACTIVATE_ANNOTATION } from '../../../operator/api/meta.js';
import { ISVC } from '../../../operator/controller/reconciler.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { isConflict } from '../../../operator/runtime/kube/errors.js';
import { eventually } from '../../support/env.js';
import {
  DEPLOYMENT,
  POD,
  REPLICA_SET,
  SERVICE,
  condition,
  createNamespace,
  deleteNamespace,
  ensureCRD,
  eventsFor,
  inferenceService,
  kube,
  metricValue,
  removeCRD,
  startInProcess,
  type Deployment,
  type InProcessOperator,
} from './support.js';

const T = 120_000;

describe('operator/reconciler: InferenceServices on the real apiserver (in-process operator)', function () {
  this.timeout(300_000);
  let c: KubeClient;
  let ns: string;
  let op: InProcessOperator;
  let createdCRD = false;

  const get = (name: string) => c.tryGet<InferenceService>(ISVC, name, ns);
  const deployment = (name: string) => c.tryGet<Deployment>(DEPLOYMENT, name, ns);
  const reasons = async (name: string) => (await eventsFor(c, ns, name)).map((e) => `${e.type}/${e.reason}`);
  const waitFor = <X>(what: string, fn: () => Promise<X | undefined | false | null>, ms = T) => eventually(what, fn, ms, 250);

  before(async () => {
    c = kube();
    createdCRD = await ensureCRD(c);
    ns = await createNamespace(c, 'op-reconcile');
    op = await startInProcess({ 'watch-namespace': ns, 'sync-period': '2s', 'max-concurrent-reconciles': '2' });
  });

  after(async function () {
    this.timeout(120_000);
    if (op && ns) {
      // Delete while the operator runs, so its finalizer is removed the regular way.
      const left = await c.list<InferenceService>(ISVC, { namespace: ns }).catch(() => ({ items: [] as InferenceService[] }));
      for (const o of left.items) await c.delete(ISVC, o.metadata!.name!, ns, { ignoreNotFound: true });
      await eventually('InferenceServices gone', async () => (await c.list(ISVC, { namespace: ns })).items.length === 0, 60_000).catch(() => undefined);
    }
    await op?.stop();
    if (ns) await deleteNamespace(c, ns);
    await removeCRD(c, createdCRD);
    await c?.close();
  });

  it('creates the Deployment and Service with owner references, adds the finalizer, reports Ready with replicas, url and observedGeneration, and records events', async () => {
    await c.create(inferenceService('llama', ns, { scaling: { minReplicas: 1, maxReplicas: 3, replicas: 2 } }));
    const d = await waitFor('the Deployment', () => deployment('llama'));
    const isvc = (await get('llama'))!;
    assert.equal(d.spec?.replicas, 2);
    assert.deepEqual(d.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]), [['InferenceService', 'llama', isvc.metadata!.uid, true, true]]);
    assert.equal(d.metadata?.labels?.[LABEL_ISVC], 'llama');
    assert.equal(d.spec?.template?.spec?.containers?.find((x) => x.name === 'server')?.image, 'registry.example/vllm:1.0');
    const svc = await waitFor('the Service', () => c.tryGet<{ spec?: { selector?: Record<string, string> } } & Deployment>(SERVICE, 'llama', ns));
    assert.deepEqual(svc.spec?.selector, { [LABEL_ISVC]: 'llama' });
    assert.ok(isvc.metadata?.finalizers?.includes(CLEANUP_FINALIZER), 'the cleanup finalizer is added');

    const ready = await waitFor('Ready with 2 ready replicas', async () => {
      const o = await get('llama');
      return condition(o, 'Ready')?.status === 'True' && o?.status?.readyReplicas === 2 && condition(o, 'Progressing')?.status === 'False' ? o : undefined;
    });
    assert.equal(ready.status?.observedGeneration, 1);
    assert.equal(ready.status?.replicas, 2);
    assert.equal(ready.status?.url, `http://llama.${ns}.svc.cluster.local`);
    assert.equal(condition(ready, 'Ready')?.reason, 'ModelLoaded');
    assert.equal(condition(ready, 'Progressing')?.reason, 'RolloutComplete');
    assert.equal(condition(ready, 'Degraded')?.status, 'False');
    for (const t of ['Ready', 'Progressing', 'Degraded']) assert.equal(condition(ready, t)?.observedGeneration, 1, `${t}.observedGeneration`);
    const deployed = (await deployment('llama'))!;
    assert.equal(deployed.status?.availableReplicas, 2, 'KWOK pods are Ready and the Deployment Available');
    await waitFor('a ModelLoaded event', async () => (await reasons('llama')).includes('Normal/ModelLoaded'));
  });

  it('rolls out a new image and scales on update; status follows the generation; Events say so', async () => {
    const before = (await get('llama'))!;
    await c.patch(ISVC, 'llama', ns, { spec: { runtime: { image: 'registry.example/vllm:1.1' } } }, 'merge');
    await waitFor('the new image in the Deployment', async () => (await deployment('llama'))?.spec?.template?.spec?.containers?.[0]?.image === 'registry.example/vllm:1.1');
    await waitFor('Ready at generation 2', async () => {
      const o = await get('llama');
      return o?.status?.observedGeneration === 2 && condition(o, 'Ready')?.status === 'True' && condition(o, 'Progressing')?.reason === 'RolloutComplete' && o.status.readyReplicas === 2;
    });
    await waitFor('a RolloutStarted event', async () => (await reasons('llama')).includes('Normal/RolloutStarted'));

    await c.patch(ISVC, 'llama', ns, { spec: { scaling: { replicas: 3 } } }, 'merge');
    await waitFor('3 replicas', async () => (await deployment('llama'))?.spec?.replicas === 3);
    const scaled = await waitFor('3 ready replicas in status', async () => {
      const o = await get('llama');
      return o?.status?.readyReplicas === 3 && o.status.observedGeneration === 3 ? o : undefined;
    });
    assert.equal(scaled.status?.replicas, 3);
    const events = await eventsFor(c, ns, 'llama', before.metadata!.uid);
    assert.ok(events.some((e) => e.reason === 'Scaled' && /2 → 3/.test(e.note ?? '')), `a Scaled event: ${events.map((e) => e.reason).join(', ')}`);
    assert.ok(events.every((e) => e.reportingController === 'inference.olmpub.dev/operator'));

    // A replica count changed behind the operator's back is put back.
    await c.patch(DEPLOYMENT, 'llama', ns, { spec: { replicas: 1 } }, 'merge');
    await waitFor('the replica count restored', async () => (await deployment('llama'))?.spec?.replicas === 3);
  });

  it('splits a canary by replica ratio, rolls it back, and promotes it', async () => {
    await c.create(
      inferenceService('mistral', ns, {
        scaling: { minReplicas: 1, maxReplicas: 4, replicas: 4 },
        canary: { trafficPercent: 25, runtime: { image: 'registry.example/vllm:2.0' } },
      }),
    );
    const canaryStatus = await waitFor('canary status with a ready canary pod', async () => {
      const o = await get('mistral');
      return o?.status?.canary?.readyReplicas === 1 && o.status.readyReplicas === 4 ? o : undefined;
    });
    assert.deepEqual(canaryStatus.status?.canary, { trafficPercent: 25, replicas: 1, readyReplicas: 1 });
    const stable = (await deployment('mistral'))!;
    const canary = (await deployment('mistral-canary'))!;
    assert.equal(stable.spec?.replicas, 3, 'stable keeps 3 of 4 pods');
    assert.equal(canary.spec?.replicas, 1, 'the canary gets 1 of 4 pods (25 %)');
    assert.equal(canary.spec?.template?.spec?.containers?.[0]?.image, 'registry.example/vllm:2.0');
    const svc = (await c.get<{ spec?: { selector?: Record<string, string> } } & Deployment>(SERVICE, 'mistral', ns))!;
    assert.deepEqual(svc.spec?.selector, { [LABEL_ISVC]: 'mistral' }, 'one Service selects the pods of both tracks');
    await waitFor('a CanaryTrafficShifted event', async () => (await reasons('mistral')).includes('Normal/CanaryTrafficShifted'));

    const current = (await get('mistral'))!;
    await c.patch(ISVC, 'mistral', ns, { spec: { canary: rollbackCanary(current).spec.canary } }, 'merge');
    await waitFor('the canary rolled back to 0 pods and stable to 4', async () => (await deployment('mistral-canary'))?.spec?.replicas === 0 && (await deployment('mistral'))?.spec?.replicas === 4);
    await waitFor('status: canary gets 0 %', async () => (await get('mistral'))?.status?.canary?.trafficPercent === 0);
    await waitFor('a CanaryRolledBack event', async () => (await reasons('mistral')).includes('Normal/CanaryRolledBack'));

    // promoteCanary() on a fresh read; the operator writes status meanwhile, so retry on a conflict.
    await eventually('the promotion written', async () => {
      const fresh = (await get('mistral'))!;
      try {
        return await c.replace(promoteCanary(fresh));
      } catch (err) {
        if (isConflict(err)) return undefined;
        throw err;
      }
    }, 30_000, 100);
    await waitFor('the stable track runs the canary version', async () => (await deployment('mistral'))?.spec?.template?.spec?.containers?.[0]?.image === 'registry.example/vllm:2.0');
    await waitFor('the canary Deployment is gone', async () => !(await deployment('mistral-canary')));
    const after = await waitFor('Ready without canary status', async () => {
      const o = await get('mistral');
      return o && !o.status?.canary && condition(o, 'Ready')?.status === 'True' && condition(o, 'Progressing')?.reason === 'RolloutComplete' ? o : undefined;
    });
    assert.equal(after.status?.readyReplicas, 4);
    await waitFor('a CanaryPromoted event', async () => (await reasons('mistral')).includes('Normal/CanaryPromoted'));
  });

  it('scales to zero after the idle timeout and back up on the activation annotation', async () => {
    await c.create(inferenceService('sleepy', ns, { scaling: { minReplicas: 0, maxReplicas: 2, replicas: 1, idleTimeout: '8s' } }));
    await waitFor('one replica while the creation counts as traffic', async () => (await deployment('sleepy'))?.spec?.replicas === 1);
    const asleep = await waitFor('scaled to zero', async () => {
      const o = await get('sleepy');
      return o?.status?.scaledToZero && (await deployment('sleepy'))?.spec?.replicas === 0 ? o : undefined;
    });
    assert.equal(asleep.status?.scaledToZero?.reason, 'IdleTimeout');
    assert.equal(condition(asleep, 'Ready')?.status, 'False');
    assert.equal(condition(asleep, 'Ready')?.reason, 'ScaledToZero');
    await waitFor('a ScaledToZero event', async () => (await reasons('sleepy')).includes('Normal/ScaledToZero'));

    // A timestamp wakes it for idleTimeout after that time, then it sleeps again.
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await c.patch(ISVC, 'sleepy', ns, { metadata: { annotations: { [ACTIVATE_ANNOTATION]: now } } }, 'merge');
    await waitFor('woken by the activation timestamp', async () => (await deployment('sleepy'))?.spec?.replicas === 1, 30_000);
    await waitFor('an Activated event', async () => (await reasons('sleepy')).includes('Normal/Activated'));
    await waitFor('asleep again after idleTimeout', async () => (await deployment('sleepy'))?.spec?.replicas === 0 && !!(await get('sleepy'))?.status?.scaledToZero);

    // Any other value holds it awake until the annotation is removed.
    await c.patch(ISVC, 'sleepy', ns, { metadata: { annotations: { [ACTIVATE_ANNOTATION]: 'hold' } } }, 'merge');
    const held = await waitFor('held awake and Ready', async () => {
      const o = await get('sleepy');
      return (await deployment('sleepy'))?.spec?.replicas === 1 && condition(o, 'Ready')?.status === 'True' ? o : undefined;
    });
    assert.equal(held.status?.scaledToZero, undefined);
    await c.patch(ISVC, 'sleepy', ns, { metadata: { annotations: { [ACTIVATE_ANNOTATION]: null } } }, 'merge');
    await waitFor('asleep once the hold is removed', async () => (await deployment('sleepy'))?.spec?.replicas === 0);
    const text = await op.operator.manager.metrics.text();
    assert.ok((metricValue(text, 'controller_runtime_reconcile_total', { controller: 'inferenceservice', result: 'requeue_after' }) ?? 0) > 0, 'the idle deadline is a RequeueAfter');
  });

  it('reports a spec the cluster rejects as Degraded/InvalidSpec (terminal, not retried) and recovers when it is fixed', async () => {
    await c.create(inferenceService('broken', ns, { placement: { nodeSelector: { 'not a label key!': 'x' } } }));
    const degraded = await waitFor('Degraded InvalidSpec', async () => {
      const o = await get('broken');
      return condition(o, 'Degraded')?.reason === 'InvalidSpec' ? o : undefined;
    });
    assert.equal(condition(degraded, 'Degraded')?.status, 'True');
    assert.match(condition(degraded, 'Degraded')!.message, /nodeSelector/);
    assert.equal(condition(degraded, 'Ready')?.status, 'False');
    assert.equal(await deployment('broken'), undefined);
    await waitFor('a Warning InvalidSpec event', async () => (await reasons('broken')).includes('Warning/InvalidSpec'));
    const text = await op.operator.manager.metrics.text();
    assert.ok((metricValue(text, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'inferenceservice' }) ?? 0) >= 1);

    await c.patch(ISVC, 'broken', ns, { spec: { placement: null } }, 'merge');
    const fixed = await waitFor('Ready after the fix', async () => {
      const o = await get('broken');
      return condition(o, 'Ready')?.status === 'True' && condition(o, 'Degraded')?.status === 'False' ? o : undefined;
    });
    assert.equal(fixed.status?.observedGeneration, 2);
    await waitFor('a Recovered event', async () => (await reasons('broken')).includes('Normal/Recovered'));
  });

  it('makes no write request in steady state: resyncs every 2 s reconcile everything and write nothing', async () => {
    const writes = op.client.writes;
    const stats = op.operator.controller.stats;
    // What the operator observes: a window only counts when none of it changed (the shared environment's
    // KWOK nodes flap NotReady now and then, and the operator rightly reports that in status).
    const world = async () => JSON.stringify((await Promise.all([DEPLOYMENT, POD].map((k) => c.list(k, { namespace: ns })))).map((l) => l.items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion])));
    const resyncs = (n: number, ms: number) => {
      const r = stats.reconciles;
      const t = Date.now();
      return eventually(`${n} reconciles`, async () => stats.reconciles >= r + n && Date.now() - t >= ms, 60_000, 100);
    };
    let windows = 0;
    for (;;) {
      windows++;
      await resyncs(8, 4_000); // let what is in flight finish
      const before = { world: await world(), total: writes.total, byResource: writes.byResource(), reconciles: stats.reconciles, ...op.operator.reconciler.stats };
      const started = Date.now();
      await resyncs(25, 10_000); // at least five resyncs of every object
      const changed = (await world()) !== before.world;
      if (changed && windows < 8) continue;
      assert.ok(!changed, 'the pods and Deployments kept changing in 8 windows');
      if (writes.total !== before.total) {
        const from = new Date(started).toISOString();
        console.log(op.logs.filter((l) => (JSON.parse(l) as { ts: string }).ts >= from && /status written|applied|deleted|"event"/.test(l)).join('\n'));
      }
      assert.deepEqual(writes.byResource(), before.byResource, 'no write of any kind, Events included');
      assert.equal(writes.total, before.total);
      const after = op.operator.reconciler.stats;
      assert.deepEqual([after.applies, after.statusWrites, after.deletes, after.finalizerWrites], [before.applies, before.statusWrites, before.deletes, before.finalizerWrites]);
      console.log(`      steady state: ${stats.reconciles - before.reconciles} reconciles in ${((Date.now() - started) / 1000).toFixed(1)} s, ${writes.total - before.total} writes (window ${windows})`);
      return;
    }
  });

  it('deletion runs the finalizer: children are deleted, then the object goes, leaving nothing behind', async () => {
    const isvc = (await get('llama'))!;
    await c.delete(ISVC, 'llama', ns);
    await waitFor('the InferenceService to be gone', async () => !(await get('llama')));
    const selector = `${LABEL_ISVC}=llama`;
    await waitFor('no Deployment, Service, ReplicaSet or Pod left', async () => {
      const lists = await Promise.all([DEPLOYMENT, SERVICE, REPLICA_SET, POD].map((k) => c.list(k, { namespace: ns, labelSelector: selector })));
      return lists.every((l) => l.items.length === 0);
    });
    const events = await eventsFor(c, ns, 'llama', isvc.metadata!.uid);
    const cleaned = events.find((e) => e.reason === 'CleanedUp');
    assert.ok(cleaned, `a CleanedUp event: ${events.map((e) => e.reason).join(', ')}`);
    assert.match(cleaned.note ?? '', /deleted 2 child object/);
  });
});
