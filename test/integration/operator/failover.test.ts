/**
 * Leader failover between two `olmpub operator run` processes with the production lease settings
 * (15 s lease, 10 s renew deadline, 2 s retry period) on a real Lease: SIGKILL the leader, the standby
 * takes over once the lease expired and reconciles; at no sampled moment do both report
 * leader_election_master_status 1; a leader whose lease is taken away exits with code 1.
 */
import assert from 'node:assert/strict';
import type { InferenceService } from '../../../operator/api/index.js';
import { ISVC } from '../../../operator/controller/reconciler.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { formatMicroTime } from '../../../operator/runtime/leader/election.js';
import { LEASE, type Lease } from '../../../operator/runtime/leader/leaselock.js';
import { eventually } from '../../support/env.js';
import {
  condition,
  createNamespace,
  deleteNamespace,
  ensureCRD,
  httpGet,
  httpsGet,
  inferenceService,
  kube,
  metricValue,
  metricsReader,
  removeCRD,
  removeMetricsReader,
  spawnOperator,
  suffix,
  type OperatorProcess,
} from './support.js';

const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;

interface Sample {
  t: number;
  a?: number;
  b?: number;
  holder?: string;
}

describe('operator/failover: two operator processes, one Lease (real apiserver)', function () {
  this.timeout(300_000);
  let c: KubeClient;
  let ns: string;
  let createdCRD = false;
  let a: OperatorProcess;
  let b: OperatorProcess;
  let token: string;
  const id = suffix();
  const leaseName = `op-failover-${id}`;
  const readerRole = `op-failover-metrics-${id}`;
  const samples: Sample[] = [];
  let sampling = true;
  let sampler: Promise<void> | undefined;
  const ports: Record<string, number> = {};

  const master = async (p: OperatorProcess, port: number | undefined): Promise<number | undefined> => {
    if (p.exitCode !== undefined || port === undefined) return undefined;
    try {
      const r = await httpsGet(port, '/metrics', token);
      return r.status === 200 ? metricValue(r.body, 'leader_election_master_status', { name: leaseName }) : undefined;
    } catch {
      return undefined; // killed
    }
  };
  const holder = async () => (await c.tryGet<Lease>(LEASE, leaseName, ns))?.spec?.holderIdentity;
  const start = (name: string) =>
    spawnOperator(name, [
      '--webhook-bind-address',
      '0',
      '--watch-namespace',
      ns,
      '--leader-elect',
      '--leader-election-id',
      leaseName,
      '--leader-election-namespace',
      ns,
      '--leader-elect-lease-duration',
      `${LEASE_MS / 1000}s`,
      '--leader-elect-renew-deadline',
      `${RENEW_DEADLINE_MS / 1000}s`,
      '--leader-elect-retry-period',
      `${RETRY_MS / 1000}s`,
    ]);

  before(async () => {
    c = kube();
    createdCRD = await ensureCRD(c);
    ns = await createNamespace(c, 'op-failover');
    token = await metricsReader(c, ns, readerRole);
    a = start('operator-a');
    ports.a = await a.port('serving metrics');
    await eventually('a leads', async () => (await master(a, ports.a)) === 1, 60_000);
    b = start('operator-b');
    ports.b = await b.port('serving metrics');
    const probe = await b.port('starting health probe server');
    await eventually('the standby b is ready', async () => (await httpGet(probe, '/readyz')).status === 200, 120_000);
    sampler = (async () => {
      while (sampling) {
        const t = Date.now();
        const [va, vb, h] = await Promise.all([master(a, ports.a), master(b, ports.b), holder().catch(() => undefined)]);
        samples.push({ t, a: va, b: vb, holder: h });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  });

  after(async function () {
    this.timeout(120_000);
    sampling = false;
    await sampler;
    await Promise.all([a?.stop(), b?.stop()]);
    await removeMetricsReader(c, readerRole);
    if (ns) await deleteNamespace(c, ns);
    await removeCRD(c, createdCRD);
    await c?.close();
  });

  it('the standby takes over once the lease expired (lease duration + jittered retry periods) after the leader is SIGKILLed, and reconciles', async () => {
    await c.create(inferenceService('first', ns));
    await eventually('first Ready (reconciled by a)', async () => condition(await c.tryGet<InferenceService>(ISVC, 'first', ns), 'Ready')?.status === 'True', 120_000);
    assert.equal(await master(b, ports.b), 0, 'b is a standby');
    const bMetrics = (await httpsGet(ports.b, '/metrics', token)).body;
    assert.equal(metricValue(bMetrics, 'controller_runtime_reconcile_total', { controller: 'inferenceservice', result: 'success' }), 0, 'the standby reconciles nothing');
    assert.equal(await holder(), a.identity);
    const transitionsBefore = (await c.get<Lease>(LEASE, leaseName, ns)).spec?.leaseTransitions ?? 0;

    const killedAt = Date.now();
    a.kill('SIGKILL');
    await a.exited;
    const tookOver = await eventually('b leads', async () => ((await master(b, ports.b)) === 1 ? Date.now() : undefined), LEASE_MS + 3 * RETRY_MS + 10_000, 100);
    const failoverMs = tookOver - killedAt;
    console.log(`      failover after SIGKILL: ${(failoverMs / 1000).toFixed(1)} s (lease ${LEASE_MS / 1000} s, retry ${RETRY_MS / 1000} s)`);
    // The standby respects the dead leader's lease (it was renewed at most a retry period before the kill) ...
    assert.ok(failoverMs >= LEASE_MS - RETRY_MS - 1_000, `took over after ${failoverMs} ms, before the lease could expire`);
    // ... and takes over soon after it expired. client-go's algorithm (which the elector follows) judges
    // expiry by when the standby *observed* the last renewal, and the standby polls every retry period
    // with jitter factor 1.2 (2 s .. 4.4 s): so the bound is the lease duration plus two jittered retry
    // periods (one to observe the last renewal, one to act after expiry), plus sampling slack.
    assert.ok(failoverMs <= LEASE_MS + 2 * RETRY_MS * 2.2 + 1_000, `took over after ${failoverMs} ms`);
    const lease = await c.get<Lease>(LEASE, leaseName, ns);
    assert.equal(lease.spec?.holderIdentity, b.identity);
    assert.equal(lease.spec?.leaseTransitions, transitionsBefore + 1);

    await c.create(inferenceService('second', ns));
    await eventually('second Ready (reconciled by b)', async () => condition(await c.tryGet<InferenceService>(ISVC, 'second', ns), 'Ready')?.status === 'True', 120_000);

    const both = samples.filter((s) => s.a === 1 && s.b === 1);
    assert.deepEqual(both, [], 'never two leaders at once');
    const seenA = samples.filter((s) => s.a === 1).length;
    const seenB = samples.filter((s) => s.b === 1).length;
    assert.ok(seenA > 0 && seenB > 0, `samples saw both leaders in turn (a: ${seenA}, b: ${seenB}, of ${samples.length})`);
    // Whenever a process said it leads, the Lease named it (or had just been taken over by it).
    for (const s of samples) {
      if (s.a === 1) assert.notEqual(s.holder, b.identity, 'a claimed leadership while b held the Lease');
      if (s.b === 1) assert.notEqual(s.holder, a.identity, 'b claimed leadership while a held the Lease');
    }
  });

  it('a leader whose lease is taken exits with code 1 once the renew deadline passes ("leader election lost")', async () => {
    // Another identity keeps writing the Lease, as a partitioned leader would experience it.
    let stealing = true;
    const thief = (async () => {
      while (stealing) {
        try {
          const lease = await c.get<Lease>(LEASE, leaseName, ns);
          const now = Date.now();
          await c.replace<Lease>({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', renewTime: formatMicroTime(now), leaseDurationSeconds: LEASE_MS / 1000 } } as Lease);
        } catch {
          // conflict with b's renewal: try again
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const stolenAt = Date.now();
    await eventually('b to exit', async () => b.exitCode !== undefined, RENEW_DEADLINE_MS + 30_000, 100).finally(() => (stealing = false));
    const { code } = await b.exited;
    const lostAfter = Date.now() - stolenAt;
    stealing = false;
    await thief;
    console.log(`      leader exited ${(lostAfter / 1000).toFixed(1)} s after its lease was taken (renew deadline ${RENEW_DEADLINE_MS / 1000} s)`);
    assert.equal(code, 1, b.tail());
    assert.ok(b.find((l) => l.msg === 'leader election lost'), b.tail());
    assert.ok(lostAfter <= RENEW_DEADLINE_MS + 2 * RETRY_MS + 3_000, `exited after ${lostAfter} ms`);
  });
});
