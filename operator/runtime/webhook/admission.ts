/**
 * AdmissionReview v1 (admission.k8s.io/v1) handling: decode the request, call a function, wrap its
 * answer with the request's uid; mutations are answered as a base64 RFC 6902 JSONPatch computed from
 * the original and the mutated object (controller-runtime's PatchResponseFromRaw).
 */
import type { KubeObject } from '../kube/types.js';
import { WebhookBadRequest, type WebhookHandler } from './server.js';

export interface AdmissionRequest<T = KubeObject> {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: T;
  oldObject?: T;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionResponse {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  /** Objects to patch to (mutating webhooks): the answer carries the JSONPatch from `object` to this. */
  patchedObject?: unknown;
  /** Or an explicit RFC 6902 patch. */
  patch?: JsonPatchOp[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: {
    uid: string;
    allowed: boolean;
    status?: { code?: number; message?: string; reason?: string };
    patch?: string;
    patchType?: 'JSONPatch';
    warnings?: string[];
    auditAnnotations?: Record<string, string>;
  };
}

export const allowed = (message?: string): AdmissionResponse => ({ allowed: true, ...(message ? { status: { code: 200, message } } : {}) });
export const denied = (message: string, code = 403, reason = 'Forbidden'): AdmissionResponse => ({ allowed: false, status: { code, message, reason } });
export const errored = (code: number, err: Error): AdmissionResponse => ({ allowed: false, status: { code, message: err.message, reason: 'InternalError' } });
export const patched = (patchedObject: unknown, message?: string): AdmissionResponse => ({ ...allowed(message), patchedObject });

export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSONPatch turning `from` into `to` (objects diffed key by key; arrays replaced when different). */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOp[] {
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  if (isObj(from) && isObj(to)) {
    const ops: JsonPatchOp[] = [];
    for (const k of Object.keys(from).sort()) if (!(k in to) || to[k] === undefined) ops.push({ op: 'remove', path: `${path}/${esc(k)}` });
    for (const k of Object.keys(to).sort()) {
      if (to[k] === undefined) continue;
      if (!(k in from) || from[k] === undefined) ops.push({ op: 'add', path: `${path}/${esc(k)}`, value: to[k] });
      else ops.push(...jsonPatch(from[k], to[k], `${path}/${esc(k)}`));
    }
    return ops;
  }
  return [{ op: 'replace', path: path || '', value: to }];
}

/** Checks the envelope and returns the request; a body that is not an AdmissionReview v1 with a request throws WebhookBadRequest (HTTP 400). */
export function parseAdmissionReview<T = KubeObject>(body: unknown): AdmissionRequest<T> {
  if (!isObj(body) || body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview')
    throw new WebhookBadRequest('expected an AdmissionReview of apiVersion admission.k8s.io/v1');
  const req = body.request;
  if (!isObj(req) || typeof req.uid !== 'string' || req.uid === '') throw new WebhookBadRequest('the AdmissionReview has no request or no request.uid');
  if (typeof req.operation !== 'string') throw new WebhookBadRequest('request.operation is missing');
  return req as unknown as AdmissionRequest<T>;
}

/**
 * Wraps a function of AdmissionRequest into a webhook handler. The uid is echoed; a function that
 * throws denies with code 500 and its message (fail closed; the webhook's failurePolicy covers an
 * unreachable server).
 */
export function admissionHandler<T = KubeObject>(fn: (req: AdmissionRequest<T>) => AdmissionResponse | Promise<AdmissionResponse>): WebhookHandler {
  return async (body) => {
    const req = parseAdmissionReview<T>(body);
    let answer: AdmissionResponse;
    try {
      answer = await fn(req);
    } catch (err) {
      answer = errored(500, err instanceof Error ? err : new Error(String(err)));
    }
    const ops = answer.patch ?? (answer.patchedObject !== undefined ? jsonPatch(req.object, answer.patchedObject) : []);
    const response: NonNullable<AdmissionReview['response']> = { uid: req.uid, allowed: answer.allowed };
    if (answer.status) response.status = answer.status;
    if (answer.allowed && ops.length) {
      response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
      response.patchType = 'JSONPatch';
    }
    if (answer.warnings?.length) response.warnings = answer.warnings;
    if (answer.auditAnnotations) response.auditAnnotations = answer.auditAnnotations;
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response } satisfies AdmissionReview;
  };
}
