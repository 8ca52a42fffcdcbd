/**
 * ConversionReview v1 (apiextensions.k8s.io/v1) handling: every object converted to the desired
 * apiVersion, in order; an object that cannot be converted answers `result.status: Failure` with a
 * message naming it and no converted objects (the apiserver then fails the request). A body that is
 * not a ConversionReview is a bad request (HTTP 400).
 */
import type { KubeObject } from '../kube/types.js';
import { WebhookBadRequest, type WebhookHandler } from './server.js';

export interface ConversionReview {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'ConversionReview';
  request?: { uid: string; desiredAPIVersion: string; objects: KubeObject[] };
  response?: {
    uid: string;
    convertedObjects: KubeObject[];
    result: { status: 'Success' | 'Failure'; message?: string };
  };
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Wraps `convert(obj, desiredAPIVersion)` (pure; may throw) into the `/convert` handler. Objects already in the desired version pass through. */
export function conversionHandler(convert: (obj: KubeObject, desiredAPIVersion: string) => KubeObject): WebhookHandler {
  return (body) => {
    if (!isObj(body) || body.apiVersion !== 'apiextensions.k8s.io/v1' || body.kind !== 'ConversionReview')
      throw new WebhookBadRequest('expected a ConversionReview of apiVersion apiextensions.k8s.io/v1');
    const request = body.request;
    if (!isObj(request) || typeof request.uid !== 'string' || request.uid === '') throw new WebhookBadRequest('the ConversionReview has no request or no request.uid');
    if (typeof request.desiredAPIVersion !== 'string') throw new WebhookBadRequest('request.desiredAPIVersion is missing');
    if (!Array.isArray(request.objects)) throw new WebhookBadRequest('request.objects is not a list');
    const { uid, desiredAPIVersion: desired } = request;
    const answer = (result: { status: 'Success' | 'Failure'; message?: string }, convertedObjects: KubeObject[] = []): ConversionReview => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid, convertedObjects, result },
    });
    const converted: KubeObject[] = [];
    for (const [i, obj] of (request.objects as KubeObject[]).entries()) {
      try {
        const out = isObj(obj) && obj.apiVersion === desired ? obj : convert(obj, desired);
        if (out.apiVersion !== desired) throw new Error(`the conversion produced ${out.apiVersion}`);
        converted.push(out);
      } catch (err) {
        const meta = isObj(obj) && isObj(obj.metadata) ? obj.metadata : {};
        const name = [meta.namespace, meta.name].filter((p) => typeof p === 'string').join('/') || '<unnamed>';
        const from = isObj(obj) ? String(obj.apiVersion) : '?';
        return answer({ status: 'Failure', message: `converting object ${i} (${name}) from ${from} to ${desired}: ${(err as Error).message}` });
      }
    }
    return answer({ status: 'Success' }, converted);
  };
}
