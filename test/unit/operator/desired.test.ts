import assert from 'node:assert/strict';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import {
  DESIRED_HASH_ANNOTATION,
  DOWNLOAD_SCRIPT,
  MODEL_DIR,
  cacheKey,
  desiredState,
  type DesiredContext,
} from '../../../operator/controller/desired.js';
import { ACTIVATE_ANNOTATION, type InferenceService } from '../../../operator/api/index.js';
import { Rng, clean, randomV1, sampleV1 } from './fixtures.js';

const NOW = new Date('2026-08-02T12:00:00Z');
const ctx = (over: Partial<DesiredContext> = {}): DesiredContext => ({ now: NOW, gatewayAPI: false, ...over });
const gatewayCtx = (over: Partial<DesiredContext> = {}) => ctx({ gatewayAPI: true, gateway: { name: 'inference', namespace: 'gateways' }, ingressDomain: 'models.example.com', ...over });
const server = (d: V1Deployment): V1Container => d.spec!.template.spec!.containers.find((c) => c.name === 'server')!;
const envOf = (c: V1Container) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

describe('operator/controller desiredState', () => {
  describe('a plain InferenceService (storage URI, one GPU, no gateway)', () => {
    const isvc = sampleV1();
    const d = desiredState(isvc, ctx());

    it('makes a Deployment and a Service, owned by the InferenceService and labelled', () => {
      assert.deepEqual(d.objects.map((o) => `${o.kind}/${o.metadata!.name}`), ['Deployment/llama', 'Service/llama']);
      for (const o of d.objects) {
        assert.equal(o.metadata!.namespace, 'team-a');
        assert.deepEqual(o.metadata!.ownerReferences, [
          { apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService', name: 'llama', uid: '1111-2222', controller: true, blockOwnerDeletion: true },
        ]);
        assert.equal(o.metadata!.labels!['app.kubernetes.io/instance'], 'llama');
        assert.equal(o.metadata!.labels!['app.kubernetes.io/managed-by'], 'olmpub-inference-operator');
        assert.match(o.metadata!.annotations![DESIRED_HASH_ANNOTATION]!, /^[0-9a-f]{32}$/);
      }
      assert.equal(d.stable.spec!.replicas, 1);
      assert.deepEqual(d.stable.spec!.selector.matchLabels, { 'inference.olmpub.dev/inferenceservice': 'llama', 'inference.olmpub.dev/track': 'stable' });
      assert.deepEqual(d.service.spec!.selector, { 'inference.olmpub.dev/inferenceservice': 'llama' });
      assert.deepEqual(d.service.spec!.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }]);
      assert.equal(d.url, 'http://llama.team-a.svc.cluster.local');
      assert.equal(d.selector, 'inference.olmpub.dev/inferenceservice=llama');
      assert.equal(d.trafficMode, 'replicas');
      assert.equal(d.scaledToZero, undefined);
    });

    it('downloads the model in an init container, passing the URI as an argument, into an emptyDir', () => {
      const pod = d.stable.spec!.template.spec!;
      assert.equal(pod.initContainers?.length, 1);
      const init = pod.initContainers![0]!;
      assert.equal(init.name, 'model-download');
      assert.deepEqual(init.command!.slice(0, 2), ['/bin/sh', '-c']);
      assert.equal(init.command![2], DOWNLOAD_SCRIPT);
      assert.ok(!DOWNLOAD_SCRIPT.includes('hf://'));
      assert.deepEqual(init.command!.slice(5), ['hf://meta-llama/Llama-3.1-8B-Instruct', '/mnt/model-store/model']);
      assert.deepEqual(pod.volumes!.find((v) => v.name === 'model'), { name: 'model', emptyDir: {} });
      assert.deepEqual(server(d.stable).volumeMounts!.find((m) => m.name === 'model'), { name: 'model', mountPath: MODEL_DIR, subPath: 'model', readOnly: true });
    });

    it('probes the health path: startup budget from startupTimeout, readiness = model loaded', () => {
      const c = server(d.stable);
      const get = { path: '/health', port: 'http' };
      assert.deepEqual(c.startupProbe, { httpGet: get, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 120 });
      assert.deepEqual(c.readinessProbe, { httpGet: get, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3, successThreshold: 1 });
      assert.deepEqual(c.livenessProbe?.httpGet, get);
      assert.deepEqual(c.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
      assert.equal(d.stable.spec!.progressDeadlineSeconds, 1200 + 600);
      const slow = desiredState(sampleV1({ spec: { runtime: { image: 'x', healthPath: '/v2/health/ready', startupTimeout: '1h', port: 8000 } } }), ctx());
      assert.equal(server(slow.stable).startupProbe!.failureThreshold, 360);
      assert.equal(server(slow.stable).readinessProbe!.httpGet!.path, '/v2/health/ready');
      assert.equal(server(slow.stable).ports![0]!.containerPort, 8000);
    });

    it('requests the GPUs as an extended resource and tells the runtime where the model is', () => {
      const c = server(d.stable);
      assert.deepEqual(c.resources, { requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } });
      assert.deepEqual(envOf(c), { OLMPUB_MODEL_NAME: 'meta-llama/Llama-3.1-8B-Instruct', OLMPUB_MODEL_DIR: '/mnt/models' });
      assert.deepEqual(c.args, ['--model', '/mnt/models']);
      const pod = d.stable.spec!.template.spec!;
      assert.equal(pod.enableServiceLinks, false);
      assert.equal(pod.automountServiceAccountToken, false);
      assert.deepEqual(pod.volumes!.find((v) => v.name === 'shm'), { name: 'shm', emptyDir: { medium: 'Memory' } });
    });

    it('lists the children that must not exist', () => {
      assert.deepEqual(d.absent.map((a) => `${a.kind}/${a.name}`), ['Deployment/llama-canary', 'Service/llama-stable', 'Service/llama-canary', 'ResourceClaimTemplate/llama-devices']);
    });
  });

  it('is deterministic and pure; the hash follows the content', () => {
    const r = new Rng(11);
    for (let i = 0; i < 100; i++) {
      const isvc = randomV1(r);
      const copy = structuredClone(isvc);
      const c = i % 2 ? gatewayCtx({ canaryReadyReplicas: i % 3 }) : ctx({ lastRequestTime: '2026-08-02T11:50:00Z' });
      const a = desiredState(isvc, c);
      assert.equal(JSON.stringify(desiredState(isvc, c)), JSON.stringify(a));
      assert.deepEqual(isvc, copy);
      assert.ok(a.objects.length >= 2);
    }
    const base = desiredState(sampleV1(), ctx());
    const changed = desiredState(sampleV1({ spec: { runtime: { image: 'vllm/vllm-openai:v0.12.0' } } }), ctx());
    const hash = (d: typeof base) => d.stable.metadata!.annotations![DESIRED_HASH_ANNOTATION];
    assert.notEqual(hash(changed), hash(base));
    assert.equal(changed.service.metadata!.annotations![DESIRED_HASH_ANNOTATION], base.service.metadata!.annotations![DESIRED_HASH_ANNOTATION]);
  });

  it('mounts a model PVC read-only without downloading', () => {
    const d = desiredState(sampleV1({ spec: { model: { name: 'm', pvc: { claimName: 'models', subPath: 'llama/8b' } } } }), ctx());
    const pod = d.stable.spec!.template.spec!;
    assert.equal(pod.initContainers, undefined);
    assert.deepEqual(pod.volumes![0], { name: 'model', persistentVolumeClaim: { claimName: 'models', readOnly: true } });
    assert.deepEqual(server(d.stable).volumeMounts![0], { name: 'model', mountPath: MODEL_DIR, readOnly: true, subPath: 'llama/8b' });
  });

  it('downloads once onto a model-cache PVC, in a directory keyed by the URI, with the credentials Secret', () => {
    const uri = 's3://bucket/llama';
    const d = desiredState(sampleV1({ spec: { model: { name: 'm', storageUri: uri, cache: { claimName: 'cache' }, credentialsSecretName: 's3-creds' } } }), ctx());
    const pod = d.stable.spec!.template.spec!;
    const key = cacheKey(uri);
    assert.match(key, /^[0-9a-f]{16}$/);
    assert.notEqual(cacheKey('s3://bucket/other'), key);
    assert.deepEqual(pod.volumes![0], { name: 'model-cache', persistentVolumeClaim: { claimName: 'cache' } });
    assert.deepEqual(pod.initContainers![0]!.command!.slice(5), [uri, `/mnt/model-store/models/${key}`]);
    assert.deepEqual(pod.initContainers![0]!.envFrom, [{ secretRef: { name: 's3-creds' } }]);
    assert.deepEqual(server(d.stable).volumeMounts![0], { name: 'model-cache', mountPath: MODEL_DIR, subPath: `models/${key}`, readOnly: true });
  });

  it('asks for DRA devices through a ResourceClaimTemplate instead of a GPU count', () => {
    const isvc = clean(
      sampleV1({
        spec: {
          resources: { requests: { cpu: 4, memory: '64Gi' } },
          devices: [
            { name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 2, selectors: [{ cel: { expression: 'device.attributes["gpu.nvidia.com"].productName == "H100"' } }] },
            { name: 'nic', deviceClassName: 'rdma.example.com' },
          ],
        },
      }),
    );
    const d = desiredState(isvc, ctx());
    assert.equal(d.objects[0]!.kind, 'ResourceClaimTemplate');
    assert.equal(d.resourceClaimTemplate!.metadata!.name, 'llama-devices');
    assert.deepEqual(d.resourceClaimTemplate!.spec.spec.devices!.requests, [
      { name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', allocationMode: 'ExactCount', count: 2, selectors: [{ cel: { expression: 'device.attributes["gpu.nvidia.com"].productName == "H100"' } }] } },
      { name: 'nic', exactly: { deviceClassName: 'rdma.example.com', allocationMode: 'ExactCount', count: 1 } },
    ]);
    const pod = d.stable.spec!.template.spec!;
    assert.deepEqual(pod.resourceClaims, [{ name: 'devices', resourceClaimTemplateName: 'llama-devices' }]);
    assert.deepEqual(server(d.stable).resources, { requests: { cpu: '4', memory: '64Gi' }, claims: [{ name: 'devices' }] });
    assert.ok(!d.absent.some((a) => a.kind === 'ResourceClaimTemplate'));
  });

  it('copies placement onto the pods', () => {
    const placement = {
      nodeSelector: { 'nvidia.com/gpu.product': 'H100' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }] } },
      priorityClassName: 'inference-high',
    };
    const pod = desiredState(sampleV1({ spec: { placement } }), ctx()).stable.spec!.template.spec!;
    assert.deepEqual(pod.nodeSelector, placement.nodeSelector);
    assert.deepEqual(pod.tolerations, placement.tolerations);
    assert.deepEqual(pod.affinity, placement.affinity);
    assert.equal(pod.priorityClassName, 'inference-high');
  });

  it('lets runtime.env override the OLMPUB_* variables by name', () => {
    const c = server(desiredState(sampleV1({ spec: { runtime: { image: 'x', env: [{ name: 'OLMPUB_MODEL_DIR', value: '/models' }, { name: 'HF_HOME', value: '/tmp' }] } } }), ctx()).stable);
    assert.deepEqual(c.env, [
      { name: 'OLMPUB_MODEL_NAME', value: 'meta-llama/Llama-3.1-8B-Instruct' },
      { name: 'OLMPUB_MODEL_DIR', value: '/models' },
      { name: 'HF_HOME', value: '/tmp' },
    ]);
  });

  it('replaces GPU pods in place when other replicas keep serving, and surges a single replica', () => {
    const many = desiredState(sampleV1({ spec: { scaling: { minReplicas: 3, maxReplicas: 3 } } }), ctx());
    assert.deepEqual(many.stable.spec!.strategy!.rollingUpdate, { maxSurge: 0, maxUnavailable: 1 });
    assert.deepEqual(desiredState(sampleV1(), ctx()).stable.spec!.strategy!.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
  });

  describe('canary', () => {
    const canarySpec = {
      scaling: { minReplicas: 4, maxReplicas: 4 },
      runtime: { image: 'vllm:1', args: ['--a'], env: [{ name: 'A', value: '1' }, { name: 'B', value: '1' }] },
      canary: { trafficPercent: 25, runtime: { image: 'vllm:2', env: [{ name: 'B', value: '2' }] }, model: { name: 'llama-v2', storageUri: 's3://b/v2' } },
    };
    const isvc = sampleV1({ spec: canarySpec });

    it('without a gateway: one Service over both tracks, pods split by the percent', () => {
      const d = desiredState(isvc, ctx());
      assert.deepEqual(d.replicas, { total: 4, stable: 3, canary: 1 });
      assert.equal(d.canary!.metadata!.name, 'llama-canary');
      assert.equal(d.canary!.spec!.replicas, 1);
      assert.equal(d.canary!.spec!.template.metadata!.labels!['inference.olmpub.dev/track'], 'canary');
      const c = server(d.canary!);
      assert.equal(c.image, 'vllm:2');
      assert.deepEqual(c.args, ['--a']);
      assert.deepEqual(envOf(c), { OLMPUB_MODEL_NAME: 'llama-v2', OLMPUB_MODEL_DIR: '/mnt/models', A: '1', B: '2' });
      assert.deepEqual(d.canary!.spec!.template.spec!.initContainers![0]!.command!.slice(5, 6), ['s3://b/v2']);
      assert.equal(server(d.stable).image, 'vllm:1');
      assert.deepEqual(d.service.spec!.selector, { 'inference.olmpub.dev/inferenceservice': 'llama' });
      assert.equal(d.httpRoute, undefined);
      assert.equal(d.canaryTrafficPercent, 25);
      assert.ok(!d.absent.some((a) => a.kind === 'Deployment'));
    });

    it('with a gateway: per-track Services and an HTTPRoute that weights the canary once it is ready', () => {
      const before = desiredState(isvc, gatewayCtx());
      assert.equal(before.trafficMode, 'gateway');
      assert.deepEqual(before.replicas, { total: 5, stable: 4, canary: 1 });
      assert.deepEqual(before.trackServices.map((s) => [s.metadata!.name, s.spec!.selector]), [
        ['llama-stable', { 'inference.olmpub.dev/inferenceservice': 'llama', 'inference.olmpub.dev/track': 'stable' }],
        ['llama-canary', { 'inference.olmpub.dev/inferenceservice': 'llama', 'inference.olmpub.dev/track': 'canary' }],
      ]);
      const route = before.httpRoute!;
      assert.deepEqual(route.spec.parentRefs, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'inference', namespace: 'gateways' }]);
      assert.deepEqual(route.spec.hostnames, ['llama.team-a.models.example.com']);
      assert.deepEqual(route.spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight]), [['llama-stable', 100], ['llama-canary', 0]]);
      assert.equal(before.canaryTrafficPercent, 0);
      const after = desiredState(isvc, gatewayCtx({ canaryReadyReplicas: 1 }));
      assert.deepEqual(after.httpRoute!.spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight]), [['llama-stable', 75], ['llama-canary', 25]]);
      assert.equal(after.canaryTrafficPercent, 25);
      assert.equal(after.url, 'http://llama.team-a.models.example.com');
      assert.deepEqual(after.objects.map((o) => o.kind), ['Deployment', 'Deployment', 'Service', 'Service', 'Service', 'HTTPRoute']);
    });

    it('rolled back (0 %) keeps the canary Deployment at zero replicas', () => {
      const d = desiredState(sampleV1({ spec: { ...canarySpec, canary: { ...canarySpec.canary, trafficPercent: 0 } } }), ctx());
      assert.deepEqual(d.replicas, { total: 4, stable: 4, canary: 0 });
      assert.equal(d.canary!.spec!.replicas, 0);
    });

    it('with a gateway but no canary: one backend, the canary Service and Deployment absent', () => {
      const d = desiredState(sampleV1(), gatewayCtx());
      assert.deepEqual(d.httpRoute!.spec.rules[0]!.backendRefs, [{ group: '', kind: 'Service', name: 'llama-stable', port: 80, weight: 1 }]);
      assert.deepEqual(d.absent.map((a) => a.name), ['llama-canary', 'llama-canary', 'llama-devices']);
    });

    it('with the Gateway API but no Gateway configured: replica split, and any old HTTPRoute is absent', () => {
      const d = desiredState(isvc, ctx({ gatewayAPI: true }));
      assert.equal(d.trafficMode, 'replicas');
      assert.ok(d.absent.some((a) => a.kind === 'HTTPRoute' && a.name === 'llama'));
    });
  });

  describe('scale to zero', () => {
    const zeroable = (over: { annotations?: Record<string, string>; replicas?: number; status?: InferenceService['status'] } = {}) => ({
      ...sampleV1({
        metadata: { creationTimestamp: '2026-08-02T10:00:00Z', ...(over.annotations ? { annotations: over.annotations } : {}) },
        spec: { scaling: { minReplicas: 0, maxReplicas: 2, replicas: over.replicas ?? 2, idleTimeout: '15m' } },
      }),
      ...(over.status ? { status: over.status } : {}),
    });

    it('goes to zero after idleTimeout with no traffic signal', () => {
      const d = desiredState(zeroable(), ctx());
      assert.deepEqual(d.replicas, { total: 0, stable: 0, canary: 0 });
      assert.equal(d.stable.spec!.replicas, 0);
      assert.deepEqual(d.scaledToZero, { reason: 'IdleTimeout', since: '2026-08-02T10:15:00Z', lastActivityTime: '2026-08-02T10:00:00Z' });
      assert.equal(d.requeueAfterSeconds, undefined);
    });

    it('stays up while traffic is recent, and asks to be reconciled at the idle deadline', () => {
      const d = desiredState(zeroable(), ctx({ lastRequestTime: new Date('2026-08-02T11:55:00Z') }));
      assert.equal(d.replicas.total, 2);
      assert.equal(d.scaledToZero, undefined);
      assert.equal(d.requeueAfterSeconds, 600);
    });

    it('wakes up on the activation annotation (a timestamp counts as traffic then)', () => {
      const d = desiredState(zeroable({ annotations: { [ACTIVATE_ANNOTATION]: '2026-08-02T11:59:00Z' } }), ctx());
      assert.equal(d.replicas.total, 2);
      assert.equal(d.requeueAfterSeconds, 14 * 60);
      const old = desiredState(zeroable({ annotations: { [ACTIVATE_ANNOTATION]: '2026-08-02T11:00:00Z' } }), ctx());
      assert.equal(old.replicas.total, 0);
      assert.equal(old.scaledToZero!.since, '2026-08-02T11:15:00Z');
    });

    it('stays awake while the annotation holds any other value', () => {
      const d = desiredState(zeroable({ annotations: { [ACTIVATE_ANNOTATION]: 'hold' } }), ctx());
      assert.equal(d.replicas.total, 2);
      assert.equal(d.requeueAfterSeconds, undefined);
    });

    it('honours replicas 0 from the scale subresource, keeping the since time; activation still wakes it', () => {
      const first = desiredState(zeroable({ replicas: 0 }), ctx({ lastRequestTime: '2026-08-02T11:59:00Z' }));
      assert.equal(first.replicas.total, 0);
      assert.deepEqual(first.scaledToZero, { reason: 'ReplicasZero', since: '2026-08-02T12:00:00Z', lastActivityTime: '2026-08-02T11:59:00Z' });
      const later = desiredState(zeroable({ replicas: 0, status: { scaledToZero: first.scaledToZero } }), ctx({ now: new Date('2026-08-02T13:00:00Z') }));
      assert.equal(later.scaledToZero!.since, '2026-08-02T12:00:00Z');
      const woken = desiredState(zeroable({ replicas: 0, annotations: { [ACTIVATE_ANNOTATION]: '2026-08-02T11:59:30Z' } }), ctx());
      assert.equal(woken.replicas.total, 1);
    });

    it('never scales to zero when minReplicas is above 0, and clamps replicas into the bounds', () => {
      const d = desiredState(sampleV1({ metadata: { creationTimestamp: '2020-01-01T00:00:00Z' }, spec: { scaling: { minReplicas: 2, maxReplicas: 5, replicas: 9 } } }), ctx());
      assert.equal(d.replicas.total, 5);
      assert.equal(d.scaledToZero, undefined);
      const low = desiredState(sampleV1({ spec: { scaling: { minReplicas: 2, maxReplicas: 5, replicas: 0 } } }), ctx());
      assert.equal(low.replicas.total, 2);
    });
  });
});
