/** Schema pieces both API versions use, typed to match the Kubernetes types they mirror. */
import type { V1Affinity, V1Toleration } from '@kubernetes/client-node';
import * as s from './schema.js';
import type { Output } from './schema.js';
import type { Condition, ObjectMeta } from './meta.js';

/** The root `metadata`: the apiserver validates it, the schema only says it is an object. */
export const metadataSchema = s.opaque<ObjectMeta>({ type: 'object' });

/**
 * The name of an InferenceService names its Deployments, Services and HTTPRoute (`NAME-canary`),
 * so it must be a DNS-1035 label short enough for the longest child name.
 */
export const NAME_RULE: s.ValidationRule = {
  rule: "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 45",
  message: 'metadata.name must be a DNS-1035 label (lower-case letters, digits and "-", starting with a letter) of at most 45 characters',
};

export const labelMap = (description: string) =>
  s.map(s.string({ description: 'A label value.', maxLength: 63 }), { description, maxProperties: 64 });

export const quantityMap = (description: string) =>
  s.map(s.quantity({ description: 'A resource quantity.' }), { description, maxProperties: 32 });

export const conditionSchema = s.object(
  {
    type: s.string({ description: 'Type of condition in CamelCase: Ready, Progressing or Degraded.', maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$' }),
    status: s.string({ description: 'True, False or Unknown.', enum: ['True', 'False', 'Unknown'] }),
    observedGeneration: s.integer({ description: 'The metadata.generation the condition was computed from.', minimum: 0, format: 'int64' }),
    lastTransitionTime: s.string({ description: 'When the status last changed (RFC 3339).', format: 'date-time' }),
    reason: s.string({ description: 'A CamelCase reason for the last transition.', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    message: s.string({ description: 'Details for people.', maxLength: 32768 }),
  },
  { description: 'A metav1.Condition.', required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

export const conditionsSchema = s.array(conditionSchema, {
  description: 'Ready, Progressing and Degraded, with CamelCase reasons.',
  maxItems: 8,
  listType: 'map',
  listMapKeys: ['type'],
});

const labelSelectorRequirement = s.object(
  {
    key: s.string({ description: 'The label key.', maxLength: 317 }),
    operator: s.string({ description: 'In, NotIn, Exists or DoesNotExist.', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }),
    values: s.array(s.string({ description: 'A value.', maxLength: 63 }), { description: 'Values for In and NotIn.', maxItems: 64, listType: 'atomic' }),
  },
  { description: 'A label selector requirement.', required: ['key', 'operator'] },
);

const labelSelector = (description: string) =>
  s.object(
    {
      matchLabels: labelMap('Labels that must match exactly.'),
      matchExpressions: s.array(labelSelectorRequirement, { description: 'Requirements that must all hold.', maxItems: 32, listType: 'atomic' }),
    },
    { description, mapType: 'atomic' },
  );

const nodeSelectorRequirement = s.object(
  {
    key: s.string({ description: 'The node label or field key.', maxLength: 317 }),
    operator: s.string({ description: 'In, NotIn, Exists, DoesNotExist, Gt or Lt.', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] }),
    values: s.array(s.string({ description: 'A value.', maxLength: 63 }), { description: 'Values.', maxItems: 64, listType: 'atomic' }),
  },
  { description: 'A node selector requirement.', required: ['key', 'operator'] },
);

const nodeSelectorTerm = s.object(
  {
    matchExpressions: s.array(nodeSelectorRequirement, { description: 'Requirements on node labels.', maxItems: 32, listType: 'atomic' }),
    matchFields: s.array(nodeSelectorRequirement, { description: 'Requirements on node fields.', maxItems: 32, listType: 'atomic' }),
  },
  { description: 'Requirements that must all hold.', mapType: 'atomic' },
);

const podAffinityTerm = s.object(
  {
    labelSelector: labelSelector('Pods this term is about.'),
    namespaceSelector: labelSelector('Namespaces of those pods.'),
    namespaces: s.array(s.string({ description: 'A namespace.', maxLength: 63 }), { description: 'Namespaces of those pods.', maxItems: 64, listType: 'atomic' }),
    topologyKey: s.string({ description: 'The node label that defines co-location.', minLength: 1, maxLength: 317 }),
    matchLabelKeys: s.array(s.string({ description: 'A label key.', maxLength: 317 }), { description: 'Pod label keys merged into labelSelector.', maxItems: 16, listType: 'atomic' }),
    mismatchLabelKeys: s.array(s.string({ description: 'A label key.', maxLength: 317 }), { description: 'Pod label keys negated into labelSelector.', maxItems: 16, listType: 'atomic' }),
  },
  { description: 'A pod (anti-)affinity term.', required: ['topologyKey'] },
);

const weightedPodAffinityTerm = s.object(
  {
    weight: s.integer({ description: 'Weight 1-100.', minimum: 1, maximum: 100 }),
    podAffinityTerm,
  },
  { description: 'A preferred pod (anti-)affinity term.', required: ['weight', 'podAffinityTerm'] },
);

const podAffinity = (description: string) =>
  s.object(
    {
      requiredDuringSchedulingIgnoredDuringExecution: s.array(podAffinityTerm, { description: 'Hard terms.', maxItems: 16, listType: 'atomic' }),
      preferredDuringSchedulingIgnoredDuringExecution: s.array(weightedPodAffinityTerm, { description: 'Soft terms.', maxItems: 16, listType: 'atomic' }),
    },
    { description },
  );

export const affinitySchema = s.object(
  {
    nodeAffinity: s.object(
      {
        requiredDuringSchedulingIgnoredDuringExecution: s.object(
          { nodeSelectorTerms: s.array(nodeSelectorTerm, { description: 'Any one term must match.', maxItems: 16, listType: 'atomic' }) },
          { description: 'Hard node requirements.', required: ['nodeSelectorTerms'], mapType: 'atomic' },
        ),
        preferredDuringSchedulingIgnoredDuringExecution: s.array(
          s.object(
            {
              weight: s.integer({ description: 'Weight 1-100.', minimum: 1, maximum: 100 }),
              preference: nodeSelectorTerm,
            },
            { description: 'A preferred node term.', required: ['weight', 'preference'] },
          ),
          { description: 'Soft node preferences.', maxItems: 16, listType: 'atomic' },
        ),
      },
      { description: 'Node affinity.' },
    ),
    podAffinity: podAffinity('Pod affinity.'),
    podAntiAffinity: podAffinity('Pod anti-affinity.'),
  },
  { description: 'Scheduling affinity, as core/v1 Affinity.' },
);

export const tolerationSchema = s.object(
  {
    key: s.string({ description: 'The taint key; empty with operator Exists matches every taint.', maxLength: 317 }),
    operator: s.string({ description: 'Exists or Equal (default Equal).', enum: ['Exists', 'Equal'] }),
    value: s.string({ description: 'The taint value for Equal.', maxLength: 63 }),
    effect: s.string({ description: 'NoSchedule, PreferNoSchedule or NoExecute; empty matches all.', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }),
    tolerationSeconds: s.integer({ description: 'How long a NoExecute taint is tolerated.', format: 'int64' }),
  },
  { description: 'A toleration, as core/v1 Toleration.' },
);

export const tolerationsSchema = s.array(tolerationSchema, { description: 'Tolerations for the pods (GPU nodes are often tainted).', maxItems: 32, listType: 'atomic' });

/** Compile-time checks: the inferred types are assignable to the Kubernetes types they are copied into. */
type Assert<T extends true> = T;
export type CommonTypeChecks = [
  Assert<Output<typeof affinitySchema> extends V1Affinity ? true : false>,
  Assert<Output<typeof tolerationSchema> extends V1Toleration ? true : false>,
  Assert<Output<typeof conditionSchema> extends Condition ? true : false>,
];
