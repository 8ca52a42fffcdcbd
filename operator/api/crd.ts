/**
 * The InferenceService CustomResourceDefinition (apiextensions.k8s.io/v1), built from the typed
 * schemas in v1.ts and v1alpha1.ts. Deterministic: same options, same object.
 */
import type { JSONSchemaProps } from './schema.js';
import { CRD_NAME, GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, V1, V1ALPHA1 } from './meta.js';
import { inferenceServiceSchemaV1 } from './v1.js';
import { DEPRECATION_WARNING_V1ALPHA1, inferenceServiceSchemaV1alpha1 } from './v1alpha1.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources: {
    status: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns: PrinterColumn[];
}

export interface WebhookClientConfig {
  /** Base64 PEM bundle; cert-manager's CA injector or OLM fills it in. */
  caBundle?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  url?: string;
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition as plain JSON. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced';
    versions: CRDVersion[];
    conversion: { strategy: 'None' } | { strategy: 'Webhook'; webhook: { conversionReviewVersions: ['v1']; clientConfig: WebhookClientConfig } };
  };
}

export interface CRDOptions {
  /**
   * Where the apiserver sends ConversionReviews. Default: the Service `olmpub-webhook` in
   * `olmpub-system`, port 443, path `/convert`, no caBundle: the installer (OLM, Helm, cert-manager)
   * fills in the real namespace, Service and CA.
   */
  conversionClientConfig?: WebhookClientConfig;
  /** Extra labels on the CRD (the bundle adds its own). */
  labels?: Record<string, string>;
}

export const DEFAULT_CONVERSION_CLIENT_CONFIG: WebhookClientConfig = {
  service: { namespace: 'olmpub-system', name: 'olmpub-webhook', path: '/convert', port: 443 },
};

const printerColumns: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Whether the model is loaded and served.' },
  { name: 'Replicas', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Replicas with the model loaded.' },
  { name: 'URL', type: 'string', jsonPath: '.status.url', description: 'Where the model is served.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
];

/** The JSON paths of the scale subresource per version; tests check they name real schema fields. */
export const SCALE_PATHS = {
  [V1]: { specReplicasPath: '.spec.scaling.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  [V1ALPHA1]: { specReplicasPath: '.spec.replicas.desired', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
} as const;

/** The InferenceService CRD: v1alpha1 served and deprecated, v1 served and stored, webhook conversion. */
export function inferenceServiceCRD(options: CRDOptions = {}): CustomResourceDefinition {
  const clientConfig = structuredClone(options.conversionClientConfig ?? DEFAULT_CONVERSION_CLIENT_CONFIG);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME, ...(options.labels ? { labels: { ...options.labels } } : {}) },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: [...SHORT_NAMES], categories: ['olmpub'] },
      scope: 'Namespaced',
      versions: [
        {
          name: V1ALPHA1,
          served: true,
          storage: false,
          deprecated: true,
          deprecationWarning: DEPRECATION_WARNING_V1ALPHA1,
          schema: { openAPIV3Schema: structuredClone(inferenceServiceSchemaV1alpha1.json) },
          subresources: { status: {}, scale: { ...SCALE_PATHS[V1ALPHA1] } },
          additionalPrinterColumns: structuredClone(printerColumns),
        },
        {
          name: V1,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: structuredClone(inferenceServiceSchemaV1.json) },
          subresources: { status: {}, scale: { ...SCALE_PATHS[V1] } },
          additionalPrinterColumns: structuredClone(printerColumns),
        },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } },
    },
  };
}

/** Every CRD the operator owns (one today), in a stable order. */
export function operatorCRDs(options: CRDOptions = {}): CustomResourceDefinition[] {
  return [inferenceServiceCRD(options)];
}
