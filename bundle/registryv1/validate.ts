/**
 * Every limit OLM v1 (operator-controller) puts on a registry+v1 bundle, and the operator-framework/api
 * checks it relies on, applied to the bundle's files before anything is written (reference/fbc.md §5,
 * reference/olmv1.md §3): flat manifests/, one CSV, allowed kinds, annotations, AllNamespaces, no
 * APIService, no dependencies, webhook definitions, owned CRDs present both ways, deployments, digests,
 * alm-examples, least-privilege RBAC and the 1 MiB gzip limit. Each problem is an OlmpubError with the
 * file and field it is about.
 */
import semver from 'semver';
import YAML from 'yaml';
import { validationError, type OlmpubError } from '../../lib/errors.js';
import { gzipBytes } from '../image/gzip.js';
import { tarStream, type LayerEntry } from '../image/tar.js';
import { readAll } from '../oci/store.js';
import { lintRules, type KubeObject } from '../rbac/index.js';
import { BundleAnnotation } from './bundle.js';
import type { ClusterServiceVersion, WebhookDefinition } from './csv.js';

/**
 * Kinds a registry+v1 bundle may ship under manifests/, and whether they are namespaced (operator-registry
 * v1.73.0 pkg/lib/bundle/supported_resources.go, `IsSupported`; OLM v1's renderer uses the same list).
 */
export const SUPPORTED_KINDS: Readonly<Record<string, boolean>> = Object.freeze({
  ClusterServiceVersion: true,
  CustomResourceDefinition: false,
  Secret: true,
  ClusterRole: false,
  ClusterRoleBinding: false,
  ConfigMap: true,
  ServiceAccount: true,
  Service: true,
  Role: true,
  RoleBinding: true,
  PrometheusRule: true,
  ServiceMonitor: true,
  PodDisruptionBudget: true,
  PriorityClass: false,
  VerticalPodAutoscaler: false,
  ConsoleYAMLSample: false,
  ConsoleQuickStart: false,
  ConsoleCLIDownload: false,
  ConsoleLink: false,
  ConsolePlugin: false,
  NetworkPolicy: true,
  PodMonitor: true,
});

export const ALLOWED_KINDS: readonly string[] = Object.keys(SUPPORTED_KINDS);

/** The gzipped-size limit of a bundle (operator-framework/api validator). */
export const MAX_BUNDLE_GZIP_BYTES = 1024 * 1024;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DIGEST_PINNED = /@sha256:[a-f0-9]{64}$/;
const isSubdomain = (s: string) => s.length <= 253 && DNS1123_SUBDOMAIN.test(s);

const FORBIDDEN_WEBHOOK_GROUPS = new Set(['*', 'olm.operatorframework.io']);
const FORBIDDEN_ADMISSION_RESOURCES = new Set(['*', 'mutatingwebhookconfiguration', 'mutatingwebhookconfigurations', 'validatingwebhookconfiguration', 'validatingwebhookconfigurations']);
const DEPENDENCY_PROPERTIES = new Set(['olm.package.required', 'olm.gvk.required', 'olm.constraint']);

export interface BundleFileInput {
  path: string;
  content: string | Uint8Array;
}

interface Parsed {
  path: string;
  object: Record<string, unknown>;
}

/** The gzipped size of the bundle's files as one tar (what the 1 MiB limit measures). */
export async function bundleGzipSize(files: readonly BundleFileInput[]): Promise<number> {
  const entries: LayerEntry[] = files.map((f) => ({ path: f.path, type: 'file', content: f.content }));
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : 1));
  return (await gzipBytes(await readAll(tarStream(sorted, { mtime: 0 })))).length;
}

const text = (c: string | Uint8Array) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'));

/** Parsed documents by file content: a large CRD is parsed once however often the bundle is checked. Read-only. */
const parsedCache = new Map<string, unknown[]>();
function parseDocs(content: string): unknown[] {
  const hit = parsedCache.get(content);
  if (hit) return hit;
  const docs = YAML.parseAllDocuments(content).map((d) => {
    if (d.errors.length) throw d.errors[0];
    return d.toJS() as unknown;
  });
  if (parsedCache.size >= 16) parsedCache.delete(parsedCache.keys().next().value!);
  parsedCache.set(content, docs);
  return docs;
}

/** Every problem OLM v1 would have with these bundle files (without the size limit, see checkRegistryV1). */
export function validateRegistryV1(files: readonly BundleFileInput[]): OlmpubError[] {
  const errors: OlmpubError[] = [];
  const err = (code: string, place: string, message: string, hint: string) => errors.push(validationError(code, message, { place, hint }));
  const manifests: Parsed[] = [];
  let annotations: Record<string, unknown> | undefined;
  const metadataFiles: string[] = [];

  for (const f of files) {
    const parts = f.path.split('/');
    if (parts[0] === 'manifests') {
      if (parts.length !== 2) {
        err('bundle-manifests-not-flat', f.path, 'manifests/ must be flat: OLM v1 refuses subdirectories', 'move the file directly under manifests/');
        continue;
      }
      if (parts[1]!.startsWith('.')) {
        err('bundle-hidden-file', f.path, 'hidden files are not allowed in manifests/', 'remove the file');
        continue;
      }
      let docs: unknown[];
      try {
        docs = parseDocs(text(f.content));
      } catch (e) {
        err('bundle-unparsable-manifest', f.path, `cannot parse: ${(e as Error).message}`, 'each file must be a YAML or JSON stream of objects');
        continue;
      }
      for (const doc of docs) {
        if (doc === null || doc === undefined) continue;
        if (typeof doc !== 'object' || Array.isArray(doc)) err('bundle-unparsable-manifest', f.path, 'a document is not an object', 'each document must be a Kubernetes object');
        else manifests.push({ path: f.path, object: doc as Record<string, unknown> });
      }
    } else if (parts[0] === 'metadata') {
      metadataFiles.push(f.path);
      if (f.path === 'metadata/annotations.yaml') {
        try {
          annotations = (YAML.parse(text(f.content)) as { annotations?: Record<string, unknown> } | null)?.annotations;
        } catch (e) {
          err('bundle-bad-annotations', f.path, `cannot parse: ${(e as Error).message}`, 'write `annotations:` with the bundle keys');
        }
      } else if (f.path === 'metadata/dependencies.yaml') {
        err('bundle-dependencies', f.path, 'OLM v1 does not support bundle dependencies', 'drop metadata/dependencies.yaml: OLM v1 resolves no dependencies');
      } else if (f.path === 'metadata/properties.yaml') {
        const props = ((YAML.parse(text(f.content)) as { properties?: { type?: string }[] } | null)?.properties ?? []).map((p) => p.type ?? '');
        for (const t of props.filter((p) => DEPENDENCY_PROPERTIES.has(p))) {
          err('bundle-dependencies', f.path, `property ${t} declares a dependency, which OLM v1 does not support`, 'remove the property');
        }
      }
    } else if (parts[0] !== 'tests') {
      err('bundle-unexpected-file', f.path, 'a registry+v1 bundle holds manifests/, metadata/ and tests/ only', 'remove the file');
    }
  }

  // Annotations.
  const A = 'metadata/annotations.yaml';
  if (!annotations) err('bundle-no-annotations', A, 'metadata/annotations.yaml with `annotations:` is required', 'write the bundle annotations (package, channels, media type)');
  const ann = (k: string) => (typeof annotations?.[k] === 'string' ? (annotations[k] as string) : undefined);
  const pkg = ann(BundleAnnotation.package);
  if (annotations) {
    if (!pkg) err('bundle-no-package', `${A}: ${BundleAnnotation.package}`, 'the package name is empty', 'set the package name');
    else if (!DNS1123_LABEL.test(pkg) || pkg.length > 63) err('bundle-bad-package', `${A}: ${BundleAnnotation.package}`, `package "${pkg}" is not a DNS-1123 label`, 'use lowercase letters, digits and "-"');
    if (ann(BundleAnnotation.mediatype) !== 'registry+v1') err('bundle-bad-mediatype', `${A}: ${BundleAnnotation.mediatype}`, 'the media type must be registry+v1', 'OLM v1 installs registry+v1 bundles only');
    if (ann(BundleAnnotation.manifests) !== 'manifests/') err('bundle-bad-annotation', `${A}: ${BundleAnnotation.manifests}`, 'must be "manifests/"', 'set it to manifests/');
    if (ann(BundleAnnotation.metadata) !== 'metadata/') err('bundle-bad-annotation', `${A}: ${BundleAnnotation.metadata}`, 'must be "metadata/"', 'set it to metadata/');
    const channels = (ann(BundleAnnotation.channels) ?? '').split(',').map((c) => c.trim()).filter(Boolean);
    if (!channels.length) err('bundle-no-channels', `${A}: ${BundleAnnotation.channels}`, 'at least one channel is required', 'list channels, e.g. stable');
    const def = annotations[BundleAnnotation.defaultChannel];
    if (def !== undefined && (typeof def !== 'string' || !def || !channels.includes(def))) {
      err('bundle-bad-default-channel', `${A}: ${BundleAnnotation.defaultChannel}`, `default channel "${String(def)}" is not one of the channels (${channels.join(', ')})`, 'name one of the bundle channels');
    }
  }

  // Kinds and the CSV.
  for (const m of manifests) {
    const kind = String(m.object.kind ?? '');
    if (!ALLOWED_KINDS.includes(kind)) err('bundle-kind-not-allowed', `${m.path}: ${kind || '(no kind)'}`, `kind ${kind || '(none)'} is not allowed in a registry+v1 bundle`, `ship only ${ALLOWED_KINDS.join(', ')}; OLM generates Deployments, webhooks and certificates from the CSV`);
  }
  const csvs = manifests.filter((m) => m.object.kind === 'ClusterServiceVersion');
  if (csvs.length !== 1) {
    err('bundle-csv-count', 'manifests/', `manifests/ holds ${csvs.length} ClusterServiceVersions; exactly one is required`, 'keep one CSV per bundle');
    return errors;
  }
  const csvFile = csvs[0]!;
  const csv = csvFile.object as unknown as ClusterServiceVersion;
  const at = (field: string) => `${csvFile.path}: ${field}`;
  const spec = (csv.spec ?? {}) as Partial<ClusterServiceVersion['spec']>;
  const name = csv.metadata?.name ?? '';
  if (!isSubdomain(name) || name.length > 63) err('bundle-bad-csv-name', at('metadata.name'), `CSV name "${name}" must be a DNS-1123 subdomain of at most 63 characters`, 'name it <package>.v<version>');
  const version = spec.version ?? '';
  if (!semver.valid(version)) err('bundle-bad-csv-version', at('spec.version'), `"${version}" is not semver`, 'use MAJOR.MINOR.PATCH');
  else if (pkg && name !== `${pkg}.v${version}`) err('bundle-bad-csv-name', at('metadata.name'), `CSV name "${name}" is not ${pkg}.v${version}`, 'name the CSV <package>.v<version>');
  if (spec.replaces !== undefined && (!isSubdomain(spec.replaces) || spec.replaces === name)) err('bundle-bad-replaces', at('spec.replaces'), `replaces "${spec.replaces}" is not another CSV name`, 'name the CSV this version replaces');
  for (const [i, s] of (spec.skips ?? []).entries()) if (!s) err('bundle-bad-skips', at(`spec.skips[${i}]`), 'an empty skips entry', 'remove it');
  const skipRange = csv.metadata?.annotations?.['olm.skipRange'];
  if (skipRange !== undefined && !semver.validRange(skipRange)) err('bundle-bad-skip-range', at('metadata.annotations[olm.skipRange]'), `olm.skipRange "${skipRange}" is not a semver range`, 'for example ">=1.0.0 <1.2.0"');
  for (const k of Object.keys(csv.metadata?.annotations ?? {})) {
    if (k.toLowerCase() === 'olm.skiprange' && k !== 'olm.skipRange') err('bundle-annotation-case', at(`metadata.annotations[${k}]`), `annotation "${k}" must be spelled olm.skipRange`, 'annotation keys are case-sensitive');
  }
  if (!spec.displayName) err('bundle-csv-missing', at('spec.displayName'), 'displayName is required', 'set spec.displayName');
  if (spec.minKubeVersion !== undefined && !semver.valid(spec.minKubeVersion)) err('bundle-bad-min-kube-version', at('spec.minKubeVersion'), `"${spec.minKubeVersion}" is not semver`, 'for example 1.30.0');

  // Install modes.
  const modes = spec.installModes ?? [];
  const supported = new Set(modes.filter((m) => m.supported).map((m) => m.type));
  if (new Set(modes.map((m) => m.type)).size !== modes.length) err('bundle-install-modes', at('spec.installModes'), 'an install mode is listed twice', 'list each mode once');
  if (!supported.has('AllNamespaces')) err('bundle-no-all-namespaces', at('spec.installModes'), 'OLM v1 requires the AllNamespaces install mode to be supported', 'support AllNamespaces (watch every namespace when WATCH_NAMESPACE is empty)');
  const webhooks: WebhookDefinition[] = spec.webhookdefinitions ?? [];
  const conversion = webhooks.filter((w) => w.type === 'ConversionWebhook');
  if (conversion.length && (supported.size !== 1 || !supported.has('AllNamespaces'))) {
    err('bundle-conversion-install-modes', at('spec.installModes'), `conversion webhooks need AllNamespaces to be the only supported install mode, but ${[...supported].sort().join(', ')} are supported`, 'mark OwnNamespace, SingleNamespace and MultiNamespace unsupported');
  }

  // No APIServices.
  if ((spec.apiservicedefinitions?.owned ?? []).length) err('bundle-apiservice', at('spec.apiservicedefinitions.owned'), 'OLM v1 does not support APIServices', 'serve the API through a CRD');

  // Deployments.
  const strategy = spec.install;
  if (strategy?.strategy !== 'deployment') err('bundle-bad-install-strategy', at('spec.install.strategy'), 'the install strategy must be "deployment"', 'set spec.install.strategy: deployment');
  const deployments = strategy?.spec?.deployments ?? [];
  if (!deployments.length) err('bundle-no-deployment', at('spec.install.spec.deployments'), 'the CSV installs no Deployment', 'add the operator Deployment');
  const deploymentNames = new Set<string>();
  deployments.forEach((dep, i) => {
    if (!isSubdomain(dep.name ?? '')) err('bundle-bad-deployment-name', at(`spec.install.spec.deployments[${i}].name`), `deployment name "${dep.name}" is not a DNS-1123 subdomain`, 'use lowercase letters, digits, "-" and "."');
    if (deploymentNames.has(dep.name)) err('bundle-duplicate-deployment', at(`spec.install.spec.deployments[${i}].name`), `deployment "${dep.name}" appears twice`, 'name deployments uniquely');
    deploymentNames.add(dep.name);
    const containers = ((dep.spec as { template?: { spec?: { containers?: { image?: string }[]; initContainers?: { image?: string }[] } } })?.template?.spec ?? {});
    for (const [j, c] of [...(containers.containers ?? []), ...(containers.initContainers ?? [])].entries()) {
      if (!DIGEST_PINNED.test(c.image ?? '')) err('bundle-image-not-pinned', at(`spec.install.spec.deployments[${i}] container ${j}`), `image "${c.image}" is not pinned by digest`, 'reference images as REPOSITORY@sha256:…');
    }
  });
  const serviceAccounts = new Set([...(strategy?.spec?.permissions ?? []), ...(strategy?.spec?.clusterPermissions ?? [])].map((p) => p.serviceAccountName));
  for (const m of manifests.filter((x) => x.object.kind === 'ServiceAccount')) {
    const saName = String((m.object.metadata as { name?: string } | undefined)?.name ?? '');
    if (serviceAccounts.has(saName)) err('bundle-service-account-conflict', `${m.path}: ServiceAccount/${saName}`, `ServiceAccount ${saName} is also generated from the CSV's permissions`, 'remove the file: OLM creates the ServiceAccount');
  }

  // Related images.
  for (const [i, r] of (spec.relatedImages ?? []).entries()) {
    if (!DIGEST_PINNED.test(r.image ?? '')) err('bundle-image-not-pinned', at(`spec.relatedImages[${i}]`), `related image "${r.image}" is not pinned by digest`, 'reference images as REPOSITORY@sha256:…');
  }

  // CRDs: owned ↔ shipped.
  const crdFiles = manifests.filter((m) => m.object.kind === 'CustomResourceDefinition');
  const crdNames = new Map<string, Parsed>();
  for (const c of crdFiles) {
    const n = String((c.object.metadata as { name?: string } | undefined)?.name ?? '');
    if (crdNames.has(n)) err('bundle-duplicate-crd', `${c.path}: ${n}`, `CRD ${n} appears twice`, 'ship each CRD once');
    crdNames.set(n, c);
  }
  const owned = spec.customresourcedefinitions?.owned ?? [];
  const ownedNames = new Set(owned.map((o) => o.name));
  owned.forEach((o, i) => {
    if (!crdNames.has(o.name)) err('bundle-owned-crd-missing', at(`spec.customresourcedefinitions.owned[${i}]`), `owned CRD ${o.name} is not in manifests/`, 'ship the CRD in manifests/');
    const crd = crdNames.get(o.name)?.object as { spec?: { versions?: { name: string }[]; names?: { kind?: string } } } | undefined;
    if (crd && !crd.spec?.versions?.some((v) => v.name === o.version)) err('bundle-owned-crd-version', at(`spec.customresourcedefinitions.owned[${i}]`), `CRD ${o.name} has no version ${o.version}`, 'list served versions of the CRD');
    if (crd && crd.spec?.names?.kind !== o.kind) err('bundle-owned-crd-kind', at(`spec.customresourcedefinitions.owned[${i}]`), `CRD ${o.name} is kind ${crd.spec?.names?.kind}, not ${o.kind}`, 'use the CRD kind');
    if (!o.displayName || !o.description) err('bundle-owned-crd-description', at(`spec.customresourcedefinitions.owned[${i}]`), `owned CRD ${o.name} ${o.version} needs a displayName and a description`, 'describe the API for the console');
  });
  for (const [n, c] of crdNames) if (!ownedNames.has(n)) err('bundle-crd-not-owned', `${c.path}: ${n}`, `CRD ${n} is shipped but not owned by the CSV`, 'add it to spec.customresourcedefinitions.owned');

  // Webhooks.
  const byType = new Map<string, Set<string>>();
  webhooks.forEach((w, i) => {
    const place = at(`spec.webhookdefinitions[${i}]`);
    if (!['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook', 'ConversionWebhook'].includes(w.type)) err('bundle-webhook-type', place, `unknown webhook type "${w.type}"`, 'use ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook');
    if (!isSubdomain(w.generateName ?? '')) err('bundle-webhook-name', place, `webhook name "${w.generateName}" is not a DNS-1123 subdomain`, 'use lowercase letters, digits, "-" and "."');
    const names = byType.get(w.type) ?? new Set<string>();
    if (names.has(w.generateName)) err('bundle-webhook-duplicate', place, `webhook "${w.generateName}" of type ${w.type} appears twice`, 'name webhooks uniquely per type');
    names.add(w.generateName);
    byType.set(w.type, names);
    if (!deploymentNames.has(w.deploymentName)) err('bundle-webhook-deployment', place, `webhook "${w.generateName}" references deployment "${w.deploymentName}", which the CSV does not install`, 'name a deployment of spec.install.spec.deployments');
    if (!Number.isInteger(w.containerPort) || w.containerPort < 1 || w.containerPort > 65535) err('bundle-webhook-port', place, `containerPort ${w.containerPort} is not a port`, 'use 1–65535');
    if (w.webhookPath !== undefined && !w.webhookPath.startsWith('/')) err('bundle-webhook-path', place, `webhookPath "${w.webhookPath}" must start with /`, 'for example /convert');
    if (!w.admissionReviewVersions?.includes('v1')) err('bundle-webhook-review-versions', place, 'admissionReviewVersions must include v1', 'set admissionReviewVersions: [v1]');
    if (w.type === 'ConversionWebhook') {
      if (!w.conversionCRDs?.length) err('bundle-conversion-crds', place, 'a conversion webhook must list conversionCRDs', 'name the CRDs it converts');
      for (const c of w.conversionCRDs ?? []) {
        if (!ownedNames.has(c)) err('bundle-conversion-crd-not-owned', place, `conversion webhook "${w.generateName}" references CRD ${c}, which the CSV does not own`, 'own the CRD or drop it from conversionCRDs');
        const crd = crdNames.get(c)?.object as { spec?: { preserveUnknownFields?: boolean } } | undefined;
        if (crd?.spec?.preserveUnknownFields) err('bundle-conversion-preserve-unknown', place, `CRD ${c} sets preserveUnknownFields, so the API server cannot call the conversion webhook`, 'set spec.preserveUnknownFields: false');
      }
      return;
    }
    if (w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') err('bundle-webhook-side-effects', place, `sideEffects must be None or NoneOnDryRun for admissionregistration.k8s.io/v1, got "${w.sideEffects}"`, 'declare sideEffects: None');
    for (const rule of (w.rules ?? []) as { apiGroups?: string[]; resources?: string[] }[]) {
      for (const g of rule.apiGroups ?? []) {
        if (FORBIDDEN_WEBHOOK_GROUPS.has(g)) err('bundle-webhook-forbidden-rule', place, `webhook "${w.generateName}" may not target API group "${g}"`, 'list the API groups the webhook is for');
        if (g === 'admissionregistration.k8s.io') {
          for (const r of rule.resources ?? []) if (FORBIDDEN_ADMISSION_RESOURCES.has(r.toLowerCase())) err('bundle-webhook-forbidden-rule', place, `webhook "${w.generateName}" may not target admissionregistration.k8s.io/${r}`, 'webhooks on webhook configurations can lock the cluster');
        }
      }
    }
  });
  const conversionTargets = new Map<string, string[]>();
  for (const w of conversion) for (const c of w.conversionCRDs ?? []) conversionTargets.set(c, [...(conversionTargets.get(c) ?? []), w.generateName]);
  for (const [c, ws] of conversionTargets) if (ws.length > 1) err('bundle-conversion-crd-shared', at('spec.webhookdefinitions'), `conversion webhooks ${ws.join(', ')} all convert CRD ${c}`, 'one conversion webhook per CRD');

  // alm-examples.
  const examples = csv.metadata?.annotations?.['alm-examples'];
  if (examples !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(examples);
    } catch (e) {
      err('bundle-bad-alm-examples', at('metadata.annotations[alm-examples]'), `alm-examples is not valid JSON: ${(e as Error).message}`, 'write a JSON array of example objects');
    }
    if (parsed !== undefined && !Array.isArray(parsed)) err('bundle-bad-alm-examples', at('metadata.annotations[alm-examples]'), 'alm-examples must be a JSON array', 'wrap the examples in [ ]');
    for (const [i, ex] of (Array.isArray(parsed) ? parsed : []).entries()) {
      const apiVersion = String((ex as { apiVersion?: unknown })?.apiVersion ?? '');
      const kind = String((ex as { kind?: unknown })?.kind ?? '');
      const [group, v] = apiVersion.split('/');
      const isOwned = owned.some((o) => o.kind === kind && o.version === v && o.name.endsWith(`.${group}`));
      if (!isOwned) err('bundle-alm-example-not-owned', at(`metadata.annotations[alm-examples][${i}]`), `example ${apiVersion} ${kind} is not an owned API`, 'give examples of owned CRDs only');
    }
  }

  // Least privilege of the operator's permissions (in AllNamespaces mode OLM promotes permissions to ClusterRoles).
  const roles: { object: KubeObject; place: string }[] = [];
  for (const [field, sets] of [['permissions', strategy?.spec?.permissions ?? []], ['clusterPermissions', strategy?.spec?.clusterPermissions ?? []]] as const) {
    sets.forEach((p, i) => roles.push({ object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${field}[${i}]` }, rules: p.rules }, place: at(`spec.install.spec.${field}[${i}]`) }));
  }
  for (const f of lintRules(roles)) errors.push(validationError(`bundle-rbac-${f.code}`, f.message, { place: f.place, hint: f.hint }));

  return errors;
}

/** All checks including the gzip size; throws one OlmpubError listing every problem. */
export async function checkRegistryV1(files: readonly BundleFileInput[]): Promise<{ gzipBytes: number }> {
  const errors = validateRegistryV1(files);
  const size = await bundleGzipSize(files);
  if (size > MAX_BUNDLE_GZIP_BYTES) {
    errors.push(validationError('bundle-too-large', `the bundle is ${size} bytes gzipped; OLM's limit is ${MAX_BUNDLE_GZIP_BYTES}`, { place: 'manifests/', hint: 'shrink the CRD schemas or descriptions, or drop optional manifests' }));
  }
  if (errors.length) throw validationError('bundle-invalid', `the registry+v1 bundle breaks ${errors.length} OLM v1 rule(s)`, { children: errors, hint: 'fix the model or the release options; nothing was written' });
  return { gzipBytes: size };
}
