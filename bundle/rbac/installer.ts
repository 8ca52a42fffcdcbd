/**
 * The ServiceAccount an OLM ≤ 1.10 ClusterExtension installs with (`spec.serviceAccount`): the minimal
 * ClusterRole it needs for a given set of bundle objects, and OLM 1.10's pre-authorization check (the
 * `PreflightPermissions` gate, internal/operator-controller/authorization/rbac.go) with its report format.
 * Pure: the input is a list of Kubernetes objects, the ClusterExtension name and the install namespace.
 */
import { OlmpubError, validationError } from '../../lib/errors.js';
import {
  type KubeObject,
  type RbacAuthorizer,
  type UserInfo,
  FULL_AUTHORITY,
  RBAC_GROUP,
  serviceAccountUser,
  toBinding,
  toRole,
} from './authorizer.js';
import {
  type PolicyRule,
  type ResourceAttributes,
  breakdownRule,
  compactRules,
  compareRules,
  normalizeRule,
  ruleCovers,
  ruleToObject,
} from './rules.js';

export const OLM_GROUP = 'olm.operatorframework.io';

/** How a kind maps to its REST resource. */
export interface ResourceInfo {
  group: string;
  resource: string;
  namespaced: boolean;
}

/** Built-in kinds a bundle may carry, keyed by `group/Kind` (`/Kind` for the core group). */
export const KNOWN_RESOURCES: Readonly<Record<string, ResourceInfo>> = Object.freeze(
  Object.fromEntries(
    (
      [
        ['', 'Namespace', 'namespaces', false],
        ['', 'ServiceAccount', 'serviceaccounts', true],
        ['', 'Service', 'services', true],
        ['', 'ConfigMap', 'configmaps', true],
        ['', 'Secret', 'secrets', true],
        ['', 'Pod', 'pods', true],
        ['', 'PersistentVolumeClaim', 'persistentvolumeclaims', true],
        ['', 'PersistentVolume', 'persistentvolumes', false],
        ['', 'Endpoints', 'endpoints', true],
        ['', 'LimitRange', 'limitranges', true],
        ['', 'ResourceQuota', 'resourcequotas', true],
        ['apps', 'Deployment', 'deployments', true],
        ['apps', 'StatefulSet', 'statefulsets', true],
        ['apps', 'DaemonSet', 'daemonsets', true],
        ['apps', 'ReplicaSet', 'replicasets', true],
        ['batch', 'Job', 'jobs', true],
        ['batch', 'CronJob', 'cronjobs', true],
        [RBAC_GROUP, 'Role', 'roles', true],
        [RBAC_GROUP, 'RoleBinding', 'rolebindings', true],
        [RBAC_GROUP, 'ClusterRole', 'clusterroles', false],
        [RBAC_GROUP, 'ClusterRoleBinding', 'clusterrolebindings', false],
        ['apiextensions.k8s.io', 'CustomResourceDefinition', 'customresourcedefinitions', false],
        ['admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false],
        ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false],
        ['admissionregistration.k8s.io', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false],
        ['admissionregistration.k8s.io', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false],
        ['policy', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
        ['networking.k8s.io', 'NetworkPolicy', 'networkpolicies', true],
        ['networking.k8s.io', 'Ingress', 'ingresses', true],
        ['networking.k8s.io', 'IngressClass', 'ingressclasses', false],
        ['scheduling.k8s.io', 'PriorityClass', 'priorityclasses', false],
        ['storage.k8s.io', 'StorageClass', 'storageclasses', false],
        ['coordination.k8s.io', 'Lease', 'leases', true],
        ['autoscaling', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true],
        ['apiregistration.k8s.io', 'APIService', 'apiservices', false],
        ['cert-manager.io', 'Issuer', 'issuers', true],
        ['cert-manager.io', 'ClusterIssuer', 'clusterissuers', false],
        ['cert-manager.io', 'Certificate', 'certificates', true],
        ['monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors', true],
        ['monitoring.coreos.com', 'PodMonitor', 'podmonitors', true],
        ['monitoring.coreos.com', 'PrometheusRule', 'prometheusrules', true],
        [OLM_GROUP, 'ClusterExtension', 'clusterextensions', false],
        [OLM_GROUP, 'ClusterCatalog', 'clustercatalogs', false],
      ] as const
    ).map(([group, kind, resource, namespaced]) => [`${group}/${kind}`, { group, resource, namespaced }]),
  ),
);

export const groupOf = (apiVersion: string | undefined): string => {
  const v = apiVersion ?? '';
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
};

/** An object of the input placed in the cluster: its resource, namespace and name. */
export interface PlacedObject {
  object: KubeObject;
  kind: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

export interface InstallerInput {
  /** The objects the ClusterExtension installs (rendered bundle manifests). */
  objects: readonly KubeObject[];
  /** `metadata.name` of the ClusterExtension. */
  extensionName: string;
  /** `spec.namespace` of the ClusterExtension; namespaced objects without a namespace land here. */
  installNamespace: string;
  /** Extra or overriding kind mappings, keyed `group/Kind` (core group: `/Kind`). */
  resources?: Record<string, ResourceInfo>;
}

/**
 * Maps every object to its resource and namespace: the built-in table, the CRDs among the objects, then
 * `input.resources`. An unknown kind is an error, because guessing a plural would derive a wrong role.
 */
export function placeObjects(input: InstallerInput): PlacedObject[] {
  const table: Record<string, ResourceInfo> = { ...KNOWN_RESOURCES };
  for (const o of input.objects) {
    if (o.kind !== 'CustomResourceDefinition') continue;
    const spec = (o.spec ?? {}) as { group?: string; scope?: string; names?: { kind?: string; plural?: string } };
    if (spec.group && spec.names?.kind && spec.names.plural) {
      table[`${spec.group}/${spec.names.kind}`] = { group: spec.group, resource: spec.names.plural, namespaced: spec.scope !== 'Cluster' };
    }
  }
  Object.assign(table, input.resources ?? {});
  const unknown: OlmpubError[] = [];
  const placed: PlacedObject[] = [];
  input.objects.forEach((o, i) => {
    const group = groupOf(o.apiVersion);
    const kind = o.kind ?? '';
    const name = o.metadata?.name ?? '';
    const info = table[`${group}/${kind}`];
    if (!info || !name) {
      unknown.push(
        validationError(!name ? 'object-without-name' : 'unknown-kind', !name ? `object ${i} (${kind}) has no metadata.name` : `unknown kind ${group ? `${group}/` : ''}${kind}`, {
          place: `objects[${i}] ${kind}/${name}`,
          hint: !name ? 'every bundle object needs a name' : 'pass its resource mapping (group/Kind → plural, namespaced) in resources',
        }),
      );
      return;
    }
    const namespace = info.namespaced ? (o.metadata?.namespace || input.installNamespace) : '';
    placed.push({ object: o, kind, group: info.group, resource: info.resource, namespace, name });
  });
  if (unknown.length) {
    throw validationError('installer-input', `cannot map ${unknown.length} object(s) to API resources`, { children: unknown });
  }
  return placed;
}

/** A permission check OLM's pre-authorizer performs, with the rule it reports when the check fails. */
export interface RequiredAction {
  attributes: ResourceAttributes;
  why: string;
}

/** An RBAC object of the bundle and the rules its creation grants (checked by the escalation check). */
export interface RequiredGrant {
  object: KubeObject;
  /** The namespace whose rules must cover the grant (empty: cluster-wide). */
  namespace: string;
  rules: PolicyRule[];
  /** A binding of a role that is not part of the bundle: the grant is unknown here, `bind` is derived instead. */
  externalRoleRef?: { kind: string; name: string };
  why: string;
}

export interface InstallerRequirements {
  actions: RequiredAction[];
  grants: RequiredGrant[];
  warnings: string[];
}

/**
 * What OLM 1.10's pre-authorizer checks for these objects:
 * - per object: get, patch, update, delete on its name in its namespace;
 * - per resource and namespace: create;
 * - per resource: list and watch at cluster scope (the content manager's informers);
 * - update on clusterextensions/finalizers named after the ClusterExtension
 *   (OwnerReferencesPermissionEnforcement: OLM sets blockOwnerDeletion owner references);
 * - per Role/ClusterRole/binding: the escalation check (hold every granted rule, or escalate/bind).
 */
export function installerRequirements(input: InstallerInput): InstallerRequirements {
  const placed = placeObjects(input);
  const actions: RequiredAction[] = [];
  const seen = new Set<string>();
  const push = (a: ResourceAttributes, why: string) => {
    const key = JSON.stringify([a.verb, a.group, a.resource, a.subresource ?? '', a.name ?? '', a.namespace ?? '']);
    if (seen.has(key)) return;
    seen.add(key);
    actions.push({ attributes: a, why });
  };
  const byResource = new Map<string, PlacedObject[]>();
  for (const p of placed) {
    const key = `${p.group}/${p.resource}`;
    byResource.set(key, [...(byResource.get(key) ?? []), p]);
  }
  for (const [, objs] of [...byResource].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const { group, resource } = objs[0]!;
    for (const o of objs) {
      for (const verb of ['get', 'patch', 'update', 'delete']) {
        push({ verb, group, resource, name: o.name, namespace: o.namespace }, `manage ${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`);
      }
    }
    for (const ns of [...new Set(objs.map((o) => o.namespace))].sort()) {
      push({ verb: 'create', group, resource, namespace: ns }, `create ${resource}${ns ? ` in ${ns}` : ''}`);
    }
    for (const verb of ['list', 'watch']) push({ verb, group, resource, namespace: '' }, `watch ${resource} cluster-wide (OLM content manager)`);
  }
  if (placed.length) {
    push(
      { verb: 'update', group: OLM_GROUP, resource: 'clusterextensions', subresource: 'finalizers', name: input.extensionName, namespace: '' },
      'set blockOwnerDeletion owner references to the ClusterExtension',
    );
  }

  const grants: RequiredGrant[] = [];
  const warnings: string[] = [];
  const roles = placed.map((p) => ({ p, role: toRole({ ...p.object, metadata: { ...p.object.metadata, namespace: p.namespace } }) })).filter((x) => x.role);
  for (const p of placed) {
    const obj = { ...p.object, metadata: { ...p.object.metadata, namespace: p.namespace } };
    const role = toRole(obj);
    if (role) {
      const rules = role.rules.map(normalizeRule);
      if (role.aggregated) {
        warnings.push(`ClusterRole ${role.name} has an aggregationRule: creating it needs every permission (cluster-admin) unless the installer may escalate`);
        rules.unshift(...FULL_AUTHORITY);
      }
      grants.push({ object: obj, namespace: role.namespace, rules, why: `grant the rules of ${role.kind} ${role.namespace ? `${role.namespace}/` : ''}${role.name}` });
      continue;
    }
    const binding = toBinding(obj);
    if (binding) {
      const ref = binding.roleRef;
      const target = roles.find(
        ({ role: r }) => r!.kind === ref.kind && r!.name === ref.name && (r!.kind === 'ClusterRole' || r!.namespace === binding.namespace),
      );
      const why = `bind ${ref.kind} ${ref.name} in ${binding.kind} ${binding.namespace ? `${binding.namespace}/` : ''}${binding.name}`;
      if (target) grants.push({ object: obj, namespace: binding.namespace, rules: target.role!.rules.map(normalizeRule), why });
      else grants.push({ object: obj, namespace: binding.namespace, rules: [], externalRoleRef: { kind: ref.kind, name: ref.name }, why });
    }
  }
  return { actions, grants, warnings };
}

/** A requirement as a rule the installer's ClusterRole must cover. */
function actionRule(a: ResourceAttributes): PolicyRule {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return { apiGroups: [a.group], resources: [resource], verbs: [a.verb], ...(a.name ? { resourceNames: [a.name] } : {}) };
}

function bindRule(grant: RequiredGrant): PolicyRule {
  const ref = grant.externalRoleRef!;
  return { apiGroups: [RBAC_GROUP], resources: [ref.kind === 'Role' ? 'roles' : 'clusterroles'], verbs: ['bind'], resourceNames: [ref.name] };
}

export interface InstallerRole {
  /** The ClusterRole object to bind to the ClusterExtension's ServiceAccount with a ClusterRoleBinding. */
  clusterRole: KubeObject;
  rules: PolicyRule[];
  requirements: InstallerRequirements;
  warnings: string[];
}

/**
 * The minimal ClusterRole for the installer ServiceAccount, bound with a ClusterRoleBinding:
 * per resource `create, list, watch`; per resource `get, update, patch, delete` on the object names;
 * `update` on `clusterextensions/finalizers` for the ClusterExtension; `bind` on roles the bundle binds but
 * does not ship; and every rule the bundle grants, so the escalation check passes. Rules that other rules
 * already cover are dropped, so removing any one rule loses a permission the installation needs.
 */
export function deriveInstallerRole(input: InstallerInput, options: { name?: string } = {}): InstallerRole {
  const requirements = installerRequirements(input);
  const { actions, grants } = requirements;

  // Candidate rules, most specific first so that broader granted rules can absorb them.
  const perResource = new Map<string, { group: string; resource: string; names: Set<string> }>();
  for (const { attributes: a } of actions) {
    if (a.subresource) continue;
    const key = `${a.group}/${a.resource}`;
    const entry = perResource.get(key) ?? { group: a.group, resource: a.resource, names: new Set<string>() };
    if (a.name) entry.names.add(a.name);
    perResource.set(key, entry);
  }
  const candidates: PolicyRule[] = [];
  for (const [, { group, resource, names }] of [...perResource].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    candidates.push({ apiGroups: [group], resources: [resource], verbs: ['create', 'list', 'watch'] });
    if (names.size) candidates.push({ apiGroups: [group], resources: [resource], resourceNames: [...names].sort(), verbs: ['delete', 'get', 'patch', 'update'] });
  }
  for (const { attributes: a } of actions) if (a.subresource) candidates.push(actionRule(a));
  for (const g of grants) if (g.externalRoleRef) candidates.push(bindRule(g));
  const granted = dedupe(grants.flatMap((g) => g.rules).map(normalizeRule));
  candidates.push(...granted);

  // Everything that must stay covered.
  const needed: PolicyRule[] = [
    ...actions.map((a) => actionRule(a.attributes)),
    ...grants.flatMap((g) => (g.externalRoleRef ? [bindRule(g)] : g.rules)).flatMap(breakdownRule),
  ];
  const rules = minimize(dedupe(candidates.map(normalizeRule)), needed);

  const name = options.name ?? `${input.extensionName}-installer`;
  const clusterRole: KubeObject = {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name },
    rules: rules.map(ruleToObject),
  };
  return { clusterRole, rules, requirements, warnings: requirements.warnings };
}

/** The ServiceAccount, ClusterRole and ClusterRoleBinding to create before the ClusterExtension. */
export function installerManifests(
  input: InstallerInput,
  options: { serviceAccountName?: string; roleName?: string } = {},
): { objects: KubeObject[]; role: InstallerRole } {
  const sa = options.serviceAccountName ?? `${input.extensionName}-installer`;
  const role = deriveInstallerRole(input, { name: options.roleName ?? sa });
  const roleName = role.clusterRole.metadata!.name!;
  return {
    role,
    objects: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: input.installNamespace } },
      role.clusterRole,
      {
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: roleName },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: sa, namespace: input.installNamespace }],
      },
    ],
  };
}

function dedupe(rules: PolicyRule[]): PolicyRule[] {
  const seen = new Set<string>();
  return rules.filter((r) => {
    const k = JSON.stringify(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Drops, in order, every rule without which `needed` stays covered. */
function minimize(rules: PolicyRule[], needed: PolicyRule[]): PolicyRule[] {
  const kept = [...rules];
  for (let i = 0; i < kept.length; ) {
    const others = kept.filter((_, j) => j !== i);
    if (needed.every((n) => others.some((o) => ruleCovers(o, n)))) kept.splice(i, 1);
    else i++;
  }
  return kept;
}

// ---------------------------------------------------------------------------------------------
// OLM 1.10's pre-authorization check and its report

export interface ScopedPolicyRules {
  /** Empty: cluster scope. */
  namespace: string;
  missingRules: PolicyRule[];
}

export interface PreflightResult {
  missing: ScopedPolicyRules[];
  /** Bindings whose role neither exists nor ships with the bundle (OLM: "authorization evaluation error"). */
  errors: string[];
}

/** Roles and ClusterRoles that no binding among `objects` references are bound to the ServiceAccount. */
export function bindUnboundRoles(objects: KubeObject[], namespace: string, serviceAccount: string): KubeObject[] {
  const bindings = objects.map(toBinding).filter((b) => b !== undefined);
  const extra: KubeObject[] = [];
  for (const o of objects) {
    const role = toRole(o);
    if (!role || bindings.some((b) => b.roleRef.kind === role.kind && b.roleRef.name === role.name)) continue;
    const subjects = [{ kind: 'ServiceAccount', name: serviceAccount, namespace }];
    const roleRef = { apiGroup: RBAC_GROUP, kind: role.kind, name: role.name };
    extra.push(
      role.kind === 'ClusterRole'
        ? { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRoleBinding', metadata: { name: `olmpub-implied-${role.name}` }, roleRef, subjects }
        : { apiVersion: `${RBAC_GROUP}/v1`, kind: 'RoleBinding', metadata: { name: `olmpub-implied-${role.name}`, namespace: role.namespace || namespace }, roleRef, subjects },
    );
  }
  return [...objects, ...extra];
}

/**
 * Evaluates OLM's pre-authorization for the installer ServiceAccount against `authorizer` (the RBAC state
 * of the cluster): each required action through the RBAC authorizer, each bundled RBAC object through the
 * escalation check, with the bundle's own roles available to its bindings as OLM does.
 */
export function preflight(input: InstallerInput, authorizer: RbacAuthorizer, serviceAccountName: string, user?: UserInfo): PreflightResult {
  const who = user ?? serviceAccountUser(input.installNamespace, serviceAccountName);
  const { actions, grants } = installerRequirements(input);
  const missing = new Map<string, PolicyRule[]>();
  const add = (ns: string, rules: PolicyRule[]) => missing.set(ns, [...(missing.get(ns) ?? []), ...rules]);
  for (const { attributes } of actions) {
    if (!authorizer.authorize(who, attributes)) add(attributes.namespace ?? '', [actionRule(attributes)]);
  }
  const errors: string[] = [];
  const pending = grants.map((g) => g.object);
  for (const g of grants) {
    const result = authorizer.checkEscalation(who, g.object, pending);
    if (result.allowed) continue;
    if (result.error) errors.push(result.error);
    add(g.namespace, result.missing);
  }
  const scoped: ScopedPolicyRules[] = [...missing]
    .map(([namespace, rules]) => ({ namespace, missingRules: compactRules(rules).sort(compareRules) }))
    .filter((s) => s.missingRules.length)
    .sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
  return { missing: scoped, errors };
}

export const PREFLIGHT_HEADER = 'pre-authorization failed: service account requires the following permissions to manage cluster extension:';

/** One line of OLM's report: `Namespace:"ns" APIGroups:[apps] Resources:[deployments] Verbs:[create]`. */
export function preflightRuleLine(namespace: string, rule: PolicyRule): string {
  const part = (label: string, v: string[] | undefined) => (v?.length ? ` ${label}:[${[...v].sort().join(',')}]` : '');
  return (
    `Namespace:${JSON.stringify(namespace)}` +
    part('APIGroups', rule.apiGroups) +
    part('Resources', rule.resources) +
    part('ResourceNames', rule.resourceNames) +
    part('Verbs', rule.verbs) +
    part('NonResourceURLs', rule.nonResourceURLs)
  );
}

/**
 * The condition message OLM 1.10 sets (Progressing=True, Retrying) when the pre-authorization fails; empty
 * when nothing is missing. Lines are sorted and indented by two spaces as in OLM.
 */
export function formatPreflight(result: PreflightResult | ScopedPolicyRules[]): string {
  const { missing, errors } = Array.isArray(result) ? { missing: result, errors: [] as string[] } : result;
  const lines = [...new Set(missing.flatMap((s) => s.missingRules.map((r) => preflightRuleLine(s.namespace, r))))].sort();
  const parts: string[] = [];
  if (lines.length) parts.push(`service account requires the following permissions to manage cluster extension:\n  ${lines.join('\n  ')}`);
  if (errors.length) parts.push(`authorization evaluation error: ${errors.join('\n')}`);
  return parts.length ? `pre-authorization failed: ${parts.join('\n')}` : '';
}
