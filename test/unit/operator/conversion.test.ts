import assert from 'node:assert/strict';
import {
  API_VERSION_V1,
  API_VERSION_V1ALPHA1,
  V1ALPHA1_FIELDS_ANNOTATION,
  V1_FIELDS_ANNOTATION,
  applyMergePatch,
  convertToV1,
  convertToV1alpha1,
  convertObject,
  mergePatchDiff,
  parsePvcUri,
  pvcUri,
  type InferenceService,
  type InferenceServiceV1alpha1,
  withDefaults,
} from '../../../operator/api/index.js';
import type { ConversionReview } from '../../../operator/runtime/webhook/conversion.js';
import { conversionHandler } from '../../../operator/runtime/webhook/conversion.js';
import { WebhookBadRequest } from '../../../operator/runtime/webhook/server.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { Rng, clean, randomV1, randomV1alpha1, sampleV1, schemaErrors } from './fixtures.js';

const N = 400;

describe('operator/api conversion', () => {
  describe('plain field mapping', () => {
    it('maps the flat v1alpha1 fields into the v1 structure and applies v1 defaults', () => {
      const alpha: InferenceServiceV1alpha1 = {
        apiVersion: API_VERSION_V1ALPHA1,
        kind: 'InferenceService',
        metadata: { name: 'llama', namespace: 'a' },
        spec: {
          modelName: 'llama',
          modelFormat: 'safetensors',
          modelUri: 'pvc://models/llama/8b',
          image: 'vllm:1',
          args: ['--x'],
          port: 9000,
          healthPath: '/health',
          gpus: 2,
          cpu: '4',
          memory: '32Gi',
          replicas: { min: 0, max: 3, desired: 2 },
          canaryImage: 'vllm:2',
          canaryModelUri: 's3://bucket/llama-v2',
          canaryPercent: 10,
          nodeSelector: { pool: 'gpu' },
          serviceType: 'ClusterIP',
        },
      };
      const v1 = convertToV1(alpha);
      assert.equal(v1.apiVersion, API_VERSION_V1);
      assert.deepEqual(v1.spec.model, { name: 'llama', format: 'safetensors', pvc: { claimName: 'models', subPath: 'llama/8b' } });
      assert.deepEqual(v1.spec.runtime, { image: 'vllm:1', args: ['--x'], port: 9000, healthPath: '/health', startupTimeout: '20m' });
      assert.deepEqual(v1.spec.resources, { requests: { cpu: '4', memory: '32Gi' }, gpu: { count: 2, resourceName: 'nvidia.com/gpu' } });
      assert.deepEqual(v1.spec.scaling, { minReplicas: 0, maxReplicas: 3, replicas: 2, idleTimeout: '15m' });
      assert.deepEqual(v1.spec.canary, { trafficPercent: 10, runtime: { image: 'vllm:2' }, model: { storageUri: 's3://bucket/llama-v2' } });
      assert.deepEqual(v1.spec.placement, { nodeSelector: { pool: 'gpu' } });
      // serviceType ClusterIP is v1alpha1's default: nothing to keep.
      assert.equal(v1.metadata?.annotations, undefined);
      assert.deepEqual(schemaErrors('v1', v1), []);
    });

    it('needs no annotation for an object the apiserver defaulted, when v1alpha1 can express it', () => {
      const alpha = convertToV1alpha1(withDefaults(sampleV1()));
      assert.equal(alpha.metadata?.annotations, undefined);
      assert.deepEqual(convertToV1(alpha), withDefaults(sampleV1()));
    });

    it('keeps a v1alpha1 field with no v1 home (serviceType) in the v1alpha1-fields annotation', () => {
      const alpha = convertToV1alpha1(withDefaults(sampleV1()));
      const withLB = { ...alpha, spec: { ...alpha.spec, serviceType: 'LoadBalancer' as const } };
      const v1 = convertToV1(withLB);
      assert.equal(v1.metadata?.annotations?.[V1ALPHA1_FIELDS_ANNOTATION], '{"spec":{"serviceType":"LoadBalancer"}}');
      assert.equal(convertToV1alpha1(v1).spec.serviceType, 'LoadBalancer');
      assert.equal(convertToV1alpha1(v1).metadata?.annotations, undefined);
    });

    it('keeps v1-only fields (devices, tolerations, env, the canary model name) in the v1-fields annotation', () => {
      const v1 = clean(sampleV1({
        spec: {
          resources: undefined,
          devices: [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 2 }],
          placement: { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] },
          canary: { trafficPercent: 5, model: { name: 'llama-v2', storageUri: 's3://b/v2' } },
        },
      }));
      const alpha = convertToV1alpha1(v1);
      assert.equal(alpha.spec.canaryModelUri, 's3://b/v2');
      assert.equal(alpha.spec.canaryPercent, 5);
      const kept = JSON.parse(alpha.metadata!.annotations![V1_FIELDS_ANNOTATION]!);
      assert.deepEqual(kept.spec.devices, [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 2 }]);
      assert.deepEqual(kept.spec.placement, { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] });
      assert.deepEqual(kept.spec.canary, { model: { name: 'llama-v2' } });
      // v1alpha1 defaults gpus to 0, which v1 would read as resources.gpu: the patch removes it again.
      assert.deepEqual(kept.spec.resources, null);
      assert.deepEqual(schemaErrors('v1alpha1', alpha), []);
      assert.deepEqual(convertToV1(alpha), v1);
    });

    it('derives the v1alpha1 phase from the v1 conditions', () => {
      const at = '2026-08-01T00:00:00Z';
      const cond = (type: string, status: 'True' | 'False') => ({ type, status, lastTransitionTime: at, reason: 'R', message: '' });
      const phase = (status: InferenceService['status']) => convertToV1alpha1({ ...sampleV1(), status }).status?.phase;
      assert.equal(phase({ conditions: [cond('Ready', 'True')] }), 'Ready');
      assert.equal(phase({ conditions: [cond('Ready', 'False'), cond('Degraded', 'True')] }), 'Failed');
      assert.equal(phase({ conditions: [cond('Ready', 'False'), cond('Progressing', 'True')] }), 'Loading');
      assert.equal(phase({ conditions: [] }), 'Pending');
      assert.equal(phase({ conditions: [cond('Ready', 'False')], scaledToZero: { reason: 'IdleTimeout', since: at } }), 'ScaledToZero');
    });

    it('parses and prints pvc:// URIs exactly', () => {
      for (const uri of ['pvc://c', 'pvc://c/', 'pvc://c/a/b', 'pvc://c//abs']) assert.equal(pvcUri(parsePvcUri(uri)!), uri);
      assert.deepEqual(parsePvcUri('pvc://claim/sub/dir'), { claimName: 'claim', subPath: 'sub/dir' });
      assert.equal(parsePvcUri('s3://bucket/x'), undefined);
    });
  });

  describe('lossless round trips (seeded random objects)', () => {
    it(`v1alpha1 → v1 → v1alpha1 gives the same object, ${N} objects`, () => {
      const r = new Rng(20260801);
      for (let i = 0; i < N; i++) {
        const alpha = randomV1alpha1(r);
        assert.deepEqual(schemaErrors('v1alpha1', alpha), [], `generated object ${i} is invalid`);
        const v1 = convertToV1(alpha);
        assert.deepEqual(schemaErrors('v1', v1), [], `v1 of object ${i} is invalid: ${JSON.stringify(v1)}`);
        assert.deepEqual(convertToV1alpha1(v1), alpha, `object ${i}: ${JSON.stringify(alpha)}`);
      }
    });

    it(`v1 → v1alpha1 → v1 gives the same object, ${N} objects`, () => {
      const r = new Rng(42);
      for (let i = 0; i < N; i++) {
        const v1 = randomV1(r);
        assert.deepEqual(schemaErrors('v1', v1), [], `generated object ${i} is invalid`);
        const alpha = convertToV1alpha1(v1);
        assert.deepEqual(schemaErrors('v1alpha1', alpha), [], `v1alpha1 of object ${i} is invalid: ${JSON.stringify(alpha)}`);
        assert.deepEqual(convertToV1(alpha), v1, `object ${i}: ${JSON.stringify(v1)}`);
      }
    });

    it('objects that already carry a kept-fields annotation round-trip too, annotation included', () => {
      const r = new Rng(7);
      let withAnnotation = 0;
      for (let i = 0; i < N; i++) {
        const alpha = convertToV1alpha1(randomV1(r)); // may hold v1-fields
        if (alpha.metadata?.annotations?.[V1_FIELDS_ANNOTATION]) withAnnotation++;
        assert.deepEqual(convertToV1alpha1(convertToV1(alpha)), alpha);
        const v1 = convertToV1(randomV1alpha1(r)); // may hold v1alpha1-fields
        assert.deepEqual(convertToV1(convertToV1alpha1(v1)), v1);
      }
      assert.ok(withAnnotation > N / 4, `only ${withAnnotation} objects exercised the annotation`);
    });

    it('conversion is pure: inputs are not modified and repeated calls agree', () => {
      const r = new Rng(99);
      for (let i = 0; i < 50; i++) {
        const v1 = randomV1(r);
        const copy = structuredClone(v1);
        const a = convertToV1alpha1(v1);
        assert.deepEqual(v1, copy);
        assert.deepEqual(convertToV1alpha1(v1), a);
        const a2 = structuredClone(a);
        convertToV1(a);
        assert.deepEqual(a, a2);
      }
    });
  });

  describe('edits made through the other version', () => {
    const v1 = sampleV1({
      spec: {
        runtime: { image: 'vllm:1', env: [{ name: 'A', value: '1' }] },
        placement: { nodeSelector: { pool: 'gpu' }, tolerations: [{ operator: 'Exists' }] },
        canary: { trafficPercent: 10, runtime: { image: 'vllm:2', args: ['--canary'] }, model: { name: 'v2' } },
      },
    });

    it('an edit of a field v1alpha1 has wins, kept v1-only fields survive', () => {
      const alpha = convertToV1alpha1(v1);
      const edited = { ...alpha, spec: { ...alpha.spec, image: 'vllm:3', canaryPercent: 50, nodeSelector: { pool: 'h100' } } };
      const back = convertToV1(edited);
      assert.equal(back.spec.runtime.image, 'vllm:3');
      assert.deepEqual(back.spec.runtime.env, [{ name: 'A', value: '1' }]);
      assert.deepEqual(back.spec.canary, { trafficPercent: 50, runtime: { image: 'vllm:2', args: ['--canary'] }, model: { name: 'v2' } });
      assert.deepEqual(back.spec.placement, { nodeSelector: { pool: 'h100' }, tolerations: [{ operator: 'Exists' }] });
      assert.equal(back.metadata?.annotations?.[V1_FIELDS_ANNOTATION], undefined);
    });

    it('removing the canary in v1alpha1 removes its kept v1-only fields too', () => {
      const alpha = convertToV1alpha1(v1);
      const { canaryImage: _i, canaryPercent: _p, canaryModelUri: _m, ...spec } = alpha.spec;
      void [_i, _p, _m];
      const back = convertToV1({ ...alpha, spec });
      assert.equal(back.spec.canary, undefined);
      assert.deepEqual(schemaErrors('v1', back), []);
    });

    it('switching the model from a PVC to a URI in v1alpha1 drops the kept PVC details', () => {
      const onPvc = sampleV1({ spec: { model: { name: 'm', pvc: { claimName: 'models', subPath: 'x' } } } });
      const alpha = convertToV1alpha1(onPvc);
      assert.equal(alpha.spec.modelUri, 'pvc://models/x');
      const back = convertToV1({ ...alpha, spec: { ...alpha.spec, modelUri: 's3://b/m' } });
      assert.deepEqual(back.spec.model, { name: 'm', storageUri: 's3://b/m' });
    });

    it('ignores a hand-edited annotation that is not a JSON object', () => {
      const alpha = convertToV1alpha1(sampleV1());
      const broken = { ...alpha, metadata: { ...alpha.metadata, annotations: { [V1_FIELDS_ANNOTATION]: '{not json', keep: 'me' } } };
      const v1 = convertToV1(broken);
      assert.deepEqual(v1.metadata?.annotations, { keep: 'me' });
      assert.equal(v1.spec.runtime.image, sampleV1().spec.runtime.image);
    });
  });

  describe('JSON merge patch', () => {
    it('diff then apply reproduces the target; equal values give no patch', () => {
      const r = new Rng(5);
      for (let i = 0; i < 200; i++) {
        const a = randomV1(r);
        const b = randomV1(r);
        assert.deepEqual(applyMergePatch(a, mergePatchDiff(a, b)), b);
        assert.equal(mergePatchDiff(a, structuredClone(a)), undefined);
      }
      assert.deepEqual(mergePatchDiff({ a: 1, b: { c: 2 } }, { b: { c: 3 } }), { a: null, b: { c: 3 } });
      assert.deepEqual(mergePatchDiff({ a: [1, 2] }, { a: [1] }), { a: [1] });
    });
  });

  describe('ConversionReview handler (the runtime handler over convertObject, as the operator serves it)', () => {
    const serve = conversionHandler((obj, desired) => convertObject(obj, desired) as KubeObject);
    const handleConversionReview = (body: unknown) => serve(body, undefined as never) as ConversionReview;
    const review = (desiredAPIVersion: string, objects: unknown[], uid = 'abc-123') => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid, desiredAPIVersion, objects },
    });

    it('echoes the uid and converts every object in order', () => {
      const r = new Rng(1);
      const objects = [randomV1(r), randomV1(r), randomV1(r)];
      const out = handleConversionReview(review(API_VERSION_V1ALPHA1, objects));
      assert.equal(out.apiVersion, 'apiextensions.k8s.io/v1');
      assert.equal(out.kind, 'ConversionReview');
      assert.equal(out.response?.uid, 'abc-123');
      assert.deepEqual(out.response?.result, { status: 'Success' });
      assert.equal(out.response?.convertedObjects.length, 3);
      out.response!.convertedObjects.forEach((o, i) => {
        assert.equal((o as InferenceServiceV1alpha1).apiVersion, API_VERSION_V1ALPHA1);
        assert.equal((o as InferenceServiceV1alpha1).metadata?.name, objects[i]!.metadata?.name);
      });
      const back = handleConversionReview(review(API_VERSION_V1, out.response!.convertedObjects, 'u2'));
      assert.deepEqual(back.response?.convertedObjects, objects);
    });

    it('passes objects already in the desired version through unchanged', () => {
      const obj = sampleV1();
      const out = handleConversionReview(review(API_VERSION_V1, [obj]));
      assert.deepEqual(out.response?.convertedObjects, [obj]);
    });

    it('fails with a message naming the object when one cannot be converted', () => {
      const out = handleConversionReview(review(API_VERSION_V1, [sampleV1(), { apiVersion: 'inference.olmpub.dev/v0', kind: 'InferenceService', metadata: { name: 'old', namespace: 'x' } }]));
      assert.equal(out.response?.uid, 'abc-123');
      assert.equal(out.response?.result.status, 'Failure');
      assert.match(out.response!.result.message!, /object 1 \(x\/old\).*inference\.olmpub\.dev\/v0/);
      assert.deepEqual(out.response?.convertedObjects, []);
    });

    it('fails on an unknown desired version; a malformed review is a bad request (HTTP 400)', () => {
      const unknown = handleConversionReview(review('inference.olmpub.dev/v2', [sampleV1()]));
      assert.equal(unknown.response?.result.status, 'Failure');
      assert.match(unknown.response!.result.message!, /served versions are/);
      assert.throws(() => handleConversionReview({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }), WebhookBadRequest);
      assert.throws(() => handleConversionReview('nope'), /expected a ConversionReview/);
      assert.throws(() => handleConversionReview(review(API_VERSION_V1, 'x' as unknown as unknown[])), /objects/);
    });
  });
});
