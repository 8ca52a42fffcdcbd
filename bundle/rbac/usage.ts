/**
 * "Declared equals used": the operator's declared permissions (operator/rbac-declarations.ts, or the rules
 * of its Role/ClusterRole) against the API calls its code makes, both ways. Calls come as explicit
 * attributes, as HTTP requests (`GET /apis/apps/v1/namespaces/x/deployments?watch=1`) or as
 * kube-apiserver audit events. Pure.
 */
import type { Declaration } from '../../operator/rbac-declarations.js';
import { type KubeObject, toBinding, toRole } from './authorizer.js';
import {
  type NonResourceAttributes,
  type PolicyRule,
  type RequestAttributes,
  type ResourceAttributes,
  breakdownRule,
  compactRules,
  compareRules,
  isNonResource,
  mergeResources,
  ruleAllows,
} from './rules.js';

/** The ClusterRole and namespaced Role rules that grant exactly the declarations. */
export function rulesFromDeclarations(decls: readonly Declaration[]): { cluster: PolicyRule[]; namespaced: PolicyRule[] } {
  const cluster: PolicyRule[] = [];
  const namespaced: PolicyRule[] = [];
  for (const d of decls) {
    if ('nonResourceURL' in d) {
      cluster.push({ nonResourceURLs: [d.nonResourceURL], verbs: [...d.verbs] });
      continue;
    }
    const rule: PolicyRule = {
      apiGroups: [d.group],
      resources: [d.subresource ? `${d.resource}/${d.subresource}` : d.resource],
      verbs: [...d.verbs],
      ...(d.resourceNames?.length ? { resourceNames: [...d.resourceNames] } : {}),
    };
    (d.scope === 'namespace' ? namespaced : cluster).push(rule);
  }
  const tidy = (rules: PolicyRule[]) => mergeResources(compactRules(rules)).sort(compareRules);
  return { cluster: tidy(cluster), namespaced: tidy(namespaced) };
}

/** A rule with where it applies: `namespace` undefined means every namespace and cluster scope. */
export interface ScopedRule {
  rule: PolicyRule;
  namespace?: string;
  /** Where it was declared (file:line, `ClusterRole/x rules[2]`, or a declaring module). */
  place?: string;
}

/**
 * The rules of the Roles and ClusterRoles among `objects`, scoped as their bindings place them: a Role in
 * its namespace; a ClusterRole everywhere, unless only RoleBindings reference it. `placeOf` gives the
 * file:line of a field of an object.
 */
export function scopedRulesOf(objects: readonly { object: KubeObject; placeOf(path: (string | number)[]): string }[]): ScopedRule[] {
  const bindings = objects.map((o) => toBinding(o.object)).filter((b) => b !== undefined);
  const out: ScopedRule[] = [];
  for (const o of objects) {
    const role = toRole(o.object);
    if (!role) continue;
    let namespaces: (string | undefined)[];
    if (role.kind === 'Role') namespaces = [role.namespace || undefined];
    else {
      const refs = bindings.filter((b) => b.roleRef.kind === 'ClusterRole' && b.roleRef.name === role.name);
      namespaces = refs.length === 0 || refs.some((b) => b.kind === 'ClusterRoleBinding') ? [undefined] : [...new Set(refs.map((b) => b.namespace))];
    }
    role.rules.forEach((rule, i) => {
      for (const namespace of namespaces) out.push({ rule, place: `${o.placeOf(['rules', i])} ${role.kind}/${role.name} rules[${i}]`, ...(namespace !== undefined ? { namespace } : {}) });
    });
  }
  return out;
}

/** An API call the code makes, with where it was observed. */
export type ApiCall = RequestAttributes & { source?: string };

const METHOD_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/**
 * The authorizer's view of an HTTP request, as the apiserver's RequestInfoFactory derives it:
 * `/api/v1/...` and `/apis/<group>/<version>/...`, `namespaces/<ns>/<resource>/<name>/<subresource>`,
 * list vs get, watch (`?watch=1` or `/watch/` prefix), deletecollection. Other paths are non-resource.
 */
export function requestToAttributes(method: string, url: string): RequestAttributes {
  const u = new URL(url, 'http://x');
  const parts = u.pathname.split('/').filter(Boolean);
  const m = method.toUpperCase();
  const nonResource = (): NonResourceAttributes => ({ verb: m === 'GET' || m === 'HEAD' ? 'get' : m.toLowerCase(), path: u.pathname });
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    rest = parts.slice(3);
  } else return nonResource();
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1]!;
    rest = rest.slice(2);
  } else if (rest[0] === 'namespaces' && rest.length === 2) {
    // a Namespace object itself: /api/v1/namespaces/<name>
    rest = ['namespaces', rest[1]!];
  }
  const [resource = '', name = '', subresource = ''] = rest;
  const watch = watchPath || ['1', 'true'].includes(u.searchParams.get('watch') ?? '');
  let verb: string;
  if (m === 'GET' || m === 'HEAD') verb = watch ? 'watch' : name ? 'get' : 'list';
  else if (m === 'DELETE') verb = name ? 'delete' : 'deletecollection';
  else verb = METHOD_VERBS[m] ?? m.toLowerCase();
  if (namespace && resource === '' && !name) return { verb, group, resource: 'namespaces', name: namespace };
  const out: ResourceAttributes = { verb, group, resource };
  if (subresource) out.subresource = subresource;
  if (name) out.name = name;
  if (namespace) out.namespace = namespace;
  if (resource === 'namespaces' && name && !subresource) delete out.namespace;
  return out;
}

/**
 * Reads API calls from parsed YAML/JSON: a list (or `{calls: [...]}`, or an audit `EventList`) whose items
 * are attributes (`{verb, group, resource, ...}` or `{verb, path}`), HTTP requests (`{method, url}`, or the
 * string `"GET /apis/..."`) or audit events (`{verb, objectRef: {...}}` / `{verb, requestURI}`).
 */
export function parseApiCalls(value: unknown, source = 'calls'): ApiCall[] {
  const items: unknown[] = Array.isArray(value)
    ? value
    : value && typeof value === 'object' && Array.isArray((value as { calls?: unknown }).calls)
      ? (value as { calls: unknown[] }).calls
      : value && typeof value === 'object' && Array.isArray((value as { items?: unknown }).items)
        ? (value as { items: unknown[] }).items
        : [value];
  return items.map((item, i) => ({ ...parseApiCall(item, `${source}[${i}]`), source: `${source}[${i}]` }));
}

function parseApiCall(item: unknown, where: string): RequestAttributes {
  if (typeof item === 'string') {
    const m = item.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
    if (!m) throw new TypeError(`${where}: expected "METHOD /path", got "${item}"`);
    return requestToAttributes(m[1]!, m[2]!);
  }
  const o = (item ?? {}) as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (s(o.method) && s(o.url)) return requestToAttributes(s(o.method)!, s(o.url)!);
  if (o.objectRef && typeof o.objectRef === 'object' && s(o.verb)) {
    const ref = o.objectRef as Record<string, unknown>;
    const out: ResourceAttributes = { verb: s(o.verb)!, group: s(ref.apiGroup) ?? '', resource: s(ref.resource) ?? '' };
    if (s(ref.subresource)) out.subresource = s(ref.subresource)!;
    if (s(ref.name)) out.name = s(ref.name)!;
    if (s(ref.namespace)) out.namespace = s(ref.namespace)!;
    return out;
  }
  if (s(o.verb) && s(o.requestURI) && !o.objectRef) return { verb: s(o.verb)!, path: new URL(s(o.requestURI)!, 'http://x').pathname };
  if (s(o.verb) && s(o.path)) return { verb: s(o.verb)!, path: s(o.path)! };
  if (s(o.verb) && s(o.resource) !== undefined) {
    const out: ResourceAttributes = { verb: s(o.verb)!, group: s(o.group) ?? s(o.apiGroup) ?? '', resource: s(o.resource)! };
    if (s(o.subresource)) out.subresource = s(o.subresource)!;
    if (s(o.name)) out.name = s(o.name)!;
    if (s(o.namespace)) out.namespace = s(o.namespace)!;
    return out;
  }
  throw new TypeError(`${where}: not an API call (want {verb, group, resource}, {verb, path}, {method, url}, "METHOD /path" or an audit event)`);
}

export function describeCall(c: RequestAttributes): string {
  if (isNonResource(c)) return `${c.verb} ${c.path}`;
  const res = `${c.resource}${c.subresource ? `/${c.subresource}` : ''}${c.group ? `.${c.group}` : ''}`;
  return `${c.verb} ${res}${c.name ? ` "${c.name}"` : ''}${c.namespace ? ` in ${c.namespace}` : ''}`;
}

export interface DeclaredUsedReport {
  /** Calls no declared rule allows (the code would get 403). */
  undeclared: ApiCall[];
  /** Declared permissions no call exercises (broken down to one verb and resource, then compacted). */
  unused: { rule: PolicyRule; place?: string; namespace?: string }[];
}

const inScope = (s: ScopedRule, call: RequestAttributes) =>
  s.namespace === undefined || (!isNonResource(call) && (call.namespace ?? '') === s.namespace);

/** Compares declared rules with the calls made, both ways. */
export function compareDeclaredWithUsed(declared: readonly ScopedRule[], used: readonly ApiCall[]): DeclaredUsedReport {
  const undeclared = used.filter((c) => !declared.some((s) => inScope(s, c) && ruleAllows(s.rule, c)));
  const unused: DeclaredUsedReport['unused'] = [];
  for (const s of declared) {
    const pieces = breakdownRule(s.rule).filter((piece) => !used.some((c) => inScope(s, c) && ruleAllows(piece, c)));
    for (const rule of compactRules(pieces)) unused.push({ rule, ...(s.place ? { place: s.place } : {}), ...(s.namespace !== undefined ? { namespace: s.namespace } : {}) });
  }
  return { undeclared, unused };
}
