/**
 * The ClusterServiceVersion, a view of the install manifests model: the install strategy is the model's
 * Deployment, permissions and clusterPermissions are the rules of the model's Roles and ClusterRoles bound
 * to the operator's ServiceAccount, the webhook definitions are the model's validating webhook and the
 * CRD's conversion webhook (OLM v1 generates the Service, the certificate and the configurations from
 * them). Pure.
 */
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { API_VERSION_V1, CRD_NAME, GROUP, KIND, V1, V1ALPHA1 } from '../../operator/api/meta.js';
import type { CustomResourceDefinition } from '../../operator/api/crd.js';
import type { InstallManifests } from '../manifests/index.js';
import type { OperatorMetadata } from '../manifests/metadata.js';
import { objectNames } from '../manifests/objects.js';
import { PATHS, PORTS, type ResolvedInstallOptions } from '../manifests/options.js';

export const CSV_API_VERSION = 'operators.coreos.com/v1alpha1';

export interface CSVOptions {
  packageName: string;
  version: string;
  /** The CSV this one replaces (`<package>.v<version>`). */
  replaces?: string;
  skips?: string[];
  /** `olm.skipRange`, a blang semver range. */
  skipRange?: string;
  /** RFC 3339 `createdAt`. */
  createdAt: string;
  metadata: OperatorMetadata;
  /** The sample InferenceService(s) for `alm-examples`. */
  examples: unknown[];
}

export interface PermissionSet {
  serviceAccountName: string;
  rules: Record<string, string[]>[];
}

export interface WebhookDefinition {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook' | 'ConversionWebhook';
  generateName: string;
  deploymentName: string;
  containerPort: number;
  targetPort?: number;
  webhookPath?: string;
  admissionReviewVersions: string[];
  sideEffects?: string;
  failurePolicy?: string;
  matchPolicy?: string;
  timeoutSeconds?: number;
  rules?: unknown[];
  conversionCRDs?: string[];
}

export interface ClusterServiceVersion {
  apiVersion: typeof CSV_API_VERSION;
  kind: 'ClusterServiceVersion';
  metadata: { name: string; annotations: Record<string, string>; labels?: Record<string, string> };
  spec: {
    displayName: string;
    description: string;
    version: string;
    replaces?: string;
    skips?: string[];
    minKubeVersion: string;
    maturity: string;
    provider: { name: string; url?: string };
    maintainers: { name: string; email?: string }[];
    links: { name: string; url: string }[];
    keywords: string[];
    icon?: { base64data: string; mediatype: string }[];
    installModes: { type: 'OwnNamespace' | 'SingleNamespace' | 'MultiNamespace' | 'AllNamespaces'; supported: boolean }[];
    install: {
      strategy: 'deployment';
      spec: {
        deployments: { name: string; label?: Record<string, string>; spec: unknown }[];
        permissions?: PermissionSet[];
        clusterPermissions?: PermissionSet[];
      };
    };
    customresourcedefinitions: { owned: OwnedCRD[] };
    apiservicedefinitions?: { owned?: unknown[] };
    webhookdefinitions?: WebhookDefinition[];
    relatedImages: { name: string; image: string }[];
  };
}

export interface OwnedCRD {
  name: string;
  version: string;
  kind: string;
  displayName: string;
  description: string;
  resources?: { kind: string; version: string }[];
  specDescriptors?: { path: string; displayName: string; description: string; 'x-descriptors'?: string[] }[];
  statusDescriptors?: { path: string; displayName: string; description: string; 'x-descriptors'?: string[] }[];
}

/** A sample InferenceService for the console's "create" form and `alm-examples`. */
export function sampleInferenceService(): Record<string, unknown> {
  return {
    apiVersion: API_VERSION_V1,
    kind: KIND,
    metadata: { name: 'llama' },
    spec: {
      model: { name: 'meta-llama/Llama-3.1-8B-Instruct', storageUri: 'hf://meta-llama/Llama-3.1-8B-Instruct' },
      runtime: { image: 'vllm/vllm-openai:v0.11.0', args: ['--model', '/mnt/models', '--served-model-name', 'meta-llama/Llama-3.1-8B-Instruct'], port: 8000 },
      resources: { gpu: { count: 1 }, requests: { cpu: '4', memory: '32Gi' } },
      scaling: { minReplicas: 1, maxReplicas: 2 },
    },
  };
}

const d = (path: string, displayName: string, description: string, x?: string[]) => ({ path, displayName, description, ...(x ? { 'x-descriptors': x } : {}) });

function ownedCRDs(crds: CustomResourceDefinition[]): OwnedCRD[] {
  const out: OwnedCRD[] = [];
  for (const crd of crds) {
    for (const v of [...crd.spec.versions].filter((x) => x.served).sort((a, b) => (a.name === V1 ? -1 : b.name === V1 ? 1 : a.name < b.name ? -1 : 1))) {
      const base = {
        name: crd.metadata.name,
        version: v.name,
        kind: crd.spec.names.kind,
        displayName: 'Inference Service',
        description: (v.schema.openAPIV3Schema.description as string | undefined) ?? crd.spec.names.kind,
        resources: [
          { kind: 'Deployment', version: 'v1' },
          { kind: 'Service', version: 'v1' },
          { kind: 'HTTPRoute', version: 'v1' },
          { kind: 'ResourceClaimTemplate', version: 'v1' },
        ],
      };
      if (crd.metadata.name === CRD_NAME && v.name === V1) {
        out.push({
          ...base,
          specDescriptors: [
            d('model.name', 'Model', 'The name the model is served under.'),
            d('model.storageUri', 'Model URI', 'Where the model is downloaded from (s3://, gs://, hf://, http(s)://).'),
            d('runtime.image', 'Model server image', 'The model server image (vLLM, Triton, TGI, ...).'),
            d('resources.gpu.count', 'GPUs per replica', 'GPUs each replica claims.', ['urn:alm:descriptor:com.tectonic.ui:number']),
            d('scaling.minReplicas', 'Minimum replicas', 'Fewest replicas; 0 allows scale to zero.', ['urn:alm:descriptor:com.tectonic.ui:number']),
            d('scaling.maxReplicas', 'Maximum replicas', 'Most replicas.', ['urn:alm:descriptor:com.tectonic.ui:number']),
            d('canary.trafficPercent', 'Canary traffic', 'Share of requests the canary gets.', ['urn:alm:descriptor:com.tectonic.ui:number']),
          ],
          statusDescriptors: [
            d('conditions', 'Conditions', 'Ready, Progressing and Degraded.', ['urn:alm:descriptor:io.kubernetes.conditions']),
            d('url', 'URL', 'Where the model is served.', ['urn:alm:descriptor:org.w3:link']),
            d('readyReplicas', 'Ready replicas', 'Replicas with the model loaded.', ['urn:alm:descriptor:com.tectonic.ui:podCount']),
          ],
        });
      } else {
        out.push(v.name === V1ALPHA1 ? { ...base, description: `${base.description} Deprecated: use ${GROUP}/${V1}.` } : base);
      }
    }
  }
  return out;
}

const rulesOf = (objects: { rules?: unknown }[]): Record<string, string[]>[] => objects.flatMap((o) => (o.rules as Record<string, string[]>[] | undefined) ?? []);

/** The webhook definitions OLM v1 turns into a Service, a certificate, the configurations and the CRD's conversion. */
export function webhookDefinitions(m: InstallManifests): WebhookDefinition[] {
  const o: ResolvedInstallOptions = m.options;
  if (o.webhook !== true) return [];
  const n = objectNames(o.name);
  const vwc = m.one('validating-webhook-configuration') as (V1ValidatingWebhookConfiguration & { metadata: { name: string } }) | undefined;
  const out: WebhookDefinition[] = [];
  for (const w of vwc?.webhooks ?? []) {
    out.push({
      type: 'ValidatingAdmissionWebhook',
      generateName: w.name,
      deploymentName: n.deployment,
      containerPort: PORTS.webhook,
      targetPort: PORTS.webhook,
      webhookPath: w.clientConfig.service?.path ?? '/',
      admissionReviewVersions: [...w.admissionReviewVersions],
      sideEffects: w.sideEffects,
      ...(w.failurePolicy ? { failurePolicy: w.failurePolicy } : {}),
      ...(w.matchPolicy ? { matchPolicy: w.matchPolicy } : {}),
      ...(w.timeoutSeconds !== undefined ? { timeoutSeconds: w.timeoutSeconds } : {}),
      rules: structuredClone(w.rules ?? []),
    });
  }
  const converted = m.crds.filter((c) => c.spec.conversion.strategy === 'Webhook');
  if (converted.length) {
    out.push({
      type: 'ConversionWebhook',
      generateName: n.conversionWebhook,
      deploymentName: n.deployment,
      containerPort: PORTS.webhook,
      targetPort: PORTS.webhook,
      webhookPath: PATHS.convert,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      conversionCRDs: converted.map((c) => c.metadata.name).sort(),
    });
  }
  return out;
}

export function buildCSV(m: InstallManifests, o: CSVOptions): ClusterServiceVersion {
  const n = objectNames(m.options.name);
  const meta = o.metadata;
  const deployment = m.deployment;
  const webhooks = webhookDefinitions(m);
  // OLM v1 accepts conversion webhooks only from bundles whose one supported install mode is AllNamespaces.
  const singleton = webhooks.some((w) => w.type === 'ConversionWebhook');
  const namespacedRules = rulesOf([...m.byRole('leader-election-role'), ...m.byRole('manager-role')] as { rules?: unknown }[]);
  const clusterRules = rulesOf([...m.byRole('manager-cluster-role'), ...m.byRole('metrics-auth-cluster-role')] as { rules?: unknown }[]);
  const image = m.options.image;
  return {
    apiVersion: CSV_API_VERSION,
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${o.packageName}.v${o.version}`,
      annotations: {
        'alm-examples': JSON.stringify(o.examples, null, 2),
        capabilities: meta.capabilities,
        categories: meta.categories.join(','),
        containerImage: image,
        createdAt: o.createdAt,
        description: meta.summary,
        ...(o.skipRange ? { 'olm.skipRange': o.skipRange } : {}),
        'operatorframework.io/suggested-namespace': m.options.namespace,
        'operators.operatorframework.io/builder': 'olmpub',
        repository: meta.home,
        support: meta.provider.name,
      },
    },
    spec: {
      displayName: meta.displayName,
      description: meta.description,
      version: o.version,
      ...(o.replaces ? { replaces: o.replaces } : {}),
      ...(o.skips?.length ? { skips: [...o.skips] } : {}),
      minKubeVersion: meta.minKubeVersion,
      maturity: meta.maturity,
      provider: { ...meta.provider },
      maintainers: meta.maintainers.map((x) => ({ name: x.name, ...(x.email ? { email: x.email } : {}) })),
      links: meta.links.map((l) => ({ ...l })),
      keywords: [...meta.keywords],
      ...(meta.iconSvg ? { icon: [{ base64data: Buffer.from(meta.iconSvg).toString('base64'), mediatype: 'image/svg+xml' }] } : {}),
      installModes: [
        { type: 'OwnNamespace', supported: !singleton },
        { type: 'SingleNamespace', supported: !singleton },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: deployment.metadata.name, label: { ...(deployment.metadata.labels ?? {}) }, spec: structuredClone(deployment.spec) }],
          ...(namespacedRules.length ? { permissions: [{ serviceAccountName: n.serviceAccount, rules: namespacedRules }] } : {}),
          clusterPermissions: [{ serviceAccountName: n.serviceAccount, rules: clusterRules }],
        },
      },
      customresourcedefinitions: { owned: ownedCRDs(m.crds) },
      ...(webhooks.length ? { webhookdefinitions: webhooks } : {}),
      relatedImages: [{ name: o.packageName, image }],
    },
  };
}
