/**
 * The InferenceService validator (the GPU quota), a pure function of an admission request and what
 * the webhook looked up for its namespace. The runtime's admissionHandler does the envelope, the
 * operator's main the lookup.
 */
import { allowed, denied, type AdmissionRequest, type AdmissionResponse } from '../runtime/webhook/admission.js';
import { API_VERSION_V1ALPHA1 } from './meta.js';
import { convertToV1 } from './conversion.js';
import { checkGpuQuota } from './quota.js';
import type { InferenceService } from './v1.js';
import type { InferenceServiceV1alpha1 } from './v1alpha1.js';

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the webhook server looked up for the request's namespace. */
export interface NamespaceState {
  /** The Namespace's annotations; the GPU quota is `inference.olmpub.dev/gpu-quota`. */
  annotations: Record<string, string> | undefined;
  /** InferenceServices in the namespace (any served version). */
  inferenceServices: unknown[];
}

/**
 * Validates an InferenceService CREATE or UPDATE against the namespace's GPU quota. Deletions,
 * status and other subresource writes, and updates of an object that is being deleted (finalizer
 * removal) are always allowed. Objects may arrive as v1alpha1; they are converted to v1 first.
 */
export function validateInferenceService(request: AdmissionRequest<unknown>, ns: NamespaceState): AdmissionResponse {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
  if (request.subResource) return allowed();
  const object = asV1(request.object);
  if (!object) return denied('request.object is not an InferenceService', 400, 'BadRequest');
  if (object.metadata?.deletionTimestamp) return allowed();
  const namespace = request.namespace ?? object.metadata?.namespace ?? '';
  const decision = checkGpuQuota({
    namespace,
    namespaceAnnotations: ns.annotations,
    existing: ns.inferenceServices.map(asV1).filter((o): o is InferenceService => o !== undefined),
    object,
    oldObject: request.operation === 'UPDATE' ? asV1(request.oldObject) : undefined,
  });
  if (!decision.allowed) return denied(decision.message);
  return decision.warnings.length ? { ...allowed(), warnings: decision.warnings } : allowed();
}

function asV1(obj: unknown): InferenceService | undefined {
  if (!isObj(obj) || !isObj(obj.spec)) return undefined;
  return obj.apiVersion === API_VERSION_V1ALPHA1 ? convertToV1(obj as unknown as InferenceServiceV1alpha1) : (obj as unknown as InferenceService);
}
