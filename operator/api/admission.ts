/**
 * AdmissionReview (admission.k8s.io/v1) for validating webhooks: a pure request → response wrapper
 * and the InferenceService validator (the GPU quota). The webhook server does the I/O: it parses the
 * body, looks up the Namespace and the InferenceServices in it, and calls these functions.
 */
import { API_VERSION_V1ALPHA1 } from './meta.js';
import { convertToV1 } from './conversion.js';
import { checkGpuQuota } from './quota.js';
import type { InferenceService } from './v1.js';
import type { InferenceServiceV1alpha1 } from './v1alpha1.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: GroupVersionKind;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export type ValidationResult = { allowed: true; warnings?: string[] } | { allowed: false; message: string; code?: number; reason?: string; warnings?: string[] };

export type Validator = (request: AdmissionRequest) => ValidationResult;

/** A body that is not an AdmissionReview v1 with a request. The webhook server answers any thrown error with HTTP 500 and its message. */
export class BadAdmissionReview extends Error {
  override readonly name = 'BadAdmissionReview';
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Checks the envelope and returns the request; throws BadAdmissionReview otherwise. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObj(body) || body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview')
    throw new BadAdmissionReview('expected an AdmissionReview of apiVersion admission.k8s.io/v1');
  const req = body.request;
  if (!isObj(req) || typeof req.uid !== 'string' || req.uid === '') throw new BadAdmissionReview('the AdmissionReview has no request or no request.uid');
  if (typeof req.operation !== 'string') throw new BadAdmissionReview('request.operation is missing');
  return req as unknown as AdmissionRequest;
}

/**
 * Runs a validator on an AdmissionReview and wraps its verdict: the uid is echoed; a denial carries
 * HTTP-style code 403 (or the validator's), reason and message; a validator that throws denies with
 * code 500 and the error message (fail closed; the webhook's failurePolicy covers an unreachable server).
 */
export function handleValidatingReview(body: unknown, validate: Validator): AdmissionReview {
  const request = parseAdmissionReview(body);
  let result: ValidationResult;
  try {
    result = validate(request);
  } catch (err) {
    result = { allowed: false, code: 500, reason: 'InternalError', message: `validation failed: ${(err as Error).message}` };
  }
  const response: AdmissionResponse = { uid: request.uid, allowed: result.allowed };
  if (!result.allowed) response.status = { code: result.code ?? 403, reason: result.reason ?? 'Forbidden', message: result.message };
  if (result.warnings?.length) response.warnings = [...result.warnings];
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

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
export function validateInferenceService(request: AdmissionRequest, ns: NamespaceState): ValidationResult {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { allowed: true };
  if (request.subResource) return { allowed: true };
  const object = asV1(request.object);
  if (!object) return { allowed: false, code: 400, reason: 'BadRequest', message: 'request.object is not an InferenceService' };
  if (object.metadata?.deletionTimestamp) return { allowed: true };
  const namespace = request.namespace ?? object.metadata?.namespace ?? '';
  const decision = checkGpuQuota({
    namespace,
    namespaceAnnotations: ns.annotations,
    existing: ns.inferenceServices.map(asV1).filter((o): o is InferenceService => o !== undefined),
    object,
    oldObject: request.operation === 'UPDATE' ? asV1(request.oldObject) : undefined,
  });
  if (!decision.allowed) return { allowed: false, code: 403, reason: 'Forbidden', message: decision.message };
  return { allowed: true, warnings: decision.warnings };
}

function asV1(obj: unknown): InferenceService | undefined {
  if (!isObj(obj) || !isObj(obj.spec)) return undefined;
  return obj.apiVersion === API_VERSION_V1ALPHA1 ? convertToV1(obj as unknown as InferenceServiceV1alpha1) : (obj as unknown as InferenceService);
}
