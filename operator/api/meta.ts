/** Names shared by the API, the conversion, the webhooks and the controller. */

export const GROUP = 'inference.olmpub.dev';
export const KIND = 'InferenceService';
export const LIST_KIND = 'InferenceServiceList';
export const PLURAL = 'inferenceservices';
export const SINGULAR = 'inferenceservice';
export const SHORT_NAMES = ['isvc', 'olmisvc'];
export const CRD_NAME = `${PLURAL}.${GROUP}` as const;

export const V1 = 'v1';
export const V1ALPHA1 = 'v1alpha1';
export const API_VERSION_V1 = `${GROUP}/${V1}` as const;
export const API_VERSION_V1ALPHA1 = `${GROUP}/${V1ALPHA1}` as const;

/** On a v1alpha1 object: JSON merge patch that restores the v1 fields v1alpha1 cannot express. */
export const V1_FIELDS_ANNOTATION = `${GROUP}/v1-fields`;
/** On a v1 object: JSON merge patch that restores the v1alpha1 fields v1 cannot express. */
export const V1ALPHA1_FIELDS_ANNOTATION = `${GROUP}/v1alpha1-fields`;

/**
 * Wakes a scaled-to-zero InferenceService. An RFC 3339 timestamp counts as traffic at that time (a
 * gateway sets it when a request arrives; a person runs
 * `kubectl annotate isvc NAME inference.olmpub.dev/activate=$(date -u +%FT%TZ) --overwrite`), so the
 * service stays up for at least `spec.scaling.idleTimeout` after it. Any other non-empty value keeps
 * the service awake until the annotation is removed.
 */
export const ACTIVATE_ANNOTATION = `${GROUP}/activate`;

/** On a Namespace: the most GPUs all InferenceServices in it may claim together (a non-negative integer). */
export const GPU_QUOTA_ANNOTATION = `${GROUP}/gpu-quota`;

/** The finalizer the controller adds; its cleanup is bounded and retried (docs/operator.md: stuck in Terminating). */
export const CLEANUP_FINALIZER = `${GROUP}/cleanup`;

/** Labels on every child object. */
export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_INSTANCE = 'app.kubernetes.io/instance';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_PART_OF = 'app.kubernetes.io/part-of';
/** The owning InferenceService's name: the selector of its pods (all tracks). */
export const LABEL_ISVC = `${GROUP}/inferenceservice`;
/** `stable` or `canary`. */
export const LABEL_TRACK = `${GROUP}/track`;

export const APP_NAME = 'inference-server';
export const MANAGED_BY = 'olmpub-inference-operator';

import type { ObjectMeta as KubeObjectMeta } from '../runtime/kube/types.js';
export type { OwnerReference } from '../runtime/kube/types.js';

/** The runtime's object metadata; whatever the operator does not read is carried along untouched. */
export interface ObjectMeta extends KubeObjectMeta {
  [key: string]: unknown;
}

/** metav1.Condition as it travels on the wire (times are RFC 3339 strings). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** metav1.Time: RFC 3339 with second precision. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
