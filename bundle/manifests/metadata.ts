/**
 * What is said about the operator where it is published: the chart's Chart.yaml and the CSV share it,
 * so the two cannot describe the operator differently.
 */

export interface Maintainer {
  name: string;
  email?: string;
  url?: string;
}

export interface OperatorMetadata {
  /** @default 'Inference Operator' */
  displayName: string;
  /** One line. */
  summary: string;
  /** Markdown, several paragraphs (the CSV's description). */
  description: string;
  /** @default the project's repository URL */
  home: string;
  sources: string[];
  maintainers: Maintainer[];
  provider: { name: string; url?: string };
  links: { name: string; url: string }[];
  keywords: string[];
  /** OperatorHub categories, comma separated in the CSV. */
  categories: string[];
  /** OperatorHub capability level. */
  capabilities: 'Basic Install' | 'Seamless Upgrades' | 'Full Lifecycle' | 'Deep Insights' | 'Auto Pilot';
  maturity: 'alpha' | 'beta' | 'stable';
  license: string;
  /** An SVG icon, or none. */
  iconSvg?: string;
  /** Oldest Kubernetes the operator supports (`1.30.0`): the chart's kubeVersion and the CSV's minKubeVersion. */
  minKubeVersion: string;
}

export const PROJECT_URL = 'https://github.com/olmpub/olmpub';

/** A small flat icon: a chip with a spark, in the project's colours. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect x="12" y="12" width="40" height="40" rx="6" fill="#2b5797"/>' +
  '<g stroke="#2b5797" stroke-width="3">' +
  '<path d="M20 4v8M32 4v8M44 4v8M20 52v8M32 52v8M44 52v8M4 20h8M4 32h8M4 44h8M52 20h8M52 32h8M52 44h8"/></g>' +
  '<path d="M34 18l-12 16h9l-3 12 12-16h-9z" fill="#ffd23f"/></svg>';

export function defaultOperatorMetadata(): OperatorMetadata {
  return {
    displayName: 'Inference Operator',
    summary: 'Serves machine-learning models on Kubernetes: GPUs, scaling, canary rollouts and scale to zero.',
    description: [
      'The inference operator serves models over HTTP. One `InferenceService` (group `inference.olmpub.dev`)',
      'becomes a Deployment of model-server pods (vLLM, Triton, TGI, ...), a Service, optionally an HTTPRoute,',
      'a canary Deployment and a DRA ResourceClaimTemplate; its status says when the model is actually loaded.',
      '',
      '## Features',
      '- GPUs through the device plugin or DRA device requests, with a per-namespace GPU quota enforced by a',
      '  validating webhook (`inference.olmpub.dev/gpu-quota` on the Namespace).',
      '- Scaling between minReplicas and maxReplicas (scale subresource, HPA, KEDA), and scale to zero after an',
      '  idle timeout.',
      '- Canary rollouts with a traffic percentage, promotion and rollback.',
      '- Model download from s3://, gs://, hf:// or http(s)://, optionally cached on a PersistentVolumeClaim.',
      '',
      '## Operations',
      'Two replicas with leader election, HTTPS metrics behind TokenReview/SubjectAccessReview, a restricted',
      'security context, a NetworkPolicy and a PodDisruptionBudget. `inference.olmpub.dev/v1alpha1` is still',
      'served (deprecated); a conversion webhook translates it to `v1`.',
    ].join('\n'),
    home: PROJECT_URL,
    sources: [PROJECT_URL],
    maintainers: [{ name: 'olmpub maintainers', email: 'maintainers@olmpub.dev' }],
    provider: { name: 'olmpub', url: PROJECT_URL },
    links: [
      { name: 'Source', url: PROJECT_URL },
      { name: 'Documentation', url: `${PROJECT_URL}/blob/main/docs/operator.md` },
    ],
    keywords: ['inference', 'model-serving', 'llm', 'gpu', 'machine-learning'],
    categories: ['AI/Machine Learning'],
    capabilities: 'Seamless Upgrades',
    maturity: 'alpha',
    license: 'Apache-2.0',
    iconSvg: ICON_SVG,
    minKubeVersion: '1.30.0',
  };
}
