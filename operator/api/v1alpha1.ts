/**
 * InferenceService `inference.olmpub.dev/v1alpha1`: the first, flat shape. Still served so old
 * manifests keep working, deprecated in favour of v1; the conversion webhook translates (conversion.ts).
 */
import * as s from './schema.js';
import type { Input, Output } from './schema.js';
import { conditionsSchema, labelMap, metadataSchema, NAME_RULE } from './common.js';
import { API_VERSION_V1ALPHA1, KIND } from './meta.js';

export const DEPRECATION_WARNING_V1ALPHA1 =
  'inference.olmpub.dev/v1alpha1 InferenceService is deprecated; use inference.olmpub.dev/v1 (docs/operator.md explains the field mapping)';

export const specSchemaV1alpha1 = s.object(
  {
    modelName: s.string({ description: 'The served model name.', minLength: 1, maxLength: 256 }),
    modelFormat: s.string({ description: 'The model format.', maxLength: 63 }),
    modelUri: s.string({
      description: 'Where the model is: s3://, gs://, hf://, http(s):// (downloaded) or pvc://CLAIM[/PATH] (mounted).',
      pattern: '^((s3|gs|hf|https?)://.+|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/.*)?)$',
      maxLength: 2048,
    }),
    cachePvc: s.string({ description: 'A PersistentVolumeClaim the download is cached on.', minLength: 1, maxLength: 253 }),
    image: s.string({ description: 'The model server image.', minLength: 1, maxLength: 1024 }),
    args: s.array(s.string({ description: 'An argument.', maxLength: 4096 }), { description: 'Server arguments.', maxItems: 128, listType: 'atomic' }),
    port: s.integer({ description: 'The HTTP port.', minimum: 1, maximum: 65535 }).default(8080),
    healthPath: s.string({ description: 'Health endpoint path.', pattern: '^/', maxLength: 1024 }).default('/health'),
    gpus: s.integer({ description: 'nvidia.com/gpu per replica.', minimum: 0, maximum: 64 }).default(0),
    cpu: s.quantity({ description: 'CPU request per replica.' }),
    memory: s.quantity({ description: 'Memory request per replica.' }),
    replicas: s
      .object(
        {
          min: s.integer({ description: 'Fewest replicas.', minimum: 0, maximum: 1000 }).default(1),
          max: s.integer({ description: 'Most replicas.', minimum: 1, maximum: 1000 }).default(1),
          desired: s.integer({ description: 'Replicas wanted now (the scale subresource).', minimum: 0, maximum: 1000 }).default(1),
        },
        {
          description: 'The replica range.',
          rules: [{ rule: '!has(self.min) || !has(self.max) || self.min <= self.max', message: 'replicas.min must not exceed replicas.max' }],
        },
      )
      .default({}),
    canaryImage: s.string({ description: 'Image of the canary.', minLength: 1, maxLength: 1024 }),
    canaryModelUri: s.string({ description: 'Model of the canary (same forms as modelUri).', pattern: '^((s3|gs|hf|https?)://.+|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/.*)?)$', maxLength: 2048 }),
    canaryPercent: s.integer({ description: 'Share of requests the canary gets.', minimum: 0, maximum: 100 }),
    nodeSelector: labelMap('Node labels the pods require.'),
    serviceType: s.string({ description: 'Type of the Service (dropped in v1, which routes through the Gateway API).', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }).default('ClusterIP'),
  },
  {
    description: 'The flat v1alpha1 spec.',
    required: ['modelName', 'modelUri', 'image'],
    rules: [
      { rule: '!(has(self.canaryImage) || has(self.canaryModelUri)) || has(self.canaryPercent)', message: 'canaryImage and canaryModelUri need canaryPercent' },
      { rule: '!has(self.canaryPercent) || self.canaryPercent >= 0 && self.canaryPercent <= 100', message: 'canaryPercent must be between 0 and 100' },
    ],
  },
);

export const statusSchemaV1alpha1 = s.object(
  {
    phase: s.string({ description: 'Pending, Loading, Ready, Failed or ScaledToZero.', enum: ['Pending', 'Loading', 'Ready', 'Failed', 'ScaledToZero'] }),
    observedGeneration: s.integer({ description: 'The generation observed.', minimum: 0, format: 'int64' }),
    conditions: conditionsSchema,
    replicas: s.integer({ description: 'Pods.', minimum: 0 }),
    readyReplicas: s.integer({ description: 'Ready pods.', minimum: 0 }),
    selector: s.string({ description: 'Pod label selector (scale subresource).', maxLength: 1024 }),
    url: s.string({ description: 'Endpoint.', maxLength: 2048 }),
  },
  { description: 'Observed state.' },
);

export const inferenceServiceSchemaV1alpha1 = s.object(
  {
    apiVersion: s.string({ description: 'inference.olmpub.dev/v1alpha1' }),
    kind: s.string({ description: 'InferenceService' }),
    metadata: metadataSchema,
    spec: specSchemaV1alpha1,
    status: statusSchemaV1alpha1,
  },
  { description: 'A served model (deprecated version; use v1).', required: ['spec'], rules: [NAME_RULE] },
);

export type InferenceServiceV1alpha1 = Input<typeof inferenceServiceSchemaV1alpha1> & { apiVersion: typeof API_VERSION_V1ALPHA1; kind: typeof KIND };
export type InferenceServiceSpecV1alpha1 = Input<typeof specSchemaV1alpha1>;
export type InferenceServiceStatusV1alpha1 = Input<typeof statusSchemaV1alpha1>;
export type DefaultedInferenceServiceV1alpha1 = Output<typeof inferenceServiceSchemaV1alpha1> & { apiVersion: typeof API_VERSION_V1ALPHA1; kind: typeof KIND };
