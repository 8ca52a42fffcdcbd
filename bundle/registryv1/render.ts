/**
 * What OLM v1 installs from a registry+v1 bundle: the objects operator-controller's registry+v1 renderer
 * generates for a ClusterExtension's install namespace, with exactly the names it generates. A port of
 * operator-framework/operator-controller (v1.10.0 and v1.11.0):
 * - internal/operator-controller/rukpak/bundle/source/source.go (reading the bundle files),
 * - internal/operator-controller/rukpak/render/render.go (target namespaces, the unique name generator),
 * - internal/operator-controller/rukpak/render/registryv1/registryv1.go (the generators, in order),
 * - internal/operator-controller/rukpak/render/registryv1/generators/generators.go (each generator),
 * - internal/operator-controller/rukpak/render/certprovider.go and certproviders/certmanager.go,
 * - internal/operator-controller/rukpak/util/util.go (ObjectNameForBaseAndSuffix),
 * - internal/shared/util/hash/hash.go (DeepHashObject: base36 of SHA-224 of Go's JSON encoding).
 * Pure: bundle files in, objects out.
 *
 * Known differences: where OLM iterates a Go map (ServiceAccounts, webhook-serving Deployments for
 * cert-manager objects) its order is random; here it is sorted by name. `spec.config.deploymentConfig`
 * (experimental) is not applied. Objects carry the fields the generators set, not every zero value Go's
 * typed structs add when serialised (`status: {}`, `creationTimestamp: null`).
 */
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { sortKeys } from '../../lib/canonical.js';
import { OlmpubError, validationError } from '../../lib/errors.js';
import { goJSON } from '../oci/content.js';
import type { KubeObject } from '../rbac/authorizer.js';
import { BundleAnnotation } from './bundle.js';
import { ALLOWED_KINDS, SUPPORTED_KINDS, type BundleFileInput } from './validate.js';

type Obj = Record<string, unknown>;

/** A manifest of the bundle with the file it came from. */
export interface BundleManifest {
  path: string;
  object: KubeObject;
}

/** A registry+v1 bundle as operator-controller reads it (source.go `GetBundle`). */
export interface RegistryV1Contents {
  /** `operators.operatorframework.io.bundle.package.v1` from metadata/annotations.yaml. */
  packageName: string;
  /** The ClusterServiceVersion, with `olm.properties` merged from metadata/properties.yaml as OLM does. */
  csv: BundleManifest;
  crds: BundleManifest[];
  /** Every other manifest. */
  others: BundleManifest[];
}

export interface RenderOptions {
  /** `spec.namespace` of the ClusterExtension. */
  installNamespace: string;
  /**
   * Namespaces the operator watches (`watchNamespace`). @default `['']` (all namespaces) when the CSV
   * supports AllNamespaces; otherwise required, as in OLM.
   */
  targetNamespaces?: string[];
  /**
   * How webhook certificates are provisioned. OLM v1 uses cert-manager (feature gate
   * `WebhookProviderCertManager`, on by default since v1.6); `none` renders as operator-controller's
   * renderer does without a certificate provider (its regression tests). @default 'cert-manager'
   */
  certProvider?: 'cert-manager' | 'none';
  /**
   * The OLM version whose renderer to follow, `MAJOR.MINOR`. Only the Deployment's pod annotations differ:
   * `olm.operatorNamespace` is set from v1.11 on (PR #2803). @default '1.11'
   */
  olmVersion?: string;
}

const RBAC_API = 'rbac.authorization.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
const ADMISSION_API = 'admissionregistration.k8s.io/v1';
const CERT_MANAGER_API = 'cert-manager.io/v1';
const CERT_MANAGER_INJECT_CA = 'cert-manager.io/inject-ca-from';
const MAX_NAME_LENGTH = 63;

// ---------------------------------------------------------------------------------------------
// Names

/** util.ObjectNameForBaseAndSuffix: `<base>-<suffix>`, the base cut so that base+suffix fit 63 characters. */
export function objectNameForBaseAndSuffix(base: string, suffix: string): string {
  const b = base.length + suffix.length > MAX_NAME_LENGTH ? base.slice(0, MAX_NAME_LENGTH - suffix.length - 1) : base;
  return `${b}-${suffix}`;
}

/** hash.DeepHashObject: base36 of the SHA-224 of what Go's `json.Encoder` writes (the value in Go field order, a newline). */
export function deepHashObject(goValue: unknown): string {
  const digest = createHash('sha224').update(`${goJSON(goValue)}\n`).digest('hex');
  return BigInt(`0x${digest}`).toString(36);
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : undefined);

/** An rbacv1.PolicyRule as Go's JSON encoder writes it: `verbs` always, the other lists only when non-empty. */
function goPolicyRule(rule: unknown): Obj {
  const r = (rule ?? {}) as Obj;
  const out: Obj = { verbs: strings(r.verbs) ?? null };
  for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs']) {
    const v = strings(r[k]);
    if (v?.length) out[k] = v;
  }
  return out;
}

/** A CSV permission set (v1alpha1.StrategyDeploymentPermissions) in Go's field order. */
interface Permission {
  serviceAccountName: string;
  rules: Obj[] | null;
}

function permissionsOf(value: unknown): Permission[] {
  return (Array.isArray(value) ? value : []).map((p) => {
    const o = (p ?? {}) as Obj;
    return {
      serviceAccountName: typeof o.serviceAccountName === 'string' ? o.serviceAccountName : '',
      rules: Array.isArray(o.rules) ? o.rules.map(goPolicyRule) : null,
    };
  });
}

/**
 * render.DefaultUniqueNameGenerator for a permission set: `<csv>-<serviceAccount>` cut to fit, then the
 * base36 SHA-224 of the permission set. These are the names of the generated (Cluster)Roles and bindings.
 */
export function permissionObjectName(csvName: string, permission: { serviceAccountName?: string; rules?: unknown[] | null }): string {
  return permissionName(csvName, {
    serviceAccountName: permission.serviceAccountName ?? '',
    rules: Array.isArray(permission.rules) ? permission.rules.map(goPolicyRule) : null,
  });
}

const permissionName = (csvName: string, p: Permission) => objectNameForBaseAndSuffix(`${csvName}-${saNameOrDefault(p.serviceAccountName)}`, deepHashObject(p));

const saNameOrDefault = (name: string) => name || 'default';

/** render.CertProvisionerFor: the webhook Service and certificate names OLM derives from a Deployment name. */
export function certProvisionerNames(deploymentName: string): { serviceName: string; certName: string; issuerName: string } {
  const serviceName = objectNameForBaseAndSuffix(deploymentName.replaceAll('.', '-'), 'service');
  const certName = objectNameForBaseAndSuffix(serviceName, 'cert');
  return { serviceName, certName, issuerName: objectNameForBaseAndSuffix(certName, 'selfsigned-issuer') };
}

// ---------------------------------------------------------------------------------------------
// Reading the bundle (source.go)

const text = (c: string | Uint8Array) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'));

function parseStream(path: string, content: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of YAML.parseAllDocuments(content)) {
    if (doc.errors.length) throw validationError('bundle-unparsable-manifest', `${path}: ${doc.errors[0]!.message.split('\n')[0]}`, { place: path, hint: 'each file must be a YAML or JSON stream of objects' });
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw validationError('bundle-unparsable-manifest', `${path}: a document is not an object`, { place: path });
    const o = value as KubeObject;
    // The resource builder flattens lists.
    if (typeof o.kind === 'string' && o.kind.endsWith('List') && Array.isArray(o.items)) out.push(...(o.items as KubeObject[]).filter((i) => i && typeof i === 'object'));
    else out.push(o);
  }
  return out;
}

/**
 * Reads bundle files (paths `manifests/...`, `metadata/...`) as operator-controller does: the package from
 * metadata/annotations.yaml, a flat manifests/ with one ClusterServiceVersion, CRDs and other objects, and
 * metadata/properties.yaml merged into the CSV annotation `olm.properties`.
 */
export function readRegistryV1(files: readonly BundleFileInput[]): RegistryV1Contents {
  const annotationsFile = files.find((f) => f.path === 'metadata/annotations.yaml');
  if (!annotationsFile) {
    throw validationError('bundle-no-annotations', 'metadata/annotations.yaml is missing', { place: 'metadata/annotations.yaml', hint: 'a registry+v1 bundle needs metadata/annotations.yaml with the package name' });
  }
  const annotations = ((YAML.parse(text(annotationsFile.content)) as { annotations?: Record<string, unknown> } | null)?.annotations ?? {}) as Record<string, unknown>;
  const packageName = typeof annotations[BundleAnnotation.package] === 'string' ? (annotations[BundleAnnotation.package] as string) : '';
  let csv: BundleManifest | undefined;
  const crds: BundleManifest[] = [];
  const others: BundleManifest[] = [];
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const parts = f.path.split('/');
    if (parts[0] !== 'manifests') continue;
    if (parts.length !== 2) {
      throw validationError('bundle-manifests-not-flat', `subdirectories are not allowed within the "manifests" directory: found "${parts.slice(0, -1).join('/')}"`, { place: f.path, hint: 'move the file directly under manifests/' });
    }
    for (const object of parseStream(f.path, text(f.content))) {
      if (object.kind === 'ClusterServiceVersion') {
        if (csv) throw validationError('bundle-csv-count', `more than one ClusterServiceVersion in "manifests" (${csv.path}, ${f.path})`, { place: f.path, hint: 'keep one CSV per bundle' });
        csv = { path: f.path, object: structuredClone(object) };
      } else if (object.kind === 'CustomResourceDefinition') crds.push({ path: f.path, object });
      else others.push({ path: f.path, object });
    }
  }
  if (!csv) throw validationError('bundle-no-csv', 'no ClusterServiceVersion found in "manifests"', { place: 'manifests/', hint: 'pass a registry+v1 bundle directory (manifests/ with a CSV, metadata/annotations.yaml)' });

  // copyMetadataPropertiesToCSV: CSV properties then metadata/properties.yaml, as one JSON annotation.
  const propertiesFile = files.find((f) => f.path === 'metadata/properties.yaml');
  const propertiesText = propertiesFile ? text(propertiesFile.content) : '';
  if (propertiesText.length) {
    const meta = (csv.object.metadata ??= {}) as Obj;
    const ann = ((meta.annotations as Record<string, string> | undefined) ?? {}) as Record<string, string>;
    const all: unknown[] = [];
    if (typeof ann['olm.properties'] === 'string') all.push(...(JSON.parse(ann['olm.properties']) as unknown[]));
    // sigs.k8s.io/yaml turns YAML into JSON through a map, so values from the file have sorted keys.
    const fromFile = ((YAML.parse(propertiesText) as { properties?: unknown[] } | null)?.properties ?? []).map((p) => sortKeys(p));
    all.push(...fromFile);
    const props = all.map((p) => ({ type: (p as Obj)?.type ?? '', value: (p as Obj)?.value ?? null }));
    meta.annotations = { ...ann, 'olm.properties': goJSON(props) };
  }
  return { packageName, csv, crds, others };
}

// ---------------------------------------------------------------------------------------------
// Rendering (render.go, registryv1.go, generators.go)

interface CSVSpec {
  installModes?: { type?: string; supported?: boolean }[];
  install?: { spec?: { deployments?: { name?: string; label?: Record<string, string>; spec?: Obj }[]; permissions?: unknown[]; clusterPermissions?: unknown[] } };
  webhookdefinitions?: WebhookDescription[];
  apiservicedefinitions?: { owned?: unknown[] };
}

interface WebhookDescription {
  generateName?: string;
  type?: string;
  deploymentName?: string;
  containerPort?: number;
  targetPort?: number | string;
  rules?: unknown[];
  failurePolicy?: string;
  matchPolicy?: string;
  objectSelector?: unknown;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  webhookPath?: string;
  conversionCRDs?: string[];
}

const supportedModes = (spec: CSVSpec) => new Set((spec.installModes ?? []).filter((m) => m.supported).map((m) => m.type ?? ''));

/** render.go validateTargetNamespaces, with OLM's messages. */
function checkTargetNamespaces(modes: Set<string>, installNamespace: string, targets: string[]): string | undefined {
  const set = new Set(targets);
  const list = [...modes].sort().join(' ');
  if (set.size === 0) return modes.has('MultiNamespace') ? 'at least one target namespace must be specified' : 'exactly one target namespace must be specified';
  if (set.size === 1 && set.has('')) return modes.has('AllNamespaces') ? undefined : `supported install modes [${list}] do not support targeting all namespaces`;
  if (set.size === 1) {
    if (targets[0] === installNamespace) return modes.has('OwnNamespace') ? undefined : `supported install modes [${list}] do not support targeting own namespace`;
    if (modes.has('SingleNamespace')) return undefined;
  } else {
    if (!modes.has('OwnNamespace') && set.has(installNamespace)) return `supported install modes [${list}] do not support targeting own namespace`;
    if (modes.has('MultiNamespace') && !set.has('')) return undefined;
  }
  return `supported install modes [${list}] do not support target namespaces [${targets.join(' ')}]`;
}

const olmAtLeast = (version: string, minor: number): boolean => {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) throw validationError('bad-olm-version', `OLM version "${version}" is not MAJOR.MINOR`, { hint: 'for example 1.10 or 1.11' });
  return Number(m[1]) > 1 || (Number(m[1]) === 1 && Number(m[2]) >= minor);
};

const clone = <T>(v: T): T => structuredClone(v);

/**
 * The objects OLM v1 creates for this bundle in `installNamespace`, in the order of operator-controller's
 * ResourceGenerators: ServiceAccounts; Roles and RoleBindings (`permissions`, unless all namespaces are
 * watched); ClusterRoles and ClusterRoleBindings (`clusterPermissions`, plus `permissions` with
 * get/list/watch on namespaces when all namespaces are watched); CRDs (conversion webhook wired); other
 * manifests; Deployments; Validating and Mutating webhook configurations; webhook Services; cert-manager
 * Issuers and Certificates. Throws an OlmpubError where OLM would refuse the bundle.
 */
export function renderRegistryV1(bundle: RegistryV1Contents, options: RenderOptions): KubeObject[] {
  const ns = options.installNamespace;
  const csv = bundle.csv.object;
  const csvName = String(csv.metadata?.name ?? '');
  const csvAnnotations = ((csv.metadata as Obj | undefined)?.annotations ?? {}) as Record<string, string>;
  const spec = (csv.spec ?? {}) as CSVSpec;
  const at = (field: string) => `${bundle.csv.path}: ${field}`;
  const certManager = (options.certProvider ?? 'cert-manager') === 'cert-manager';
  const operatorNamespaceAnnotation = olmAtLeast(options.olmVersion ?? '1.11', 11);

  if (!ns) throw validationError('render-no-namespace', 'the install namespace is empty', { hint: 'give the ClusterExtension spec.namespace' });
  if (!bundle.packageName) {
    throw validationError('bundle-no-package', 'package name is empty', { place: `metadata/annotations.yaml: ${BundleAnnotation.package}`, hint: 'set the bundle package annotation' });
  }
  const modes = supportedModes(spec);
  const targets = options.targetNamespaces?.length ? [...options.targetNamespaces] : modes.has('AllNamespaces') ? [''] : [];
  const bad = checkTargetNamespaces(modes, ns, targets);
  if (bad) {
    throw validationError('render-target-namespaces', `invalid option(s): invalid target namespaces [${targets.join(' ')}]: ${bad}`, { place: at('spec.installModes'), hint: 'OLM v1 installs AllNamespaces bundles; others need a watchNamespace' });
  }
  const allNamespaces = targets.length === 1 && targets[0] === '';

  const strategy = spec.install?.spec ?? {};
  const permissions = permissionsOf(strategy.permissions);
  const clusterPermissions = permissionsOf(strategy.clusterPermissions);
  const deployments = strategy.deployments ?? [];
  const webhooks = spec.webhookdefinitions ?? [];
  const objects: KubeObject[] = [];
  const rulesOut = (p: Permission) => (p.rules ?? []).map((r) => ({ ...r, verbs: r.verbs ?? [] }));

  // BundleCSVServiceAccountGenerator
  const serviceAccounts = [...new Set([...permissions, ...clusterPermissions].map((p) => saNameOrDefault(p.serviceAccountName)))].sort();
  for (const name of serviceAccounts) if (name !== 'default') objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });

  // BundleCSVPermissionsGenerator
  if (!allNamespaces) {
    for (const target of targets) {
      for (const p of permissions) {
        const sa = saNameOrDefault(p.serviceAccountName);
        const name = permissionName(csvName, p);
        objects.push(
          { apiVersion: RBAC_API, kind: 'Role', metadata: { name, namespace: target }, rules: rulesOut(p) },
          {
            apiVersion: RBAC_API,
            kind: 'RoleBinding',
            metadata: { name, namespace: target },
            subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
            roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name },
          },
        );
      }
    }
  }

  // BundleCSVClusterPermissionsGenerator: in AllNamespaces mode permissions are promoted, plus namespaces get/list/watch.
  const clusterSets = [...clusterPermissions];
  if (allNamespaces) {
    for (const p of permissions) clusterSets.push({ ...p, rules: [...(p.rules ?? []), { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] }] });
  }
  for (const p of clusterSets) {
    const sa = saNameOrDefault(p.serviceAccountName);
    const name = permissionName(csvName, p);
    objects.push(
      { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: { name }, rules: rulesOut(p) },
      {
        apiVersion: RBAC_API,
        kind: 'ClusterRoleBinding',
        metadata: { name },
        subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
      },
    );
  }

  const injectCA = (o: KubeObject, deploymentName: string) => {
    if (!certManager) return;
    const meta = (o.metadata ??= {}) as Obj;
    meta.annotations = { ...((meta.annotations as Record<string, string> | undefined) ?? {}), [CERT_MANAGER_INJECT_CA]: `${ns}/${certProvisionerNames(deploymentName).certName}` };
  };

  // BundleCRDGenerator
  const conversionByCRD = new Map<string, WebhookDescription>();
  for (const w of webhooks.filter((x) => x.type === 'ConversionWebhook')) {
    for (const crdName of w.conversionCRDs ?? []) {
      if (conversionByCRD.has(crdName)) {
        throw validationError('render-conversion-crd-shared', `custom resource definition '${crdName}' is referenced by multiple conversion webhook definitions`, { place: at('spec.webhookdefinitions'), hint: 'one conversion webhook per CRD' });
      }
      conversionByCRD.set(crdName, w);
    }
  }
  for (const { path, object } of bundle.crds) {
    const crd = clone(object);
    const w = conversionByCRD.get(String(crd.metadata?.name ?? ''));
    if (w) {
      const crdSpec = (crd.spec ??= {}) as Obj;
      if (crdSpec.preserveUnknownFields === true) {
        throw validationError('render-conversion-preserve-unknown', `custom resource definition '${crd.metadata?.name}' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion`, { place: path });
      }
      crdSpec.conversion = {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { namespace: ns, name: certProvisionerNames(w.deploymentName ?? '').serviceName, path: w.webhookPath ?? '/', port: w.containerPort ?? 0 } },
          conversionReviewVersions: w.admissionReviewVersions ?? null,
        },
      };
      injectCA(crd, w.deploymentName ?? '');
    }
    objects.push(crd);
  }

  // BundleAdditionalResourcesGenerator
  for (const { path, object } of bundle.others) {
    const kind = String(object.kind ?? '');
    const namespaced = SUPPORTED_KINDS[kind];
    if (namespaced === undefined) {
      throw validationError('render-unsupported-resource', `bundle contains unsupported resource: Name: ${object.metadata?.name ?? ''}, Kind: ${kind}`, { place: path, hint: `OLM v1 installs only ${ALLOWED_KINDS.join(', ')} from manifests/` });
    }
    const o = clone(object);
    if (namespaced) o.metadata = { ...(o.metadata ?? {}), namespace: ns };
    objects.push(o);
  }

  // BundleCSVDeploymentGenerator
  const webhookDeployments = new Set(webhooks.map((w) => w.deploymentName ?? ''));
  for (const dep of deployments) {
    const depSpec = clone(dep.spec ?? {}) as Obj & { template?: { metadata?: { annotations?: Record<string, string> } } };
    const template = (depSpec.template ??= {});
    const tmeta = (template.metadata ??= {});
    const annotations: Record<string, string> = { ...csvAnnotations, ...(tmeta.annotations ?? {}) };
    annotations['olm.targetNamespaces'] = targets.join(',');
    if (operatorNamespaceAnnotation) annotations['olm.operatorNamespace'] = ns;
    tmeta.annotations = annotations;
    depSpec.revisionHistoryLimit = 1;
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: dep.name ?? '', namespace: ns, ...(dep.label ? { labels: { ...dep.label } } : {}) },
      spec: depSpec,
    };
    if (certManager && webhookDeployments.has(dep.name ?? '')) ensureCertVolumes(deployment, certProvisionerNames(dep.name ?? '').certName);
    objects.push(deployment);
  }

  // BundleValidatingWebhookResourceGenerator, BundleMutatingWebhookResourceGenerator
  const namespaceSelector = targets.length > 0 && !targets.includes('') ? { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...targets] }] } : undefined;
  for (const [type, kind] of [
    ['ValidatingAdmissionWebhook', 'ValidatingWebhookConfiguration'],
    ['MutatingAdmissionWebhook', 'MutatingWebhookConfiguration'],
  ] as const) {
    for (const w of webhooks.filter((x) => x.type === type)) {
      const name = (w.generateName ?? '').replace(/-$/, '');
      const webhook: Obj = {
        name,
        clientConfig: { service: { namespace: ns, name: certProvisionerNames(w.deploymentName ?? '').serviceName, ...(w.webhookPath !== undefined ? { path: w.webhookPath } : {}), port: w.containerPort ?? 0 } },
        ...(w.rules !== undefined ? { rules: clone(w.rules) } : {}),
        ...(w.failurePolicy !== undefined ? { failurePolicy: w.failurePolicy } : {}),
        ...(w.matchPolicy !== undefined ? { matchPolicy: w.matchPolicy } : {}),
        ...(namespaceSelector ? { namespaceSelector: clone(namespaceSelector) } : {}),
        ...(w.objectSelector !== undefined ? { objectSelector: clone(w.objectSelector) } : {}),
        ...(w.sideEffects !== undefined ? { sideEffects: w.sideEffects } : {}),
        ...(w.timeoutSeconds !== undefined ? { timeoutSeconds: w.timeoutSeconds } : {}),
        admissionReviewVersions: w.admissionReviewVersions ?? null,
        ...(kind === 'MutatingWebhookConfiguration' && w.reinvocationPolicy !== undefined ? { reinvocationPolicy: w.reinvocationPolicy } : {}),
      };
      // OLM sets the install namespace on these cluster-scoped objects; the apiserver drops it.
      const o: KubeObject = { apiVersion: ADMISSION_API, kind, metadata: { name, namespace: ns }, webhooks: [webhook] };
      injectCA(o, w.deploymentName ?? '');
      objects.push(o);
    }
  }

  // BundleDeploymentServiceResourceGenerator
  const portsByDeployment = new Map<string, Map<string, Obj>>();
  for (const w of webhooks) {
    const containerPort = w.containerPort && w.containerPort > 0 ? w.containerPort : 443;
    const targetPort = w.targetPort ?? containerPort;
    const port = { name: String(containerPort), port: containerPort, targetPort };
    const ports = portsByDeployment.get(w.deploymentName ?? '') ?? new Map<string, Obj>();
    ports.set(JSON.stringify(port), port);
    portsByDeployment.set(w.deploymentName ?? '', ports);
  }
  const intValue = (v: unknown) => (typeof v === 'number' ? v : /^-?\d+$/.test(String(v)) ? Number(v) : 0);
  for (const dep of deployments) {
    const ports = portsByDeployment.get(dep.name ?? '');
    if (!ports) continue;
    const sorted = [...ports.values()].sort((a, b) => (a.port as number) - (b.port as number) || intValue(a.targetPort) - intValue(b.targetPort));
    const selector = ((dep.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels) ?? undefined;
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: certProvisionerNames(dep.name ?? '').serviceName, namespace: ns },
      spec: { ports: sorted, ...(selector ? { selector: { ...selector } } : {}) },
    });
  }

  // CertProviderResourceGenerator (cert-manager): a self-signed Issuer and a Certificate per webhook Deployment.
  if (certManager) {
    for (const depName of [...webhookDeployments].sort()) {
      const { serviceName, certName, issuerName } = certProvisionerNames(depName);
      objects.push(
        { apiVersion: CERT_MANAGER_API, kind: 'Issuer', metadata: { name: issuerName, namespace: ns }, spec: { selfSigned: {} } },
        {
          apiVersion: CERT_MANAGER_API,
          kind: 'Certificate',
          metadata: { name: certName, namespace: ns },
          spec: {
            commonName: `${serviceName}.${ns}`,
            duration: '17520h0m0s',
            renewBefore: '24h0m0s',
            dnsNames: [`${serviceName}.${ns}`, `${serviceName}.${ns}.svc`, `${serviceName}.${ns}.svc.cluster.local`],
            secretName: certName,
            issuerRef: { name: issuerName },
            usages: ['server auth'],
          },
        },
      );
    }
  }
  return objects;
}

/** Mount paths OLM reserves for serving certificates, and the volumes it mounts there (generators.go certVolumeConfigs). */
const CERT_VOLUMES = [
  { name: 'webhook-cert', path: '/tmp/k8s-webhook-server/serving-certs', cert: 'tls.crt', key: 'tls.key' },
  { name: 'apiservice-cert', path: '/apiserver.local.config/certificates', cert: 'apiserver.crt', key: 'apiserver.key' },
];

/** ensureCorrectDeploymentCertVolumes: replace volumes at the reserved names and paths with the certificate Secret. */
function ensureCertVolumes(deployment: KubeObject, secretName: string): void {
  const pod = (((deployment.spec as Obj).template as Obj).spec ??= {}) as { volumes?: Obj[]; containers?: { volumeMounts?: Obj[] }[] };
  const remove = new Set(CERT_VOLUMES.map((c) => c.name));
  const paths = new Set(CERT_VOLUMES.map((c) => c.path));
  for (const c of pod.containers ?? []) for (const m of c.volumeMounts ?? []) if (paths.has(String(m.mountPath))) remove.add(String(m.name));
  const volumes = CERT_VOLUMES.map((c) => ({ name: c.name, secret: { secretName, items: [{ key: 'tls.crt', path: c.cert }, { key: 'tls.key', path: c.key }] } }));
  const mounts = CERT_VOLUMES.map((c) => ({ name: c.name, mountPath: c.path }));
  pod.volumes = [...(pod.volumes ?? []).filter((v) => !remove.has(String(v.name))), ...volumes];
  for (const c of pod.containers ?? []) c.volumeMounts = [...(c.volumeMounts ?? []).filter((m) => !remove.has(String(m.name))), ...clone(mounts)];
}

/**
 * What OLM v1's applier refuses before rendering (applier/provider.go): APIServices, webhooks without a
 * certificate provider, bundles without AllNamespaces (unless SingleOwnNamespaceInstallSupport), and none
 * of AllNamespaces/SingleNamespace/OwnNamespace.
 */
export function checkRenderable(bundle: RegistryV1Contents, options: Pick<RenderOptions, 'certProvider' | 'targetNamespaces'> = {}): OlmpubError[] {
  const spec = (bundle.csv.object.spec ?? {}) as CSVSpec;
  const at = (field: string) => `${bundle.csv.path}: ${field}`;
  const errors: OlmpubError[] = [];
  if ((spec.apiservicedefinitions?.owned ?? []).length) errors.push(validationError('render-apiservice', 'unsupported bundle: apiServiceDefintions are not supported', { place: at('spec.apiservicedefinitions.owned'), hint: 'serve the API through a CRD' }));
  if ((spec.webhookdefinitions ?? []).length && options.certProvider === 'none') {
    errors.push(validationError('render-webhooks', 'unsupported bundle: webhookDefinitions are not supported: certificate provider is nil', { place: at('spec.webhookdefinitions'), hint: 'OLM v1 needs cert-manager for webhooks' }));
  }
  const modes = supportedModes(spec);
  if (!modes.has('AllNamespaces') && !options.targetNamespaces?.length) errors.push(validationError('render-no-all-namespaces', 'unsupported bundle: bundle does not support AllNamespaces install mode', { place: at('spec.installModes') }));
  if (!['AllNamespaces', 'SingleNamespace', 'OwnNamespace'].some((m) => modes.has(m))) {
    errors.push(validationError('render-install-modes', 'unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes', { place: at('spec.installModes') }));
  }
  return errors;
}

/** Reads and renders bundle files in one step, refusing what OLM's applier refuses. */
export function renderRegistryV1Files(files: readonly BundleFileInput[], options: RenderOptions): KubeObject[] {
  const bundle = readRegistryV1(files);
  const errors = checkRenderable(bundle, options);
  if (errors.length) throw validationError('render-unsupported-bundle', `OLM v1 would not install this bundle (${errors.length} problem(s))`, { children: errors });
  return renderRegistryV1(bundle, options);
}
