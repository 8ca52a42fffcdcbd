/**
 * Kind → resource mapping (the REST mapper). A small built-in table covers the kinds the runtime and
 * the reconciler use; anything else is resolved through discovery (`/api/v1`, `/apis/<group>/<version>`),
 * cached per group-version and refreshed once when a kind is missing (a CRD installed later).
 */
import { parseApiVersion, type TypeRef } from './types.js';

export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

const BUILTIN: [string, string, string, boolean][] = [
  // apiVersion, kind, resource, namespaced
  ['v1', 'ConfigMap', 'configmaps', true],
  ['v1', 'Secret', 'secrets', true],
  ['v1', 'Service', 'services', true],
  ['v1', 'ServiceAccount', 'serviceaccounts', true],
  ['v1', 'Pod', 'pods', true],
  ['v1', 'Event', 'events', true],
  ['v1', 'Endpoints', 'endpoints', true],
  ['v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true],
  ['v1', 'Namespace', 'namespaces', false],
  ['v1', 'Node', 'nodes', false],
  ['v1', 'ResourceQuota', 'resourcequotas', true],
  ['apps/v1', 'Deployment', 'deployments', true],
  ['apps/v1', 'StatefulSet', 'statefulsets', true],
  ['apps/v1', 'ReplicaSet', 'replicasets', true],
  ['coordination.k8s.io/v1', 'Lease', 'leases', true],
  ['events.k8s.io/v1', 'Event', 'events', true],
  ['authentication.k8s.io/v1', 'TokenReview', 'tokenreviews', false],
  ['authorization.k8s.io/v1', 'SubjectAccessReview', 'subjectaccessreviews', false],
  ['rbac.authorization.k8s.io/v1', 'Role', 'roles', true],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false],
  ['policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
  ['autoscaling/v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true],
];

export function builtinResource(ref: TypeRef): ResourceInfo | undefined {
  const row = BUILTIN.find(([av, kind]) => av === ref.apiVersion && kind === ref.kind);
  if (!row) return undefined;
  const { group, version } = parseApiVersion(row[0]);
  return { group, version, kind: row[1], resource: row[2], namespaced: row[3] };
}

/** The path prefix of a group-version: `/api/v1` or `/apis/apps/v1`. */
export function groupVersionPath(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** The path of a collection or an object, with an optional subresource. */
export function resourcePath(info: ResourceInfo, namespace?: string, name?: string, subresource?: string): string {
  let path = groupVersionPath(info.group, info.version);
  if (info.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${info.resource}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

/**
 * The resource a request path addresses, for counting writes: `leases.coordination.k8s.io`,
 * `configmaps`, `inferenceservices.inference.olmpub.dev/status`. Undefined for non-resource paths.
 */
export function resourceOfPath(path: string): string | undefined {
  const p = path.split('?')[0]!.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (p[0] === 'api' && p.length >= 3) {
    group = '';
    rest = p.slice(2);
  } else if (p[0] === 'apis' && p.length >= 4) {
    group = p[1]!;
    rest = p.slice(3);
  } else {
    return undefined;
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const resource = rest[0];
  if (!resource) return undefined;
  const sub = rest.length >= 3 ? `/${rest[2]}` : '';
  return `${resource}${group ? `.${group}` : ''}${sub}`;
}

interface DiscoveryList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

/** Resolves kinds to resources, using the built-in table first and discovery otherwise. */
export class RestMapper {
  private readonly cache = new Map<string, Promise<ResourceInfo[]>>();

  constructor(private readonly discover: (groupVersionPath: string) => Promise<DiscoveryList>) {}

  async resolve(ref: TypeRef): Promise<ResourceInfo> {
    const builtin = builtinResource(ref);
    if (builtin) return builtin;
    const found = (await this.groupVersion(ref.apiVersion, false)).find((r) => r.kind === ref.kind);
    if (found) return found;
    const refreshed = (await this.groupVersion(ref.apiVersion, true)).find((r) => r.kind === ref.kind);
    if (refreshed) return refreshed;
    throw new Error(`no resource for kind ${ref.kind} in ${ref.apiVersion} (is its CRD installed?)`);
  }

  /** Forgets discovery results (all, or one apiVersion). */
  invalidate(apiVersion?: string): void {
    if (apiVersion) this.cache.delete(apiVersion);
    else this.cache.clear();
  }

  private groupVersion(apiVersion: string, refresh: boolean): Promise<ResourceInfo[]> {
    let entry = refresh ? undefined : this.cache.get(apiVersion);
    if (!entry) {
      const { group, version } = parseApiVersion(apiVersion);
      entry = this.discover(groupVersionPath(group, version)).then(
        (list) =>
          (list.resources ?? [])
            .filter((r) => !r.name.includes('/'))
            .map((r) => ({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced })),
        (err) => {
          this.cache.delete(apiVersion);
          throw err;
        },
      );
      this.cache.set(apiVersion, entry);
    }
    return entry;
  }
}
