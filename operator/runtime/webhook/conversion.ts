/**
 * ConversionReview v1 (apiextensions.k8s.io/v1) handling: every object converted to the desired
 * apiVersion, in order; any failure answers `result.status: Failure` with the message (the apiserver
 * then fails the request).
 */
import type { KubeObject } from '../kube/types.js';
import type { WebhookHandler } from './server.js';

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

/** Wraps `convert(obj, desiredAPIVersion)` (pure) into the `/convert` handler. */
export function conversionHandler(convert: (obj: KubeObject, desiredAPIVersion: string) => KubeObject): WebhookHandler {
  return (body) => {
    const review = body as ConversionReview;
    if (review?.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview' || !review.request?.uid) {
      throw new Error('expected an apiextensions.k8s.io/v1 ConversionReview with a request');
    }
    const { uid, desiredAPIVersion, objects } = review.request;
    try {
      const convertedObjects = (objects ?? []).map((obj) => {
        const out = obj.apiVersion === desiredAPIVersion ? obj : convert(obj, desiredAPIVersion);
        if (out.apiVersion !== desiredAPIVersion) throw new Error(`conversion of ${obj.metadata?.name ?? '?'} produced ${out.apiVersion}, not ${desiredAPIVersion}`);
        return out;
      });
      return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, convertedObjects, result: { status: 'Success' } } } satisfies ConversionReview;
    } catch (err) {
      return {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: { uid, convertedObjects: [], result: { status: 'Failure', message: (err as Error).message } },
      } satisfies ConversionReview;
    }
  };
}
