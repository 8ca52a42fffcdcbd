/**
 * Test support for the operator API: a seeded PRNG, generators of random valid InferenceServices in
 * both versions (valid against the schema and its CEL rules), and a JSON-schema validator built from
 * the CRD's own schemas (CEL rules are checked by the real apiserver in the integration tests).
 */
import AjvModule from 'ajv';
import type { InferenceService, InferenceServiceV1alpha1, JSONSchemaProps } from '../../../operator/api/index.js';
import { API_VERSION_V1, API_VERSION_V1ALPHA1, KIND, inferenceServiceSchemaV1, inferenceServiceSchemaV1alpha1 } from '../../../operator/api/index.js';

/** mulberry32: small, fast, good enough to explore shapes; same seed, same sequence. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
  /** `value()` with probability p, else undefined. */
  maybe<T>(value: () => T, p = 0.5): T | undefined {
    return this.bool(p) ? value() : undefined;
  }
  dns(prefix = ''): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let s = prefix + 'abcdefghijklmnopqrstuvwxyz'[this.int(0, 25)]!;
    const n = this.int(0, 10);
    for (let i = 0; i < n; i++) s += alphabet[this.int(0, alphabet.length - 1)]!;
    return s;
  }
  list<T>(min: number, max: number, make: (i: number) => T): T[] {
    return Array.from({ length: this.int(min, max) }, (_, i) => make(i));
  }
}

/** Drops undefined properties (recursively), as JSON would. */
export function clean<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const time = (r: Rng) => new Date(Date.UTC(2026, r.int(0, 11), r.int(1, 28), r.int(0, 23), r.int(0, 59), r.int(0, 59))).toISOString().replace(/\.\d{3}Z$/, 'Z');
const quantity = (r: Rng) => r.pick<string | number>([1, 2, '500m', '4', '16Gi', '1.5', '100Mi', 8]);
const uri = (r: Rng) => r.pick(['s3', 'gs', 'hf', 'https']) + '://' + r.dns() + '/' + r.dns();
const duration = (r: Rng) => r.pick(['30s', '5m', '15m', '1h', '1h30m', '2h5m10s', '90s']);

function metadata(r: Rng) {
  return {
    name: r.dns('m'),
    namespace: r.dns('ns'),
    uid: `${r.int(1000, 9999)}-uid`,
    generation: r.int(1, 40),
    resourceVersion: String(r.int(1, 99999)),
    creationTimestamp: time(r),
    labels: r.maybe(() => ({ team: r.dns(), tier: r.pick(['gold', 'silver']) })),
    annotations: r.maybe(() => ({ 'example.com/owner': r.dns(), note: 'hello "world"' })),
    finalizers: r.maybe(() => ['inference.olmpub.dev/cleanup']),
  };
}

function conditions(r: Rng) {
  return r.list(0, 3, (i) => ({
    type: ['Ready', 'Progressing', 'Degraded'][i]!,
    status: r.pick(['True', 'False', 'Unknown'] as const),
    observedGeneration: r.int(1, 40),
    lastTransitionTime: time(r),
    reason: r.pick(['ModelLoaded', 'ModelLoading', 'AsExpected', 'ScaledToZero', 'RolloutComplete']),
    message: r.pick(['', 'all good', '1/2 replicas ready']),
  }));
}

const env = (r: Rng) =>
  r.list(1, 3, (i) =>
    r.bool(0.7)
      ? { name: `VAR_${i}`, value: r.pick(['1', 'x', '']) }
      : { name: `SECRET_${i}`, valueFrom: { secretKeyRef: { name: r.dns(), key: r.dns(), ...(r.bool() ? { optional: r.bool() } : {}) } } },
  );

const toleration = (r: Rng) =>
  r.pick([
    { key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const },
    { key: 'dedicated', operator: 'Equal' as const, value: 'inference', effect: 'NoExecute' as const, tolerationSeconds: r.int(0, 3600) },
    { operator: 'Exists' as const },
  ]);

const affinity = (r: Rng) =>
  clean({
    nodeAffinity: r.maybe(() => ({
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu.product', operator: 'In' as const, values: [r.pick(['A100', 'H100', 'L4'])] }] }],
      },
      preferredDuringSchedulingIgnoredDuringExecution: r.maybe(() => [{ weight: r.int(1, 100), preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' as const }] } }]),
    })),
    podAntiAffinity: r.maybe(() => ({
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: r.int(1, 100), podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: r.dns() } } } },
      ],
    })),
  });

/** A random valid v1 InferenceService (schema and CEL rules). */
export function randomV1(r: Rng): InferenceService {
  const pvc = () => clean({ claimName: r.dns('pvc'), subPath: r.maybe(() => r.pick(['', 'models/llama', 'a/b/c', '/abs'])) });
  const storageFromUri = r.bool(0.6);
  const useDevices = r.bool(0.3);
  const min = r.int(0, 4);
  const max = r.int(Math.max(1, min), 8);
  const canaryKind = r.int(0, 3);
  const spec = {
    model: {
      name: r.pick(['meta-llama/Llama-3.1-8B-Instruct', 'mistral', 'bert-base']),
      format: r.maybe(() => r.pick(['safetensors', 'gguf', 'onnx'])),
      ...(storageFromUri ? { storageUri: uri(r), cache: r.maybe(() => ({ claimName: r.dns('cache') }), 0.4) } : { pvc: pvc() }),
      credentialsSecretName: r.maybe(() => r.dns('creds'), 0.3),
    },
    runtime: {
      image: r.pick(['vllm/vllm-openai:v0.11.0', 'nvcr.io/nvidia/tritonserver:25.08-py3', 'ghcr.io/huggingface/text-generation-inference:3']),
      args: r.maybe(() => r.list(0, 4, (i) => `--arg${i}=${r.int(0, 9)}`)),
      env: r.maybe(() => env(r), 0.4),
      port: r.maybe(() => r.int(1, 65535)),
      healthPath: r.maybe(() => r.pick(['/health', '/v2/health/ready', '/healthz'])),
      startupTimeout: r.maybe(() => duration(r), 0.3),
    },
    resources: clean({
      requests: r.maybe(() => clean({ cpu: r.maybe(() => quantity(r)), memory: r.maybe(() => quantity(r)), 'ephemeral-storage': r.maybe(() => quantity(r), 0.3) })),
      limits: r.maybe(() => ({ memory: quantity(r) }), 0.3),
      gpu: useDevices ? undefined : clean({ count: r.int(0, 8), resourceName: r.maybe(() => r.pick(['nvidia.com/gpu', 'amd.com/gpu']), 0.3) }),
    }),
    devices: useDevices
      ? r.list(1, 3, (i) =>
          clean({
            name: `dev${i}`,
            deviceClassName: r.pick(['gpu.nvidia.com', 'gpu.example.com']),
            count: r.maybe(() => r.int(1, 4)),
            selectors: r.maybe(() => [{ cel: { expression: 'device.attributes["gpu.nvidia.com"].productName == "H100"' } }]),
          }),
        )
      : undefined,
    scaling: r.maybe(() => clean({ minReplicas: r.bool(0.8) ? min : undefined, maxReplicas: max, replicas: r.maybe(() => r.int(0, 8)), idleTimeout: r.maybe(() => duration(r)) }), 0.7),
    canary:
      canaryKind === 0
        ? undefined
        : clean({
            trafficPercent: r.int(0, 100),
            runtime: canaryKind !== 2 ? clean({ image: r.maybe(() => 'vllm/vllm-openai:v0.12.0', 0.8), args: r.maybe(() => ['--x']), env: r.maybe(() => env(r), 0.3) }) : undefined,
            model:
              canaryKind !== 1
                ? clean({
                    name: r.maybe(() => 'llama-v2'),
                    format: r.maybe(() => 'gguf', 0.3),
                    ...(r.bool() ? { storageUri: uri(r) } : r.bool() ? { pvc: pvc() } : {}),
                  })
                : undefined,
          }),
    placement: r.maybe(() =>
      clean({
        nodeSelector: r.maybe(() => ({ 'nvidia.com/gpu.product': r.pick(['A100', 'H100']) })),
        tolerations: r.maybe(() => r.list(1, 2, () => toleration(r))),
        affinity: r.maybe(() => affinity(r)),
        priorityClassName: r.maybe(() => 'inference-high'),
      }),
    ),
  };
  if (spec.resources && Object.keys(spec.resources).length === 0) delete (spec as { resources?: unknown }).resources;
  const status = r.maybe(() =>
    clean({
      observedGeneration: r.maybe(() => r.int(1, 40)),
      conditions: r.maybe(() => conditions(r)),
      replicas: r.maybe(() => r.int(0, 8)),
      readyReplicas: r.maybe(() => r.int(0, 8)),
      selector: r.maybe(() => 'inference.olmpub.dev/inferenceservice=x'),
      url: r.maybe(() => 'http://x.ns.svc.cluster.local'),
      canary: r.maybe(() => ({ trafficPercent: r.int(0, 100), replicas: r.int(0, 3), readyReplicas: r.int(0, 3) }), 0.3),
      scaledToZero: r.maybe(() => clean({ reason: r.pick(['IdleTimeout', 'ReplicasZero'] as const), since: time(r), lastActivityTime: r.maybe(() => time(r)) }), 0.3),
    }),
  );
  return clean({ apiVersion: API_VERSION_V1, kind: KIND, metadata: metadata(r), spec, status }) as InferenceService;
}

/** A random valid v1alpha1 InferenceService. */
export function randomV1alpha1(r: Rng): InferenceServiceV1alpha1 {
  const alphaUri = () => (r.bool(0.3) ? `pvc://${r.dns('pvc')}${r.pick(['', '/', '/models/x', '//abs'])}` : uri(r));
  const min = r.int(0, 4);
  const hasCanary = r.bool(0.4);
  const spec = {
    modelName: r.pick(['llama', 'mistral', 'bert']),
    modelFormat: r.maybe(() => 'safetensors'),
    modelUri: alphaUri(),
    cachePvc: r.maybe(() => r.dns('cache'), 0.3),
    image: r.pick(['vllm/vllm-openai:v0.9.0', 'tritonserver:24.01']),
    args: r.maybe(() => r.list(0, 3, (i) => `--a${i}`)),
    port: r.maybe(() => r.int(1, 65535)),
    healthPath: r.maybe(() => '/v2/health/ready'),
    gpus: r.maybe(() => r.int(0, 8), 0.7),
    cpu: r.maybe(() => quantity(r)),
    memory: r.maybe(() => quantity(r)),
    replicas: r.maybe(() => clean({ min: r.maybe(() => min), max: r.int(Math.max(1, min), 8), desired: r.maybe(() => r.int(0, 8)) }), 0.7),
    canaryImage: hasCanary ? r.maybe(() => 'vllm/vllm-openai:v0.10.0') : undefined,
    canaryModelUri: hasCanary ? r.maybe(() => alphaUri()) : undefined,
    canaryPercent: hasCanary ? r.int(0, 100) : undefined,
    nodeSelector: r.maybe(() => ({ pool: r.dns() })),
    serviceType: r.maybe(() => r.pick(['ClusterIP', 'NodePort', 'LoadBalancer'] as const)),
  };
  const status = r.maybe(() =>
    clean({
      phase: r.maybe(() => r.pick(['Pending', 'Loading', 'Ready', 'Failed', 'ScaledToZero'] as const)),
      observedGeneration: r.maybe(() => r.int(1, 9)),
      conditions: r.maybe(() => conditions(r)),
      replicas: r.maybe(() => r.int(0, 5)),
      readyReplicas: r.maybe(() => r.int(0, 5)),
      selector: r.maybe(() => 'inference.olmpub.dev/inferenceservice=x'),
      url: r.maybe(() => 'http://x'),
    }),
  );
  return clean({ apiVersion: API_VERSION_V1ALPHA1, kind: KIND, metadata: metadata(r), spec, status }) as InferenceServiceV1alpha1;
}

/** A minimal valid v1 object for targeted tests. */
export function sampleV1(overrides: { name?: string; namespace?: string; spec?: Partial<InferenceService['spec']>; metadata?: Partial<InferenceService['metadata']> & object } = {}): InferenceService {
  return {
    apiVersion: API_VERSION_V1,
    kind: KIND,
    metadata: {
      name: overrides.name ?? 'llama',
      namespace: overrides.namespace ?? 'team-a',
      uid: '1111-2222',
      generation: 3,
      creationTimestamp: '2026-08-01T10:00:00Z',
      ...overrides.metadata,
    },
    spec: {
      model: { name: 'meta-llama/Llama-3.1-8B-Instruct', storageUri: 'hf://meta-llama/Llama-3.1-8B-Instruct' },
      runtime: { image: 'vllm/vllm-openai:v0.11.0', args: ['--model', '/mnt/models'] },
      resources: { gpu: { count: 1 } },
      ...overrides.spec,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// JSON-schema validation (everything except CEL) with the CRD's own schemas.

const Ajv = AjvModule.default;
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });

/**
 * The schema as JSON Schema draft-07 sees it (ajv ignores x-kubernetes-* keywords with strict off),
 * plus `additionalProperties: false` wherever properties are listed: a field the apiserver would
 * prune is an error here, so a conversion that emits one (and would lose it) fails the tests.
 */
export function forAjv(schema: JSONSchemaProps): object {
  const walk = (s: JSONSchemaProps): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...s };
    if (s.properties) {
      out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, walk(v)]));
      out.additionalProperties = false;
    }
    if (s.additionalProperties) out.additionalProperties = walk(s.additionalProperties);
    if (s.items) out.items = walk(s.items);
    return out;
  };
  return walk(schema);
}

const validators = {
  v1: ajv.compile(forAjv(inferenceServiceSchemaV1.json)),
  v1alpha1: ajv.compile(forAjv(inferenceServiceSchemaV1alpha1.json)),
};

/** Schema errors of an object (empty when valid), ignoring CEL rules. */
export function schemaErrors(version: 'v1' | 'v1alpha1', obj: unknown): string[] {
  const validate = validators[version];
  if (validate(obj)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}
