/**
 * A pure model of the Kubernetes RBAC authorizer and of the apiserver's RBAC escalation checks, built from
 * a set of Role, ClusterRole, RoleBinding and ClusterRoleBinding objects. It answers what the real
 * apiserver answers for the same objects (proved against a real kube-apiserver in
 * test/integration/rbac), without talking to one.
 */
import {
  type PolicyRule,
  type RequestAttributes,
  type ResourceAttributes,
  isNonResource,
  ruleAllows,
  ruleFromObject,
  uncoveredRules,
} from './rules.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** The least a Kubernetes object needs for this module. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface UserInfo {
  name: string;
  groups: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface RoleObject {
  kind: 'Role' | 'ClusterRole';
  name: string;
  /** Empty for a ClusterRole. */
  namespace: string;
  rules: PolicyRule[];
  /** ClusterRoles with an aggregationRule that has at least one selector. */
  aggregated: boolean;
}

export interface BindingObject {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  /** Empty for a ClusterRoleBinding. */
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
}

/** The user a ServiceAccount authenticates as, with the groups the apiserver adds. */
export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function toRole(obj: KubeObject): RoleObject | undefined {
  if (obj.kind !== 'Role' && obj.kind !== 'ClusterRole') return undefined;
  const rules = Array.isArray(obj.rules) ? obj.rules.map(ruleFromObject) : [];
  const agg = obj.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined;
  return {
    kind: obj.kind,
    name: str(obj.metadata?.name),
    namespace: obj.kind === 'Role' ? str(obj.metadata?.namespace) : '',
    rules,
    aggregated: obj.kind === 'ClusterRole' && Array.isArray(agg?.clusterRoleSelectors) && agg.clusterRoleSelectors.length > 0,
  };
}

export function toBinding(obj: KubeObject): BindingObject | undefined {
  if (obj.kind !== 'RoleBinding' && obj.kind !== 'ClusterRoleBinding') return undefined;
  const ref = (obj.roleRef ?? {}) as Record<string, unknown>;
  const subjects = Array.isArray(obj.subjects)
    ? obj.subjects.map((s: Record<string, unknown>) => ({
        kind: str(s.kind),
        name: str(s.name),
        ...(s.namespace !== undefined ? { namespace: str(s.namespace) } : {}),
        ...(s.apiGroup !== undefined ? { apiGroup: str(s.apiGroup) } : {}),
      }))
    : [];
  return {
    kind: obj.kind,
    name: str(obj.metadata?.name),
    namespace: obj.kind === 'RoleBinding' ? str(obj.metadata?.namespace) : '',
    roleRef: { apiGroup: str(ref.apiGroup) || RBAC_GROUP, kind: str(ref.kind), name: str(ref.name) },
    subjects,
  };
}

/** appliesToUser from the RBAC authorizer: `bindingNamespace` defaults a ServiceAccount subject's namespace. */
export function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.name === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      if (!ns) return false;
      return user.name === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

/** Why an RBAC write (a Role, ClusterRole or binding) is or is not allowed past the escalation check. */
export interface EscalationResult {
  allowed: boolean;
  /** `escalate`, `bind`, `privileged` (system:masters), `holds-rules`, or `denied`. */
  reason: 'escalate' | 'bind' | 'privileged' | 'holds-rules' | 'denied';
  /** The broken-down rules the user would grant without holding them (empty when allowed). */
  missing: PolicyRule[];
  /** Set when the referenced role of a binding could not be found. */
  error?: string;
}

/**
 * The RBAC authorizer over a fixed set of RBAC objects. `system:masters` is allowed everything, as the
 * apiserver's privileged-group short-circuit does.
 */
export class RbacAuthorizer {
  readonly roles = new Map<string, RoleObject>();
  readonly bindings: BindingObject[] = [];

  constructor(objects: Iterable<KubeObject> = []) {
    for (const obj of objects) this.add(obj);
  }

  /** Adds (or replaces) one RBAC object; other kinds are ignored. */
  add(obj: KubeObject): this {
    const role = toRole(obj);
    if (role) this.roles.set(roleKey(role.kind, role.namespace, role.name), role);
    const binding = toBinding(obj);
    if (binding) {
      const i = this.bindings.findIndex((b) => b.kind === binding.kind && b.namespace === binding.namespace && b.name === binding.name);
      if (i >= 0) this.bindings[i] = binding;
      else this.bindings.push(binding);
    }
    return this;
  }

  /** The rules a role reference resolves to in `bindingNamespace`, or undefined when the role does not exist. */
  roleRefRules(ref: RoleRef, bindingNamespace: string): PolicyRule[] | undefined {
    if (ref.kind === 'ClusterRole') return this.roles.get(roleKey('ClusterRole', '', ref.name))?.rules;
    if (ref.kind === 'Role') return this.roles.get(roleKey('Role', bindingNamespace, ref.name))?.rules;
    return undefined;
  }

  /**
   * RulesFor: every rule bound to the user by ClusterRoleBindings, plus, for a non-empty namespace, every
   * rule bound by RoleBindings in that namespace.
   */
  rulesFor(user: UserInfo, namespace = ''): PolicyRule[] {
    const out: PolicyRule[] = [];
    for (const b of this.bindings) {
      if (b.kind === 'RoleBinding' && (!namespace || b.namespace !== namespace)) continue;
      if (!b.subjects.some((s) => subjectMatches(s, user, b.namespace))) continue;
      out.push(...(this.roleRefRules(b.roleRef, b.namespace) ?? []));
    }
    return out;
  }

  isPrivileged(user: UserInfo): boolean {
    return user.groups.includes('system:masters');
  }

  /** The RBAC authorizer's decision for one request. */
  authorize(user: UserInfo, request: RequestAttributes): boolean {
    if (this.isPrivileged(user)) return true;
    const namespace = isNonResource(request) ? '' : (request.namespace ?? '');
    return this.rulesFor(user, namespace).some((r) => ruleAllows(r, request));
  }

  /**
   * The escalation check the apiserver runs when `user` creates or updates a Role, ClusterRole, RoleBinding
   * or ClusterRoleBinding (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased). `pending` holds roles that are not in this
   * authorizer yet but will exist (OLM's pre-authorizer adds the bundle's own roles for its bindings).
   */
  checkEscalation(user: UserInfo, obj: KubeObject, pending: Iterable<KubeObject> = []): EscalationResult {
    if (this.isPrivileged(user)) return { allowed: true, reason: 'privileged', missing: [] };
    const role = toRole(obj);
    if (role) {
      const resource = role.kind === 'Role' ? 'roles' : 'clusterroles';
      const escalate: ResourceAttributes = { verb: 'escalate', group: RBAC_GROUP, resource, name: role.name, namespace: role.namespace };
      if (this.authorize(user, escalate)) return { allowed: true, reason: 'escalate', missing: [] };
      const held = this.rulesFor(user, role.namespace);
      const missing = role.aggregated ? uncoveredRules(held, FULL_AUTHORITY) : [];
      missing.push(...uncoveredRules(held, role.rules));
      return missing.length ? { allowed: false, reason: 'denied', missing } : { allowed: true, reason: 'holds-rules', missing: [] };
    }
    const binding = toBinding(obj);
    if (binding) {
      const { roleRef } = binding;
      const resource = roleRef.kind === 'ClusterRole' ? 'clusterroles' : roleRef.kind === 'Role' ? 'roles' : '';
      if (resource) {
        const bind: ResourceAttributes = { verb: 'bind', group: roleRef.apiGroup || RBAC_GROUP, resource, name: roleRef.name, namespace: binding.namespace };
        if (this.authorize(user, bind)) return { allowed: true, reason: 'bind', missing: [] };
      }
      // As OLM's pre-authorizer does: the referenced role's rules on the cluster plus those of the same
      // role among the objects being installed.
      let rules = this.roleRefRules(roleRef, binding.namespace);
      for (const p of pending) {
        const r = toRole(p);
        if (r && r.kind === roleRef.kind && r.name === roleRef.name && (r.kind === 'ClusterRole' || r.namespace === binding.namespace)) rules = [...(rules ?? []), ...r.rules];
      }
      if (rules === undefined) {
        return { allowed: false, reason: 'denied', missing: [], error: `${roleRef.kind.toLowerCase()}s.${RBAC_GROUP} "${roleRef.name}" not found` };
      }
      const missing = uncoveredRules(this.rulesFor(user, binding.namespace), rules);
      return missing.length ? { allowed: false, reason: 'denied', missing } : { allowed: true, reason: 'holds-rules', missing: [] };
    }
    return { allowed: true, reason: 'holds-rules', missing: [] };
  }
}

/** What an aggregationRule needs: `*` on every resource and every non-resource URL. */
export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const roleKey = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;
