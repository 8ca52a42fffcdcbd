import assert from 'node:assert/strict';
import {
  GPU_QUOTA_ANNOTATION,
  checkGpuQuota,
  convertToV1alpha1,
  gpuDemand,
  parseGpuQuota,
  peakReplicas,
  splitReplicas,
  validateInferenceService,
  type InferenceService,
} from '../../../operator/api/index.js';
import { admissionHandler, type AdmissionRequest } from '../../../operator/runtime/webhook/admission.js';
import { WebhookBadRequest } from '../../../operator/runtime/webhook/server.js';
import { sampleV1 } from './fixtures.js';

const isvc = (name: string, gpus: number, maxReplicas = 1, extra: Partial<InferenceService['spec']> = {}) =>
  sampleV1({ name, spec: { resources: { gpu: { count: gpus } }, scaling: { minReplicas: 1, maxReplicas }, ...extra } });

describe('operator/api replica split', () => {
  it('gateway mode sizes the canary on its own: ceil(total × percent), at least one', () => {
    assert.deepEqual(splitReplicas(4, 10, 'gateway'), { stable: 4, canary: 1 });
    assert.deepEqual(splitReplicas(4, 50, 'gateway'), { stable: 4, canary: 2 });
    assert.deepEqual(splitReplicas(4, 0, 'gateway'), { stable: 4, canary: 0 });
    assert.deepEqual(splitReplicas(0, 50, 'gateway'), { stable: 0, canary: 0 });
  });

  it('replica mode keeps the total and splits pods by the percent', () => {
    assert.deepEqual(splitReplicas(10, 20, 'replicas'), { stable: 8, canary: 2 });
    assert.deepEqual(splitReplicas(4, 10, 'replicas'), { stable: 3, canary: 1 });
    assert.deepEqual(splitReplicas(4, 95, 'replicas'), { stable: 1, canary: 3 });
    assert.deepEqual(splitReplicas(1, 10, 'replicas'), { stable: 1, canary: 1 });
    assert.deepEqual(splitReplicas(3, 100, 'replicas'), { stable: 0, canary: 3 });
    assert.deepEqual(splitReplicas(3, 0, 'replicas'), { stable: 3, canary: 0 });
    assert.deepEqual(splitReplicas(3, undefined, 'replicas'), { stable: 3, canary: 0 });
  });

  it('the peak is the larger of both modes', () => {
    assert.deepEqual(peakReplicas(4, 50), { stable: 4, canary: 2 });
    assert.deepEqual(peakReplicas(1, 10), { stable: 1, canary: 1 });
    assert.deepEqual(peakReplicas(3, undefined), { stable: 3, canary: 0 });
  });
});

describe('operator/api GPU quota', () => {
  it('counts GPUs per replica times the most pods, canary included, or DRA device counts', () => {
    assert.deepEqual(gpuDemand(isvc('a', 2, 3)), { perReplica: 2, stableReplicas: 3, canaryReplicas: 0, total: 6 });
    assert.equal(gpuDemand(isvc('a', 2, 4, { canary: { trafficPercent: 25, runtime: { image: 'v2' } } })).total, 2 * (4 + 1));
    const dra = sampleV1({ spec: { resources: undefined, devices: [{ name: 'a', deviceClassName: 'gpu.nvidia.com', count: 2 }, { name: 'b', deviceClassName: 'gpu.nvidia.com' }] } });
    assert.equal(gpuDemand(dra).perReplica, 3);
    assert.equal(gpuDemand(isvc('cpu', 0, 5)).total, 0);
  });

  it('reads the quota annotation: absent means none, garbage is an error', () => {
    assert.deepEqual(parseGpuQuota(undefined), { ok: true, quota: undefined });
    assert.deepEqual(parseGpuQuota('8'), { ok: true, quota: 8 });
    assert.deepEqual(parseGpuQuota(' 0 '), { ok: true, quota: 0 });
    for (const bad of ['-1', '1.5', 'eight', '', '99999999999999999999']) assert.equal(parseGpuQuota(bad).ok, false, bad);
  });

  const existing = [isvc('a', 2, 2), isvc('b', 1, 1), isvc('cpu', 0, 10)];
  const quota = (n: string): Record<string, string> => ({ [GPU_QUOTA_ANNOTATION]: n });

  it('allows an object that fits and denies one that does not, with a clear message', () => {
    assert.deepEqual(checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('8'), existing, object: isvc('new', 3, 1) }), {
      allowed: true,
      warnings: [],
      demand: 3,
      used: 5,
      quota: 8,
    });
    const denied = checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('8'), existing, object: isvc('new', 2, 2) });
    assert.equal(denied.allowed, false);
    if (!denied.allowed) {
      assert.match(denied.message, /InferenceService "team-a\/new" needs 4 GPUs \(2 per replica × 2 replicas at spec.scaling.maxReplicas\)/);
      assert.match(denied.message, /GPU quota of 8 \(annotation inference\.olmpub\.dev\/gpu-quota\) and 5 are already claimed \(a: 4, b: 1\); 3 are free/);
    }
  });

  it('allows anything without a quota and denies everything that needs GPUs under a quota of 0', () => {
    assert.equal(checkGpuQuota({ namespace: 'n', namespaceAnnotations: undefined, existing, object: isvc('big', 8, 100) }).allowed, true);
    assert.equal(checkGpuQuota({ namespace: 'n', namespaceAnnotations: quota('0'), existing: [], object: isvc('g', 1) }).allowed, false);
    assert.equal(checkGpuQuota({ namespace: 'n', namespaceAnnotations: quota('0'), existing: [], object: isvc('cpu', 0, 3) }).allowed, true);
  });

  it('does not count the object itself twice on update', () => {
    const d = checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('5'), existing, object: isvc('a', 2, 2), oldObject: isvc('a', 2, 2) });
    assert.equal(d.allowed, true);
    if (d.allowed) assert.equal(d.used, 1);
  });

  it('allows an update that does not add GPUs even over quota, with a warning', () => {
    const d = checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('2'), existing, object: isvc('a', 1, 2), oldObject: isvc('a', 2, 2) });
    assert.equal(d.allowed, true);
    if (d.allowed) assert.match(d.warnings[0]!, /over its GPU quota.*does not add GPUs/);
    const grow = checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('2'), existing, object: isvc('a', 2, 3), oldObject: isvc('a', 2, 2) });
    assert.equal(grow.allowed, false);
  });

  it('rejects when the annotation is invalid, saying how to fix it', () => {
    const d = checkGpuQuota({ namespace: 'team-a', namespaceAnnotations: quota('lots'), existing, object: isvc('x', 1) });
    assert.equal(d.allowed, false);
    if (!d.allowed) assert.match(d.message, /invalid GPU quota.*kubectl annotate namespace team-a inference\.olmpub\.dev\/gpu-quota=8/);
  });
});

describe('operator/api admission', () => {
  const request = (over: Partial<AdmissionRequest<unknown>>): AdmissionRequest<unknown> => ({
    uid: 'uid-1',
    userInfo: { username: 'alice' },
    kind: { group: 'inference.olmpub.dev', version: 'v1', kind: 'InferenceService' },
    resource: { group: 'inference.olmpub.dev', version: 'v1', resource: 'inferenceservices' },
    namespace: 'team-a',
    operation: 'CREATE',
    ...over,
  });
  const review = (req: AdmissionRequest<unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
  const ns = { annotations: { [GPU_QUOTA_ANNOTATION]: '4' }, inferenceServices: [isvc('a', 2, 1)] };
  // what the operator registers at its validation path, with the namespace lookup fixed
  const quotaWebhook = admissionHandler<unknown>((r) => validateInferenceService(r, ns));
  type Answer = { response: { uid: string; allowed: boolean; status?: { code: number; reason: string; message: string }; warnings?: string[] } };

  it('answers an AdmissionReview through the runtime handler, echoing the uid', async () => {
    const ok = await quotaWebhook(review(request({ object: isvc('new', 2) })), undefined as never);
    assert.deepEqual(ok, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'uid-1', allowed: true } });
    const denied = (await quotaWebhook(review(request({ object: isvc('new', 3) })), undefined as never)) as Answer;
    assert.equal(denied.response.uid, 'uid-1');
    assert.equal(denied.response.allowed, false);
    assert.equal(denied.response.status?.code, 403);
    assert.equal(denied.response.status?.reason, 'Forbidden');
    assert.match(denied.response.status!.message, /needs 3 GPUs/);
  });

  it('carries the over-quota warning of a change that adds no GPUs', async () => {
    const over = { annotations: { [GPU_QUOTA_ANNOTATION]: '1' }, inferenceServices: [isvc('a', 2, 1)] };
    const answer = (await admissionHandler<unknown>((r) => validateInferenceService(r, over))(
      review(request({ operation: 'UPDATE', object: isvc('a', 2, 1, { runtime: { image: 'example.com/rt:2' } }), oldObject: isvc('a', 2, 1) })),
      undefined as never,
    )) as Answer;
    assert.equal(answer.response.allowed, true);
    assert.match(answer.response.warnings![0]!, /over its GPU quota/);
  });

  it('rejects a malformed review as a bad request (HTTP 400)', async () => {
    await assert.rejects(async () => quotaWebhook({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x', operation: 'CREATE' } }, undefined as never), WebhookBadRequest);
    await assert.rejects(async () => quotaWebhook({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, undefined as never), /uid/);
    await assert.rejects(async () => quotaWebhook(null, undefined as never), /expected an AdmissionReview/);
  });

  it('never blocks deletes, subresource writes or finalizer removal on a deleting object', () => {
    const full = { annotations: { [GPU_QUOTA_ANNOTATION]: '0' }, inferenceServices: [] };
    assert.equal(validateInferenceService(request({ operation: 'DELETE', oldObject: isvc('a', 8) }), full).allowed, true);
    assert.equal(validateInferenceService(request({ operation: 'UPDATE', subResource: 'status', object: isvc('a', 8) }), full).allowed, true);
    const deleting = sampleV1({ name: 'a', metadata: { deletionTimestamp: '2026-08-01T00:00:00Z' }, spec: { resources: { gpu: { count: 8 } } } });
    assert.equal(validateInferenceService(request({ operation: 'UPDATE', object: deleting, oldObject: deleting }), full).allowed, true);
    assert.equal(validateInferenceService(request({ operation: 'CREATE', object: isvc('a', 8) }), full).allowed, false);
  });

  it('converts v1alpha1 objects (request and namespace) before counting', () => {
    const alphaNew = convertToV1alpha1(isvc('new', 3));
    const alphaExisting = convertToV1alpha1(isvc('a', 2));
    const d = validateInferenceService(request({ object: alphaNew }), { annotations: { [GPU_QUOTA_ANNOTATION]: '4' }, inferenceServices: [alphaExisting] });
    assert.equal(d.allowed, false);
    assert.match(d.status!.message!, /needs 3 GPUs.*2 are already claimed/);
  });

  it('answers 400 when the object is not an InferenceService', () => {
    const d = validateInferenceService(request({ object: 'nope' }), ns);
    assert.deepEqual(d, { allowed: false, status: { code: 400, reason: 'BadRequest', message: 'request.object is not an InferenceService' } });
  });
});
