/**
 * API errors with the HTTP status and the parsed metav1.Status (client-node's ApiException keeps the
 * body as raw text). Request bodies are never quoted, so a token sent in a TokenReview cannot leak.
 */
import { OlmpubError } from '../../../lib/errors.js';
import type { ApiStatus } from './types.js';

/** client-go's reason for an HTTP status when the body carries no Status. */
export function reasonForStatus(status: number): string {
  switch (status) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 406: return 'NotAcceptable';
    case 409: return 'Conflict';
    case 410: return 'Expired';
    case 413: return 'RequestEntityTooLarge';
    case 415: return 'UnsupportedMediaType';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    case 500: return 'InternalError';
    case 503: return 'ServiceUnavailable';
    case 504: return 'Timeout';
    default: return status >= 500 ? 'InternalError' : 'Unknown';
  }
}

function snake(reason: string): string {
  return reason.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export class KubeApiError extends OlmpubError {
  /** The parsed Status body (synthesised from the HTTP status when the body is not a Status). */
  readonly apiStatus: ApiStatus;

  constructor(
    /** HTTP status code. */
    readonly status: number,
    /** Status.reason: NotFound, AlreadyExists, Conflict, Expired, Gone, Invalid, Forbidden, ... */
    readonly reason: string,
    message: string,
    readonly method: string,
    readonly path: string,
    apiStatus?: ApiStatus,
  ) {
    super(`KUBE_${snake(reason)}`, 'environment', message, { place: `${method} ${path}`, hint: hintFor(status) });
    this.name = 'KubeApiError';
    this.apiStatus = apiStatus ?? { kind: 'Status', status: 'Failure', code: status, reason, message };
  }

  get retryAfterSeconds(): number | undefined {
    return this.apiStatus.details?.retryAfterSeconds;
  }

  /** Builds the error from a response body (raw text). */
  static fromResponse(status: number, body: string, method: string, path: string): KubeApiError {
    let parsed: ApiStatus | undefined;
    try {
      const value = JSON.parse(body) as ApiStatus;
      if (value && typeof value === 'object' && value.kind === 'Status') parsed = value;
    } catch {
      // not JSON
    }
    const reason = parsed?.reason || reasonForStatus(status);
    const text = parsed?.message || body.trim().slice(0, 300) || `HTTP ${status}`;
    return new KubeApiError(status, reason, `${method} ${path}: ${text}`, method, path, parsed);
  }
}

function hintFor(status: number): string | undefined {
  if (status === 401) return 'the credentials were rejected: check the kubeconfig or the ServiceAccount token';
  if (status === 403) return 'the identity lacks RBAC permission for this request';
  return undefined;
}

/** A transport failure (connection refused, TLS, timeout, watchdog) rather than an API answer. */
export class KubeTransportError extends OlmpubError {
  constructor(message: string, readonly method: string, readonly path: string, cause?: unknown) {
    super('KUBE_TRANSPORT', 'environment', `${method} ${path}: ${message}`, { place: `${method} ${path}`, cause, hint: 'is the apiserver reachable?' });
    this.name = 'KubeTransportError';
  }
}

const is = (err: unknown, pred: (e: KubeApiError) => boolean) => err instanceof KubeApiError && pred(err);
export const isNotFound = (err: unknown) => is(err, (e) => e.status === 404 || e.reason === 'NotFound');
export const isAlreadyExists = (err: unknown) => is(err, (e) => e.reason === 'AlreadyExists');
export const isConflict = (err: unknown) => is(err, (e) => e.status === 409 && e.reason !== 'AlreadyExists');
/** 410: the resourceVersion is too old (watch or paginated list); relist. */
export const isGone = (err: unknown) => is(err, (e) => e.status === 410 || e.reason === 'Expired' || e.reason === 'Gone');
export const isInvalid = (err: unknown) => is(err, (e) => e.status === 422);
export const isTooManyRequests = (err: unknown) => is(err, (e) => e.status === 429);
