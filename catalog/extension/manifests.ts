/**
 * What a platform team applies to install the operator through OLM v1: the Namespace, a ClusterCatalog
 * for our catalog image and a ClusterExtension for our package, plus, depending on the OLM version:
 * - OLM ≤ 1.10 needs `spec.serviceAccount`: we emit that ServiceAccount and the minimal installer RBAC
 *   derived from the bundle's objects (bundle/rbac);
 * - OLM ≥ 1.11 ignores it (operator-controller runs as cluster-admin): we emit ValidatingAdmissionPolicy
 *   guardrails instead, scoped to our package and catalog so they never touch other extensions.
 * A kustomization.yaml lists the files, so Argo CD or Flux can apply the folder as it is. Pure.
 */
import { usageError } from '../../lib/errors.js';
import { canonicalYAML, yamlStream } from '../../lib/canonical.js';
import { installerManifests, type KubeObject } from '../../bundle/rbac/index.js';
import { renderRegistryV1Files, type BundleFileInput } from '../../bundle/registryv1/index.js';
import { parseNormalizedNamed, isDigestReference } from '../fbc/reference.js';

export const OLM_API = 'olm.operatorframework.io/v1';
export const CATALOG_NAME_LABEL = 'olm.operatorframework.io/metadata.name';

export interface ExtensionOptions {
  /** The catalog image. By digest: pinned, never polled. By tag: polled every `pollIntervalMinutes`. */
  catalogImage: string;
  /** Package to install. Default `inference-operator`. */
  packageName?: string;
  /** ClusterCatalog name. Default `<packageName>-catalog`. */
  catalogName?: string;
  /** ClusterExtension name. Default: the package name. */
  extensionName?: string;
  /** Namespace the operator is installed into (created here). Default `<packageName>-system`. */
  namespace?: string;
  /** Channels to follow, e.g. `['stable-v1']`. Default: none (the package's default channel). */
  channels?: string[];
  /** Version range (Masterminds syntax), e.g. `>=1.0.0 <2.0.0`. Default: none (latest). */
  version?: string;
  /** `CatalogProvided` follows the catalog's upgrade edges; `SelfCertified` allows any version. Default `CatalogProvided`. */
  upgradeConstraintPolicy?: 'CatalogProvided' | 'SelfCertified';
  /** CRD upgrade safety preflight. Default `Strict`. */
  crdUpgradeSafety?: 'Strict' | 'None';
  /** Poll interval for a tag reference, in minutes. Default 10; forbidden with a digest. */
  pollIntervalMinutes?: number;
  /** ClusterCatalog priority (higher wins when several catalogs offer the package). Default 0 (omitted). */
  catalogPriority?: number;
  /** OLM v1 version on the cluster, `MAJOR.MINOR`. Default `1.11`. */
  olmVersion?: string;
  /** The objects the bundle installs; for OLM ≤ 1.10 one of these or `bundleFiles` derives the installer RBAC. */
  bundleObjects?: readonly KubeObject[];
  /**
   * The registry+v1 bundle the extension installs (`manifests/…`, `metadata/…`). For OLM ≤ 1.10 the installer
   * RBAC is derived from the objects OLM renders from it for `namespace`, with OLM's generated names. Wins over
   * `bundleObjects`.
   */
  bundleFiles?: readonly BundleFileInput[];
}

export interface ExtensionManifests {
  /** File name → objects, in the order the kustomization lists them. */
  files: { name: string; objects: KubeObject[] }[];
  /** Rendered files including kustomization.yaml, ready to write. */
  rendered: Map<string, string>;
  /** True when the installer ServiceAccount and RBAC are included (OLM ≤ 1.10). */
  serviceAccountMode: boolean;
  warnings: string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `1.10` → [1, 10]; anything else is a usage error. */
export function parseOlmVersion(value: string): [number, number] {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(value.trim());
  if (!m) throw usageError('bad-olm-version', `OLM version "${value}" is not MAJOR.MINOR`, { hint: 'use for example --olm-version 1.10 or --olm-version 1.11' });
  return [Number(m[1]), Number(m[2])];
}

/** OLM v1 up to 1.10 requires `spec.serviceAccount` and installs with it; from 1.11 it is ignored. */
export const needsServiceAccount = (olmVersion: string): boolean => {
  const [major, minor] = parseOlmVersion(olmVersion);
  return major < 1 || (major === 1 && minor <= 10);
};

export function extensionManifests(options: ExtensionOptions): ExtensionManifests {
  const packageName = options.packageName ?? 'inference-operator';
  const catalogName = options.catalogName ?? `${packageName}-catalog`;
  const extensionName = options.extensionName ?? packageName;
  const namespace = options.namespace ?? `${packageName}-system`;
  const olmVersion = options.olmVersion ?? '1.11';
  const serviceAccountMode = needsServiceAccount(olmVersion);
  const warnings: string[] = [];

  for (const [what, value] of [['namespace', namespace], ['extension name', extensionName], ['catalog name', catalogName]] as const) {
    if (!DNS_LABEL.test(value) || value.length > 63) {
      throw usageError('bad-name', `${what} "${value}" is not a DNS-1123 label`, { hint: 'use lowercase letters, digits and "-", at most 63 characters' });
    }
  }
  const ref = parseImage(options.catalogImage);
  const pinned = isDigestReference(options.catalogImage);
  if (pinned && options.pollIntervalMinutes !== undefined) {
    throw usageError('poll-with-digest', 'a catalog image pinned by digest is never polled, so --poll-interval does not apply', {
      place: options.catalogImage,
      hint: 'drop --poll-interval, or reference the catalog by tag to follow new releases',
    });
  }
  const poll = pinned ? undefined : (options.pollIntervalMinutes ?? 10);
  if (poll !== undefined && (!Number.isInteger(poll) || poll < 1)) {
    throw usageError('bad-poll-interval', `poll interval ${poll} must be a whole number of minutes, at least 1`);
  }
  if (!pinned) warnings.push(`the catalog is referenced by tag and polled every ${poll} min; pin it by digest for reproducible installs`);
  if (options.upgradeConstraintPolicy === 'SelfCertified') warnings.push('SelfCertified lets the extension move to any version in range, including downgrades');
  if (options.crdUpgradeSafety === 'None') warnings.push('CRD upgrade safety is off: an unsafe CRD change can lose stored data');

  const namespaceObject: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } };
  const clusterCatalog: KubeObject = {
    apiVersion: OLM_API,
    kind: 'ClusterCatalog',
    // catalogd's mutating webhook sets this label too; setting it here keeps GitOps diffs quiet.
    metadata: { name: catalogName, labels: { [CATALOG_NAME_LABEL]: catalogName } },
    spec: {
      source: { type: 'Image', image: { ref: options.catalogImage, ...(poll !== undefined ? { pollIntervalMinutes: poll } : {}) } },
      ...(options.catalogPriority ? { priority: options.catalogPriority } : {}),
    },
  };

  const files: { name: string; objects: KubeObject[] }[] = [
    { name: 'namespace.yaml', objects: [namespaceObject] },
    { name: 'clustercatalog.yaml', objects: [clusterCatalog] },
  ];

  let serviceAccountName: string | undefined;
  if (serviceAccountMode) {
    const bundleObjects = options.bundleFiles?.length ? renderRegistryV1Files(options.bundleFiles, { installNamespace: namespace, olmVersion }) : options.bundleObjects;
    if (!bundleObjects?.length) {
      throw usageError('missing-bundle-objects', `OLM ${olmVersion} installs with a ServiceAccount whose RBAC is derived from the bundle, but no bundle objects were given`, {
        hint: 'pass the bundle (olmpub extension manifests --bundle DIR) or target OLM 1.11 or newer',
      });
    }
    serviceAccountName = `${extensionName}-installer`;
    const { objects, role } = installerManifests(
      { objects: bundleObjects, extensionName, installNamespace: namespace },
      { serviceAccountName },
    );
    warnings.push(...role.warnings);
    files.push({ name: 'installer-rbac.yaml', objects });
  } else {
    files.push({ name: 'guardrails.yaml', objects: guardrails({ packageName, catalogName, namespace, repository: ref.repository }) });
  }

  const clusterExtension: KubeObject = {
    apiVersion: OLM_API,
    kind: 'ClusterExtension',
    metadata: { name: extensionName },
    spec: {
      namespace,
      ...(serviceAccountName ? { serviceAccount: { name: serviceAccountName } } : {}),
      source: {
        sourceType: 'Catalog',
        catalog: {
          packageName,
          ...(options.channels?.length ? { channels: [...options.channels] } : {}),
          ...(options.version ? { version: options.version } : {}),
          selector: { matchLabels: { [CATALOG_NAME_LABEL]: catalogName } },
          upgradeConstraintPolicy: options.upgradeConstraintPolicy ?? 'CatalogProvided',
        },
      },
      install: { preflight: { crdUpgradeSafety: { enforcement: options.crdUpgradeSafety ?? 'Strict' } } },
    },
  };
  files.push({ name: 'clusterextension.yaml', objects: [clusterExtension] });

  const rendered = new Map<string, string>();
  for (const f of files) rendered.set(f.name, yamlStream(f.objects));
  rendered.set(
    'kustomization.yaml',
    canonicalYAML({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: files.map((f) => f.name) }),
  );
  return { files, rendered, serviceAccountMode, warnings };
}

/** Validates the reference and returns its repository as written (the guardrail compares the literal ref). */
function parseImage(image: string): { repository: string } {
  try {
    parseNormalizedNamed(image);
    const withoutDigest = image.split('@')[0]!;
    const lastSlash = withoutDigest.lastIndexOf('/');
    const tagAt = withoutDigest.indexOf(':', lastSlash + 1);
    return { repository: tagAt === -1 ? withoutDigest : withoutDigest.slice(0, tagAt) };
  } catch (err) {
    throw usageError('bad-catalog-image', `catalog image "${image}" is not a valid image reference: ${(err as Error).message}`, {
      hint: 'use HOST/REPOSITORY:TAG or HOST/REPOSITORY@sha256:DIGEST',
    });
  }
}

/**
 * ValidatingAdmissionPolicies for OLM ≥ 1.11 (after operator-controller's how-to-protect-olmv1-api-access):
 * a ClusterExtension of our package must install into our namespace from our catalog, may not opt out
 * of the catalog's upgrade edges or of CRD upgrade safety; our ClusterCatalog may only point at our
 * repository. Scoped by matchConditions so other packages and catalogs are untouched.
 */
function guardrails(p: { packageName: string; catalogName: string; namespace: string; repository: string }): KubeObject[] {
  const admission = 'admissionregistration.k8s.io/v1';
  const cel = (s: string) => JSON.stringify(s);
  const extensionPolicy = `${p.packageName}-extension-guardrails`;
  const catalogPolicy = `${p.catalogName}-guardrails`;
  const binding = (policy: string): KubeObject => ({
    apiVersion: admission,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy },
    spec: { policyName: policy, validationActions: ['Deny'] },
  });
  return [
    {
      apiVersion: admission,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: extensionPolicy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['olm.operatorframework.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['clusterextensions'] }] },
        matchConditions: [{ name: 'our-package', expression: `object.spec.source.catalog.packageName == ${cel(p.packageName)}` }],
        validations: [
          {
            expression: `object.spec.namespace == ${cel(p.namespace)}`,
            message: `${p.packageName} must be installed into namespace ${p.namespace}`,
          },
          {
            expression: `has(object.spec.source.catalog.selector) && has(object.spec.source.catalog.selector.matchLabels) && object.spec.source.catalog.selector.matchLabels[${cel(CATALOG_NAME_LABEL)}] == ${cel(p.catalogName)}`,
            message: `${p.packageName} must come from the ClusterCatalog ${p.catalogName} (selector matchLabels ${CATALOG_NAME_LABEL}: ${p.catalogName})`,
          },
          {
            expression: `!has(object.spec.source.catalog.upgradeConstraintPolicy) || object.spec.source.catalog.upgradeConstraintPolicy != 'SelfCertified'`,
            message: `SelfCertified upgrades (which allow downgrades and skipping the catalog's upgrade edges) are not allowed for ${p.packageName}`,
          },
          {
            expression: `!has(object.spec.install) || !has(object.spec.install.preflight) || !has(object.spec.install.preflight.crdUpgradeSafety) || object.spec.install.preflight.crdUpgradeSafety.enforcement != 'None'`,
            message: `CRD upgrade safety may not be turned off for ${p.packageName}`,
          },
        ],
      },
    },
    binding(extensionPolicy),
    {
      apiVersion: admission,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: catalogPolicy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['olm.operatorframework.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['clustercatalogs'] }] },
        matchConditions: [{ name: 'our-catalog', expression: `object.metadata.name == ${cel(p.catalogName)}` }],
        validations: [
          {
            expression: `object.spec.source.image.ref.startsWith(${cel(p.repository + ':')}) || object.spec.source.image.ref.startsWith(${cel(p.repository + '@')})`,
            message: `ClusterCatalog ${p.catalogName} may only serve images from ${p.repository}`,
          },
        ],
      },
    },
    binding(catalogPolicy),
  ];
}
