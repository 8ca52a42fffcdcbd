/**
 * InferenceService `inference.olmpub.dev/v1`: the served storage version. The schema below is the
 * one source of the CRD schema and of the TypeScript types.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import * as s from './schema.js';
import { applyDefaults, type Input, type Output } from './schema.js';
import { affinitySchema, conditionsSchema, labelMap, metadataSchema, NAME_RULE, quantityMap, tolerationsSchema } from './common.js';
import { DURATION_PATTERN } from './duration.js';
import { API_VERSION_V1, KIND } from './meta.js';

const STORAGE_URI_PATTERN = '^(s3|gs|hf|https?)://.+$';

const pvcRef = s.object(
  {
    claimName: s.string({ description: 'Name of a PersistentVolumeClaim in the same namespace.', minLength: 1, maxLength: 253 }),
    subPath: s.string({ description: 'Directory inside the volume that holds the model (default: the volume root).', maxLength: 1024 }),
  },
  { description: 'A model already present on a PersistentVolumeClaim; mounted read-only, never copied.', required: ['claimName'] },
);

const storageUri = s.string({
  description: 'Where the model is downloaded from before the server starts: s3://, gs://, hf:// or http(s)://.',
  pattern: STORAGE_URI_PATTERN,
  maxLength: 2048,
});

const modelSchema = s.object(
  {
    name: s.string({ description: 'The name the model is served under (for example meta-llama/Llama-3.1-8B-Instruct).', minLength: 1, maxLength: 256 }),
    format: s.string({ description: 'The model format, passed to the runtime as OLMPUB_MODEL_FORMAT (for example safetensors, gguf, onnx).', maxLength: 63 }),
    storageUri,
    pvc: pvcRef,
    cache: s.object(
      { claimName: s.string({ description: 'Name of a PersistentVolumeClaim (ReadWriteMany for more than one replica).', minLength: 1, maxLength: 253 }) },
      {
        description:
          'A model cache: storageUri is downloaded onto this PersistentVolumeClaim once and reused by every replica, restart and scale-up, instead of into an emptyDir per pod.',
        required: ['claimName'],
      },
    ),
    credentialsSecretName: s.string({
      description: 'A Secret in the same namespace whose keys become environment variables of the model download (for example AWS_ACCESS_KEY_ID, HF_TOKEN).',
      maxLength: 253,
    }),
  },
  {
    description: 'The model to serve and where it comes from.',
    required: ['name'],
    rules: [
      { rule: 'has(self.storageUri) != has(self.pvc)', message: 'set exactly one of model.storageUri or model.pvc' },
      { rule: '!has(self.cache) || has(self.storageUri)', message: 'model.cache only applies to model.storageUri (a model.pvc is mounted directly)', fieldPath: '.cache' },
    ],
  },
);

const envVar = s.object(
  {
    name: s.string({ description: 'Variable name.', minLength: 1, maxLength: 256 }),
    value: s.string({ description: 'Literal value.', maxLength: 32768 }),
    valueFrom: s.object(
      {
        secretKeyRef: s.object(
          {
            name: s.string({ description: 'Secret name.', maxLength: 253 }),
            key: s.string({ description: 'Key in the Secret.', maxLength: 253 }),
            optional: s.boolean({ description: 'Whether the Secret or key may be missing.' }),
          },
          { description: 'A key of a Secret in the same namespace.', required: ['name', 'key'] },
        ),
      },
      { description: 'Where the value comes from instead of value.', required: ['secretKeyRef'] },
    ),
  },
  {
    description: 'An environment variable of the runtime container.',
    required: ['name'],
    rules: [{ rule: '!(has(self.value) && has(self.valueFrom))', message: 'set value or valueFrom, not both' }],
  },
);

const envSchema = s.array(envVar, { description: 'Environment variables of the runtime container.', maxItems: 64, listType: 'map', listMapKeys: ['name'] });
const argsSchema = s.array(s.string({ description: 'An argument.', maxLength: 4096 }), { description: 'Arguments of the runtime container (its image decides the command).', maxItems: 128, listType: 'atomic' });
const imageSchema = s.string({ description: 'The model server image (vLLM, Triton, TGI, ...).', minLength: 1, maxLength: 1024 });

const runtimeSchema = s.object(
  {
    image: imageSchema,
    args: argsSchema,
    env: envSchema,
    port: s.integer({ description: 'The HTTP port the server listens on.', minimum: 1, maximum: 65535 }).default(8080),
    healthPath: s
      .string({ description: 'HTTP path that answers 200 only once the model is loaded; drives readiness, liveness and startup probes.', pattern: '^/', maxLength: 1024 })
      .default('/health'),
    startupTimeout: s
      .string({ description: 'How long a replica may take to download and load the model before it is restarted (for example 20m, 1h).', pattern: DURATION_PATTERN, maxLength: 32 })
      .default('20m'),
  },
  { description: 'The model server container.', required: ['image'] },
);

const gpuSchema = s.object(
  {
    count: s.integer({ description: 'GPUs per replica; 0 for a CPU-only model.', minimum: 0, maximum: 64 }),
    resourceName: s
      .string({ description: 'The extended resource that counts GPUs.', maxLength: 253, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/[-a-zA-Z0-9_.]+$' })
      .default('nvidia.com/gpu'),
  },
  { description: 'GPUs through the device plugin (an extended resource in requests and limits).', required: ['count'] },
);

const resourcesSchema = s.object(
  {
    requests: quantityMap('Resource requests of the runtime container (cpu, memory, ephemeral-storage, ...).'),
    limits: quantityMap('Resource limits of the runtime container.'),
    gpu: gpuSchema,
  },
  { description: 'Compute resources per replica.' },
);

const deviceRequestSchema = s.object(
  {
    name: s.string({ description: 'Request name, unique in the list (a DNS label).', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }),
    deviceClassName: s.string({ description: 'The DeviceClass to allocate from (for example gpu.nvidia.com).', minLength: 1, maxLength: 253 }),
    count: s.integer({ description: 'How many devices of the class each replica gets.', minimum: 1, maximum: 64 }).default(1),
    selectors: s.array(
      s.object(
        {
          cel: s.object(
            { expression: s.string({ description: 'A CEL expression over `device` (for example device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0).', minLength: 1, maxLength: 10240 }) },
            { description: 'A CEL device selector.', required: ['expression'] },
          ),
        },
        { description: 'A device selector.', required: ['cel'] },
      ),
      { description: 'All must match for a device to be chosen.', maxItems: 32, listType: 'atomic' },
    ),
  },
  { description: 'One DRA device request of the ResourceClaimTemplate (resource.k8s.io/v1, allocationMode ExactCount).', required: ['name', 'deviceClassName'] },
);

const scalingSchema = s.object(
  {
    minReplicas: s.integer({ description: 'Fewest replicas; 0 allows scale to zero after idleTimeout without traffic.', minimum: 0, maximum: 1000 }).default(1),
    maxReplicas: s.integer({ description: 'Most replicas.', minimum: 1, maximum: 1000 }).default(1),
    replicas: s
      .integer({ description: 'Replicas wanted now, clamped to [minReplicas, maxReplicas]; the scale subresource (kubectl scale, HPA, KEDA) reads and writes it.', minimum: 0, maximum: 1000 })
      .default(1),
    idleTimeout: s
      .string({ description: 'With minReplicas 0: scale to zero after this long without a traffic signal (for example 15m).', pattern: DURATION_PATTERN, maxLength: 32 })
      .default('15m'),
  },
  {
    description: 'Replica bounds and scale to zero.',
    rules: [{ rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas', message: 'scaling.minReplicas must not exceed scaling.maxReplicas' }],
  },
);

const canarySchema = s.object(
  {
    trafficPercent: s.integer({ description: 'Share of requests the canary gets, 0-100. 0 rolls back (canary scaled to 0); promote by moving the canary fields into the spec and removing canary.', minimum: 0, maximum: 100 }),
    runtime: s.object(
      { image: imageSchema, args: argsSchema, env: envSchema },
      { description: 'Runtime fields that replace those of spec.runtime in the canary (env is merged by name).' },
    ),
    model: s.object(
      { name: s.string({ description: 'Served model name.', minLength: 1, maxLength: 256 }), format: s.string({ description: 'Model format.', maxLength: 63 }), storageUri, pvc: pvcRef },
      {
        description: 'Model fields that replace those of spec.model in the canary (storageUri or pvc replaces the storage).',
        rules: [{ rule: '!(has(self.storageUri) && has(self.pvc))', message: 'set at most one of canary.model.storageUri or canary.model.pvc' }],
      },
    ),
  },
  {
    description: 'A second version (runtime and/or model) that gets trafficPercent of the requests.',
    required: ['trafficPercent'],
    rules: [
      { rule: 'self.trafficPercent >= 0 && self.trafficPercent <= 100', message: 'canary.trafficPercent must be between 0 and 100' },
      { rule: 'has(self.runtime) || has(self.model)', message: 'a canary must change the runtime or the model' },
    ],
  },
);

const placementSchema = s.object(
  {
    nodeSelector: labelMap('Node labels the pods require.'),
    tolerations: tolerationsSchema,
    affinity: affinitySchema,
    priorityClassName: s.string({ description: 'PriorityClass of the pods.', maxLength: 253 }),
  },
  { description: 'Where the pods run.' },
);

export const specSchemaV1 = s.object(
  {
    model: modelSchema,
    runtime: runtimeSchema,
    resources: resourcesSchema,
    devices: s.array(deviceRequestSchema, {
      description: 'DRA device requests (a ResourceClaimTemplate per InferenceService), the alternative to resources.gpu.',
      minItems: 1,
      maxItems: 8,
      listType: 'map',
      listMapKeys: ['name'],
    }),
    scaling: scalingSchema.default({}),
    canary: canarySchema,
    placement: placementSchema,
  },
  {
    description: 'What to serve, on what hardware, how many, and how traffic is split.',
    required: ['model', 'runtime'],
    rules: [
      {
        rule: '(has(self.resources) && has(self.resources.gpu)) != has(self.devices)',
        message: 'set exactly one of resources.gpu (a GPU count, 0 for CPU only) or devices (DRA device requests)',
      },
    ],
  },
);

export const statusSchemaV1 = s.object(
  {
    observedGeneration: s.integer({ description: 'The metadata.generation this status describes.', minimum: 0, format: 'int64' }),
    conditions: conditionsSchema,
    replicas: s.integer({ description: 'Pods of all tracks.', minimum: 0 }),
    readyReplicas: s.integer({ description: 'Pods whose runtime reports the model loaded (readiness probe on runtime.healthPath).', minimum: 0 }),
    selector: s.string({ description: 'Label selector of the pods, for the scale subresource (HPA).', maxLength: 1024 }),
    url: s.string({ description: 'Where the model is served.', maxLength: 2048 }),
    canary: s.object(
      {
        trafficPercent: s.integer({ description: 'Share of requests the canary gets now (0 until it is ready).', minimum: 0, maximum: 100 }),
        replicas: s.integer({ description: 'Canary pods.', minimum: 0 }),
        readyReplicas: s.integer({ description: 'Canary pods with the model loaded.', minimum: 0 }),
      },
      { description: 'The canary track, when spec.canary is set.' },
    ),
    scaledToZero: s.object(
      {
        reason: s.string({ description: 'IdleTimeout (no traffic signal for scaling.idleTimeout) or ReplicasZero (scaling.replicas is 0).', enum: ['IdleTimeout', 'ReplicasZero'] }),
        since: s.string({ description: 'When it scaled to zero.', format: 'date-time' }),
        lastActivityTime: s.string({ description: 'The last traffic signal seen.', format: 'date-time' }),
      },
      { description: 'Present while the service runs no replicas. Set the inference.olmpub.dev/activate annotation to wake it.', required: ['reason', 'since'] },
    ),
  },
  { description: 'Observed state, written by the operator.' },
);

export const inferenceServiceSchemaV1 = s.object(
  {
    apiVersion: s.string({ description: 'inference.olmpub.dev/v1' }),
    kind: s.string({ description: 'InferenceService' }),
    metadata: metadataSchema,
    spec: specSchemaV1,
    status: statusSchemaV1,
  },
  { description: 'A model served over HTTP by a model server, with GPUs, scaling, canary rollout and scale to zero.', required: ['spec'], rules: [NAME_RULE] },
);

/** An InferenceService as users write it (defaulted fields optional). */
export type InferenceService = Input<typeof inferenceServiceSchemaV1> & { apiVersion: typeof API_VERSION_V1; kind: typeof KIND };
export type InferenceServiceSpec = Input<typeof specSchemaV1>;
export type InferenceServiceStatus = Input<typeof statusSchemaV1>;
/** After the apiserver's defaulting (or `withDefaults`): every defaulted field present. */
export type DefaultedInferenceService = Output<typeof inferenceServiceSchemaV1> & { apiVersion: typeof API_VERSION_V1; kind: typeof KIND };
export type DefaultedSpec = Output<typeof specSchemaV1>;
export type ModelSpec = Input<typeof modelSchema>;
export type RuntimeSpec = Input<typeof runtimeSchema>;
export type DeviceRequest = Output<typeof deviceRequestSchema>;
export type CanarySpec = Input<typeof canarySchema>;
export type EnvVar = Input<typeof envVar>;

/** The spec as the apiserver stores it: schema defaults applied. */
export function withDefaults(isvc: InferenceService): DefaultedInferenceService {
  return applyDefaults(inferenceServiceSchemaV1, isvc) as DefaultedInferenceService;
}

/**
 * The model and runtime the canary runs: its fields replace the stable ones (a storageUri or pvc
 * replaces the whole model source; env is merged by name). The canary Deployment runs this and
 * promotion writes it, so a promoted canary keeps running exactly what it ran.
 */
export function canaryVersion<M extends ModelSpec, R extends RuntimeSpec>(spec: { model: M; runtime: R; canary?: CanarySpec }): { model: M; runtime: R } {
  const canary = spec.canary;
  if (!canary) return { model: spec.model, runtime: spec.runtime };
  const model: M = { ...spec.model, ...definedOnly(canary.model ?? {}) };
  if (canary.model?.storageUri !== undefined) delete model.pvc;
  if (canary.model?.pvc !== undefined) {
    delete model.storageUri;
    delete model.cache;
  }
  const runtime: R = { ...spec.runtime, ...definedOnly({ image: canary.runtime?.image, args: canary.runtime?.args }) };
  if (canary.runtime?.env !== undefined) runtime.env = mergeEnv(spec.runtime.env, canary.runtime.env);
  return { model, runtime };
}

/**
 * Promotes the canary: its runtime and model fields replace the stable ones and spec.canary goes away.
 * Returns a new object; apply it to make the canary the stable version.
 */
export function promoteCanary(isvc: InferenceService): InferenceService {
  if (!isvc.spec.canary) return isvc;
  const { canary: _dropped, ...spec } = isvc.spec;
  void _dropped;
  return { ...isvc, spec: { ...spec, ...canaryVersion(isvc.spec) } };
}

/** Rolls the canary back: it keeps its definition but gets no traffic and no replicas. */
export function rollbackCanary(isvc: InferenceService): InferenceService {
  if (!isvc.spec.canary) return isvc;
  return { ...isvc, spec: { ...isvc.spec, canary: { ...isvc.spec.canary, trafficPercent: 0 } } };
}

/** Environment variables merged by name: `over` wins, order of first appearance is kept. */
export function mergeEnv<E extends { name: string }>(base: E[] | undefined, over: E[] | undefined): E[] {
  const out = new Map<string, E>();
  for (const e of base ?? []) out.set(e.name, e);
  for (const e of over ?? []) out.set(e.name, e);
  return [...out.values()];
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

type Assert<T extends true> = T;
/** Compile-time check: runtime env entries can be copied into a Pod as they are. */
export type V1TypeChecks = [Assert<EnvVar extends V1EnvVar ? true : false>];
