/**
 * `olmpub operator run` as a child process (the operator image's entrypoint) against the default
 * test environment: probes, JSON logs, /metrics behind TokenReview + SubjectAccessReview (401, 403,
 * 200 with real ServiceAccount tokens), the GPU quota webhook called by the real apiserver through a
 * ValidatingWebhookConfiguration on https://127.0.0.1:<port>, and a graceful SIGTERM.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { GPU_QUOTA_ANNOTATION, type InferenceService } from '../../../operator/api/index.js';
import { ISVC } from '../../../operator/controller/reconciler.js';
import { VALIDATION_PATH } from '../../../operator/main.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { KubeApiError } from '../../../operator/runtime/kube/errors.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { eventually } from '../../support/env.js';
import {
  DEPLOYMENT,
  SA,
  VWC,
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
  serviceAccountToken,
  spawnOperator,
  suffix,
  webhookCertDir,
  type OperatorProcess,
} from './support.js';

describe('operator/process: olmpub operator run (child process, real apiserver)', function () {
  this.timeout(300_000);
  let c: KubeClient;
  let ns: string;
  let createdCRD = false;
  let proc: OperatorProcess;
  let certs: { dir: string; caBundle: string };
  let probePort: number;
  let metricsPort: number;
  let webhookPort: number;
  let readerToken: string;
  let strangerToken: string;
  const id = suffix();
  const leaseName = `op-process-${id}`;
  const readerRole = `op-process-metrics-${id}`;
  const vwcName = `op-process-quota-${id}`;
  const deadVwcName = `op-process-dead-${id}`;

  before(async () => {
    c = kube();
    createdCRD = await ensureCRD(c);
    ns = await createNamespace(c, 'op-process', { [GPU_QUOTA_ANNOTATION]: '4' });
    certs = webhookCertDir();
    proc = spawnOperator('operator', [
      '--webhook-bind-address',
      '127.0.0.1:0',
      '--webhook-cert-dir',
      certs.dir,
      '--watch-namespace',
      ns,
      '--leader-elect',
      '--leader-election-id',
      leaseName,
      '--leader-election-namespace',
      ns,
    ]);
    [probePort, metricsPort, webhookPort] = await Promise.all([proc.port('starting health probe server'), proc.port('serving metrics'), proc.port('serving webhooks')]);
    readerToken = await metricsReader(c, ns, readerRole);
    await c.create({ ...SA, metadata: { name: 'stranger', namespace: ns } });
    strangerToken = await serviceAccountToken(c, ns, 'stranger');
  });

  after(async function () {
    this.timeout(120_000);
    if (proc?.exitCode === undefined && ns) {
      const left = await c.list<InferenceService>(ISVC, { namespace: ns }).catch(() => ({ items: [] as InferenceService[] }));
      for (const o of left.items) await c.delete(ISVC, o.metadata!.name!, ns, { ignoreNotFound: true });
      await eventually('InferenceServices gone', async () => (await c.list(ISVC, { namespace: ns })).items.length === 0, 60_000).catch(() => undefined);
    }
    await proc?.stop();
    await c.delete(VWC, vwcName, undefined, { ignoreNotFound: true });
    await c.delete(VWC, deadVwcName, undefined, { ignoreNotFound: true });
    await removeMetricsReader(c, readerRole);
    if (ns) await deleteNamespace(c, ns);
    await removeCRD(c, createdCRD);
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
    await c?.close();
  });

  it('serves /healthz and /readyz (ready once the caches synced and the webhook server answers)', async () => {
    await eventually('ready', async () => (await httpGet(probePort, '/readyz')).status === 200, 120_000);
    assert.deepEqual(await httpGet(probePort, '/healthz'), { status: 200, body: 'ok' });
    const verbose = await httpGet(probePort, '/readyz?verbose');
    assert.match(verbose.body, /\[\+\]informers ok/);
    assert.match(verbose.body, /\[\+\]webhook ok/);
  });

  it('leads and reconciles: an InferenceService gets its Deployment and a Ready status', async () => {
    await c.create(inferenceService('small', ns, { resources: { gpu: { count: 1 } } }));
    await eventually('Ready', async () => condition(await c.tryGet<InferenceService>(ISVC, 'small', ns), 'Ready')?.status === 'True', 120_000);
    const d = await c.get<KubeObject & { spec?: { template?: { spec?: { containers?: { resources?: { limits?: Record<string, string> } }[] } } } }>(DEPLOYMENT, 'small', ns);
    assert.equal(d.spec?.template?.spec?.containers?.[0]?.resources?.limits?.['nvidia.com/gpu'], '1');
  });

  it('refuses /metrics without a token (401) and to a ServiceAccount without the right (403)', async () => {
    const anonymous = await httpsGet(metricsPort, '/metrics');
    assert.equal(anonymous.status, 401);
    assert.equal((await httpsGet(metricsPort, '/metrics', 'not-a-token')).status, 401);
    const stranger = await httpsGet(metricsPort, '/metrics', strangerToken);
    assert.equal(stranger.status, 403);
    assert.match(stranger.body, new RegExp(`system:serviceaccount:${ns}:stranger`));
  });

  it('serves /metrics to a ServiceAccount token (TokenRequest API) bound to get /metrics', async () => {
    const r = await eventually('metrics for the reader', async () => {
      const res = await httpsGet(metricsPort, '/metrics', readerToken);
      return res.status === 200 ? res : undefined;
    }, 30_000);
    assert.equal(metricValue(r.body, 'leader_election_master_status', { name: leaseName }), 1);
    assert.ok((metricValue(r.body, 'controller_runtime_reconcile_total', { controller: 'inferenceservice', result: 'success' }) ?? 0) > 0);
    assert.notEqual(metricValue(r.body, 'workqueue_depth', { name: 'inferenceservice' }), undefined);
  });

  /** The quota webhook as the operator's install registers it, pointed at this process and this test's namespace. */
  const quotaWebhookConfiguration = (name: string, extra: Record<string, unknown>): KubeObject =>
    ({
      ...VWC,
      metadata: { name },
      webhooks: [
        {
          name: 'gpu-quota.inference.olmpub.dev',
          clientConfig: { url: `https://127.0.0.1:${webhookPort}${VALIDATION_PATH}`, caBundle: certs.caBundle },
          rules: [{ apiGroups: ['inference.olmpub.dev'], apiVersions: ['v1', 'v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['inferenceservices'], scope: 'Namespaced' }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          ...extra,
        },
      ],
    }) as KubeObject;

  it('the GPU quota webhook, called by the apiserver, rejects an over-quota InferenceService with a clear message', async () => {
    await c.create(quotaWebhookConfiguration(vwcName, { timeoutSeconds: 10 }));
    // `small` holds 1 GPU of 4. A dry run of 4 more is rejected once the apiserver has picked the webhook up.
    const over = inferenceService('big', ns, { resources: { gpu: { count: 2 } }, scaling: { minReplicas: 1, maxReplicas: 2, replicas: 1 } });
    const rejection = await eventually('the webhook to be in force', async () => {
      try {
        await c.create(over, { dryRun: true });
        return undefined;
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 403) return err;
        throw err;
      }
    }, 60_000);
    assert.match(rejection.apiStatus.message ?? '', new RegExp(`InferenceService "${ns}/big" needs 4 GPUs \\(2 per replica × 2 replicas at spec.scaling.maxReplicas\\)`));
    assert.match(rejection.apiStatus.message ?? '', /GPU quota of 4 .* 1 are already claimed \(small: 1\); 3 are free/);
    await assert.rejects(c.create(over), (err: unknown) => err instanceof KubeApiError && err.status === 403);
    assert.equal(await c.tryGet(ISVC, 'big', ns), undefined);

    // What fits is admitted; lowering the quota never blocks an edit that does not add GPUs.
    await c.create(inferenceService('fits', ns, { resources: { gpu: { count: 3 } } }));
    await c.patch({ apiVersion: 'v1', kind: 'Namespace' }, ns, undefined, { metadata: { annotations: { [GPU_QUOTA_ANNOTATION]: '2' } } }, 'merge');
    await eventually('the lower quota to reach the cache', async () => {
      try {
        await c.create(inferenceService('tiny', ns, { resources: { gpu: { count: 1 } } }), { dryRun: true });
        return false;
      } catch (err) {
        return err instanceof KubeApiError && err.status === 403;
      }
    }, 30_000);
    await c.patch(ISVC, 'fits', ns, { spec: { runtime: { args: ['--max-model-len=4096'] } } }, 'merge');
    const text = (await httpsGet(metricsPort, '/metrics', readerToken)).body;
    assert.ok((metricValue(text, 'controller_runtime_webhook_requests_total', { webhook: VALIDATION_PATH, code: '200' }) ?? 0) >= 4);
  });

  it('stops gracefully on SIGTERM (exit 0) and logs JSON lines only', async () => {
    // Delete the objects first, while the operator runs, so the finalizers are handled.
    await c.delete(VWC, vwcName, undefined, { ignoreNotFound: true });
    for (const n of ['small', 'fits']) await c.delete(ISVC, n, ns, { ignoreNotFound: true });
    await eventually('InferenceServices gone', async () => (await c.list(ISVC, { namespace: ns })).items.length === 0, 60_000);
    const { code } = await proc.stop();
    assert.equal(code, 0, proc.tail());
    assert.deepEqual(proc.garbage, [], 'every stderr line is a JSON log entry');
    assert.ok(proc.find((l) => l.msg === 'received signal, shutting down gracefully'));
    assert.equal(proc.lines.at(-1)?.msg, 'the operator stopped');
    for (const l of proc.lines) assert.ok(l.ts && l.level && l.msg, JSON.stringify(l));
    await assert.rejects(httpGet(probePort, '/healthz'), 'the probe server is closed');
  });

  it('rescue from Terminating with the operator gone: the finalizer comes off by hand; a webhook that is down blocks it unless matchConditions skip deleted objects', async () => {
    assert.notEqual(proc.exitCode, undefined, 'the operator is stopped');
    await c.create(inferenceService('orphaned', ns, {}, { finalizers: ['inference.olmpub.dev/cleanup'] }));
    await c.delete(ISVC, 'orphaned', ns);
    const stuck = await c.get<InferenceService>(ISVC, 'orphaned', ns);
    assert.ok(stuck.metadata?.deletionTimestamp, 'Terminating: nobody removes the finalizer');

    // The quota webhook as installed, but its server is gone (failurePolicy Fail).
    const webhook = (matchConditions?: unknown[]) => quotaWebhookConfiguration(deadVwcName, matchConditions ? { matchConditions } : {});
    await c.apply(webhook(), { fieldManager: 'olmpub-test' });
    const rescue = () => c.patch(ISVC, 'orphaned', ns, { metadata: { finalizers: null } }, 'merge');
    const blocked = await eventually('the dead webhook to block the rescue', async () => {
      try {
        await c.create(inferenceService('probe', ns), { dryRun: true });
        return undefined;
      } catch (err) {
        return err instanceof KubeApiError && /failed calling webhook/.test(err.apiStatus.message ?? '') ? err : undefined;
      }
    }, 30_000);
    assert.ok(blocked);
    await assert.rejects(rescue(), (err: unknown) => err instanceof KubeApiError && /failed calling webhook/.test(err.apiStatus.message ?? ''));

    // With a matchCondition that skips objects being deleted, the same webhook lets the rescue through.
    await c.apply(webhook([{ name: 'not-being-deleted', expression: '!has(object.metadata.deletionTimestamp)' }]), { fieldManager: 'olmpub-test' });
    await eventually('the rescue to pass', async () => (await rescue().then(() => true, () => false)), 30_000);
    await eventually('the object gone', async () => !(await c.tryGet(ISVC, 'orphaned', ns)), 30_000);
    await assert.rejects(c.create(inferenceService('probe', ns), { dryRun: true }), /failed calling webhook/, 'the webhook still guards live objects');
    await c.delete(VWC, deadVwcName);
  });
});
