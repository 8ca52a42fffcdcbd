/**
 * The single typed model of the operator's install manifests. `installManifests(options)` is pure: the
 * same options give the same objects in the same order (INSTALL_ORDER). The Helm chart (bundle/chart),
 * the registry+v1 bundle (bundle/registryv1) and the installer RBAC (bundle/rbac) are views of it.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type { CustomResourceDefinition } from '../../operator/api/crd.js';
import { validationError } from '../../lib/errors.js';
import { hasKnobs, ValueCondition } from './knobs.js';
import { manifestEntries, type ManifestEntry, type ManifestObject, type ManifestRole } from './objects.js';
import { OPERATOR_NAME, resolveInstallOptions, type InstallOptions, type ResolvedInstallOptions } from './options.js';

export * from './options.js';
export { INSTALL_ORDER, METRICS_AUTH_RULES, METRICS_READER_RULES, leaderElectionRules, managerRules, manifestEntries, objectNames } from './objects.js';
export type { ManifestEntry, ManifestObject, ManifestRole } from './objects.js';

export interface InstallManifests {
  options: ResolvedInstallOptions;
  /** Every object, in INSTALL_ORDER. */
  objects: ManifestObject[];
  /** The objects with their roles, in the same order. */
  entries: { role: ManifestRole; object: ManifestObject }[];
  crds: CustomResourceDefinition[];
  deployment: ManifestObject & V1Deployment;
  /** Objects of one role (empty when the options leave the role out). */
  byRole(role: ManifestRole): ManifestObject[];
  /** The one object of a role, or undefined. */
  one(role: ManifestRole): ManifestObject | undefined;
}

/** Drops undefined values the way JSON would, keeping key order. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Concrete entries: conditions evaluated, undefined fields gone. */
export function concreteEntries(options: ResolvedInstallOptions): { role: ManifestRole; object: ManifestObject }[] {
  const out: { role: ManifestRole; object: ManifestObject }[] = [];
  for (const e of manifestEntries(options) as ManifestEntry[]) {
    if (e.when instanceof ValueCondition) throw new Error(`internal: ${e.role} has a chart condition in a concrete rendering`);
    if (e.when === false) continue;
    if (hasKnobs(e.object)) throw new Error(`internal: ${e.object.kind}/${e.object.metadata.name} holds chart references in a concrete rendering`);
    out.push({ role: e.role, object: plain(e.object) });
  }
  return out;
}

/** The operator's install manifests for these options. Throws an OlmpubError for invalid options. */
export function installManifests(options: InstallOptions): InstallManifests {
  const resolved = resolveInstallOptions(options);
  const entries = concreteEntries(resolved);
  const byRole = (role: ManifestRole) => entries.filter((e) => e.role === role).map((e) => e.object);
  const deployment = byRole('deployment')[0] as (ManifestObject & V1Deployment) | undefined;
  if (!deployment) throw validationError('manifests-no-deployment', 'the model produced no Deployment');
  return {
    options: resolved,
    objects: entries.map((e) => e.object),
    entries,
    crds: byRole('crd') as unknown as CustomResourceDefinition[],
    deployment,
    byRole,
    one: (role) => byRole(role)[0],
  };
}

/** The operator's own RBAC: the model's Roles, ClusterRoles and bindings (the image plays no part: a stand-in digest). */
export function operatorRbacObjects(): ManifestObject[] {
  const model = installManifests({ image: `${OPERATOR_NAME}@sha256:${'0'.repeat(64)}` });
  return model.objects.filter((o) => /^(Cluster)?Role(Binding)?$/.test(o.kind));
}
