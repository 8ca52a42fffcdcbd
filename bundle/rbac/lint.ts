/**
 * Least-privilege lint of a set of Roles and ClusterRoles (and the bindings that say where they apply):
 * no wildcards in verbs, resources, API groups or non-resource URLs; no escalate, bind or impersonate; no
 * cluster-wide access to Secrets. Every finding names its place and says what to do.
 */
import { type KubeObject, toBinding, toRole } from './authorizer.js';
import { type PolicyRule, ruleString } from './rules.js';

/** A Role/ClusterRole (or binding) with where it came from. */
export interface PlacedRbacObject {
  object: KubeObject;
  /** `file:line` of the object, or another label. */
  place?: string;
  /** `file:line` of each rule, by index, when known. */
  rulePlaces?: (string | undefined)[];
}

export type LintCode =
  | 'wildcard-verb'
  | 'wildcard-resource'
  | 'wildcard-api-group'
  | 'wildcard-non-resource-url'
  | 'escalate-verb'
  | 'bind-verb'
  | 'impersonate-verb'
  | 'cluster-wide-secrets';

export interface LintFinding {
  code: LintCode;
  /** `file:line` (or `Kind/name`) followed by `rules[i]`. */
  place: string;
  message: string;
  hint: string;
  rule: PolicyRule;
}

const DANGEROUS_VERBS: Record<string, { code: LintCode; hint: string }> = {
  escalate: { code: 'escalate-verb', hint: 'escalate lets the holder grant permissions it does not have; remove it' },
  bind: { code: 'bind-verb', hint: 'bind lets the holder bind roles whose permissions it does not have; remove it' },
  impersonate: { code: 'impersonate-verb', hint: 'impersonate lets the holder act as any user, group or ServiceAccount; remove it' },
};

/**
 * Lints every rule of every Role and ClusterRole among `objects`. A ClusterRole counts as cluster-wide
 * unless the objects contain bindings and only RoleBindings reference it.
 */
export function lintRules(objects: readonly PlacedRbacObject[]): LintFinding[] {
  const findings: LintFinding[] = [];
  const bindings = objects.map((o) => toBinding(o.object)).filter((b) => b !== undefined);
  for (const { object, place, rulePlaces } of objects) {
    const role = toRole(object);
    if (!role) continue;
    const label = `${role.kind}/${role.namespace ? `${role.namespace}/` : ''}${role.name}`;
    const refs = bindings.filter((b) => b.roleRef.kind === role.kind && b.roleRef.name === role.name && (role.kind === 'ClusterRole' || b.namespace === role.namespace));
    const clusterWide = role.kind === 'ClusterRole' && (refs.length === 0 || refs.some((b) => b.kind === 'ClusterRoleBinding'));
    role.rules.forEach((rule, i) => {
      const at = `${rulePlaces?.[i] ?? place ?? label} ${label} rules[${i}]`;
      const add = (code: LintCode, message: string, hint: string) => findings.push({ code, place: at, message, hint, rule });
      if (rule.verbs.includes('*')) add('wildcard-verb', `verbs contain "*": ${ruleString(rule)}`, 'list the verbs the code calls, e.g. get, list, watch');
      for (const r of rule.resources ?? []) {
        if (r === '*' || r.startsWith('*/')) add('wildcard-resource', `resources contain "${r}": ${ruleString(rule)}`, 'list the resources the code touches by name');
      }
      if ((rule.apiGroups ?? []).includes('*')) add('wildcard-api-group', `apiGroups contain "*": ${ruleString(rule)}`, 'list the API groups by name ("" is the core group)');
      for (const u of rule.nonResourceURLs ?? []) {
        if (u.includes('*')) add('wildcard-non-resource-url', `nonResourceURLs contain "${u}": ${ruleString(rule)}`, 'list the exact paths, e.g. /metrics');
      }
      for (const v of rule.verbs) {
        const d = DANGEROUS_VERBS[v];
        if (d) add(d.code, `grants "${v}": ${ruleString(rule)}`, d.hint);
      }
      const groups = rule.apiGroups ?? [];
      const resources = rule.resources ?? [];
      const secrets = (groups.includes('') || groups.includes('*')) && (resources.includes('secrets') || resources.includes('*'));
      if (clusterWide && secrets) {
        add(
          'cluster-wide-secrets',
          `ClusterRole ${role.name} reaches Secrets in every namespace: ${ruleString(rule)}`,
          'move Secret access to a Role in the namespaces that need it (or bind this ClusterRole with RoleBindings only), and restrict it with resourceNames',
        );
      }
    });
  }
  return findings;
}
