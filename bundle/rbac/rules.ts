/**
 * Kubernetes RBAC policy rules: matching a request against a rule (the RBAC authorizer's semantics,
 * k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go), one rule covering another (the escalation
 * check's semantics, k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go), breaking rules
 * down, compacting them, and printing them. Pure functions, no I/O.
 */

/** A PolicyRule as it appears in a Role or ClusterRole (field names as in the Kubernetes API). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** One request as the authorizer sees it: a resource request or a non-resource request (`path`). */
export interface ResourceAttributes {
  verb: string;
  /** API group; `""` is the core group. */
  group: string;
  /** Plural resource name, without the subresource. */
  resource: string;
  subresource?: string;
  /** Object name; empty for collection requests (list, watch, create, deletecollection). */
  name?: string;
  /** Namespace; empty or absent for cluster-scoped requests and cluster-wide list/watch. */
  namespace?: string;
}

export interface NonResourceAttributes {
  verb: string;
  /** A URL path such as `/healthz` or `/apis`. */
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

export const isNonResource = (a: RequestAttributes): a is NonResourceAttributes => 'path' in a && typeof a.path === 'string';

export const VERB_ALL = '*';
export const API_GROUP_ALL = '*';
export const RESOURCE_ALL = '*';
export const NON_RESOURCE_ALL = '*';

const list = (v: string[] | undefined): string[] => v ?? [];

// ---------------------------------------------------------------------------------------------
// Authorizer semantics: does one rule allow one request?

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === VERB_ALL || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return list(rule.apiGroups).some((g) => g === API_GROUP_ALL || g === group);
}

/** `combined` is `resource` or `resource/subresource`; a rule written star-slash-sub matches any resource's `sub`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of list(rule.resources)) {
    if (r === RESOURCE_ALL || r === combined) return true;
    if (!subresource) continue;
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = list(rule.resourceNames);
  return names.length === 0 || names.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return list(rule.nonResourceURLs).some(
    (u) => u === NON_RESOURCE_ALL || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))),
  );
}

/** RuleAllows from the RBAC authorizer. */
export function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  if (isNonResource(request)) return verbMatches(rule, request.verb) && nonResourceURLMatches(rule, request.path);
  const sub = request.subresource ?? '';
  const combined = sub ? `${request.resource}/${sub}` : request.resource;
  return (
    verbMatches(rule, request.verb) &&
    apiGroupMatches(rule, request.group) &&
    resourceMatches(rule, combined, sub) &&
    resourceNameMatches(rule, request.name ?? '')
  );
}

export const rulesAllow = (rules: readonly PolicyRule[], request: RequestAttributes): boolean => rules.some((r) => ruleAllows(r, request));

// ---------------------------------------------------------------------------------------------
// Escalation semantics: does a set of rules cover another set?

/** One rule per (group, resource, verb[, name]) and per (url, verb), as the escalation check compares them. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of list(rule.apiGroups)) {
    for (const resource of list(rule.resources)) {
      for (const verb of rule.verbs) {
        const names = list(rule.resourceNames);
        if (names.length) for (const n of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [n] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of list(rule.nonResourceURLs)) for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const has = (set: string[], x: string) => set.includes(x);
const hasAll = (set: string[], xs: string[]) => xs.every((x) => set.includes(x));

function resourceCoversAll(owner: string[], wanted: string[]): boolean {
  if (has(owner, RESOURCE_ALL) || hasAll(owner, wanted)) return true;
  for (const path of wanted) {
    if (has(owner, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(owner, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
}

/** ruleCovers from the escalation check. Wildcards in the requested rule are literal: only `*` covers `*`. */
export function ruleCovers(owner: PolicyRule, wanted: PolicyRule): boolean {
  const verbs = has(owner.verbs, VERB_ALL) || hasAll(owner.verbs, wanted.verbs);
  const groups = has(list(owner.apiGroups), API_GROUP_ALL) || hasAll(list(owner.apiGroups), list(wanted.apiGroups));
  const resources = resourceCoversAll(list(owner.resources), list(wanted.resources));
  const urls = list(wanted.nonResourceURLs).every((u) => list(owner.nonResourceURLs).some((o) => nonResourceURLCovers(o, u)));
  const ownerNames = list(owner.resourceNames);
  const wantedNames = list(wanted.resourceNames);
  const names = wantedNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, wantedNames);
  return verbs && groups && resources && names && urls;
}

/** Covers: every broken-down piece of `wanted` is covered by some rule of `owner`. Returns the uncovered pieces. */
export function uncoveredRules(owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of wanted) for (const sub of breakdownRule(rule)) if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
  return missing;
}

export const covers = (owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): boolean => uncoveredRules(owner, wanted).length === 0;

// ---------------------------------------------------------------------------------------------
// Normalising, compacting, sorting, printing

/** Drops empty lists, sorts and de-duplicates every list, so equal rules compare equal. */
export function normalizeRule(rule: PolicyRule): PolicyRule {
  const uniq = (v: string[] | undefined) => [...new Set(v ?? [])].sort();
  const out: PolicyRule = { verbs: uniq(rule.verbs) };
  if (rule.apiGroups?.length) out.apiGroups = uniq(rule.apiGroups);
  if (rule.resources?.length) out.resources = uniq(rule.resources);
  if (rule.resourceNames?.length) out.resourceNames = uniq(rule.resourceNames);
  if (rule.nonResourceURLs?.length) out.nonResourceURLs = uniq(rule.nonResourceURLs);
  return out;
}

/**
 * CompactRules from the escalation check: rules with one group, one resource, at most one name and no URLs
 * ("simple" rules) that differ only in verbs are merged. Verbs are then de-duplicated and sorted, and a
 * rule holding `*` keeps only `*`, as OLM's pre-authorizer does.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const simple = new Map<string, PolicyRule>();
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    const groups = list(rule.apiGroups);
    const resources = list(rule.resources);
    const names = list(rule.resourceNames);
    if (names.length <= 1 && list(rule.nonResourceURLs).length === 0 && groups.length === 1 && resources.length === 1) {
      const key = JSON.stringify([groups[0], resources[0], names[0] ?? null]);
      const existing = simple.get(key);
      if (existing) existing.verbs.push(...rule.verbs);
      else {
        const copy: PolicyRule = { apiGroups: [...groups], resources: [...resources], verbs: [...rule.verbs] };
        if (names.length) copy.resourceNames = [...names];
        simple.set(key, copy);
        out.push(copy);
      }
    } else out.push({ ...rule, verbs: [...rule.verbs] });
  }
  return out.map((r) => {
    const verbs = [...new Set(r.verbs)].sort();
    return { ...r, verbs: verbs.includes(VERB_ALL) ? [VERB_ALL] : verbs };
  });
}

/** Rules with identical verbs, groups and names are merged into one rule listing all their resources. */
export function mergeResources(rules: readonly PolicyRule[]): PolicyRule[] {
  const out = new Map<string, PolicyRule>();
  for (const raw of rules.map(normalizeRule)) {
    if (raw.nonResourceURLs) {
      out.set(JSON.stringify(raw), raw);
      continue;
    }
    const key = JSON.stringify([raw.verbs, raw.apiGroups ?? [], raw.resourceNames ?? []]);
    const existing = out.get(key);
    if (existing) existing.resources = [...new Set([...(existing.resources ?? []), ...(raw.resources ?? [])])].sort();
    else out.set(key, { ...raw });
  }
  return [...out.values()];
}

/** The one-line form Kubernetes and OLM print: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function ruleString(rule: PolicyRule): string {
  const parts: string[] = [];
  const q = (v: string[]) => `[${v.map((s) => JSON.stringify(s)).join(', ')}]`;
  if (rule.apiGroups?.length) parts.push(`APIGroups:${q(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${q(rule.resources)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${q(rule.resourceNames)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(rule.nonResourceURLs)}`);
  parts.push(`Verbs:${q(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** A stable order for rules: groups, resources, names, URLs, verbs. */
export function compareRules(a: PolicyRule, b: PolicyRule): number {
  const key = (r: PolicyRule) =>
    [r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? [], r.verbs].map((v) => v.join(',')).join('\u0000');
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/** A rule as a plain object for YAML/JSON output, lists in API field order and empty lists left out. */
export function ruleToObject(rule: PolicyRule): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (rule.apiGroups?.length) out.apiGroups = rule.apiGroups;
  if (rule.resources?.length) out.resources = rule.resources;
  if (rule.resourceNames?.length) out.resourceNames = rule.resourceNames;
  if (rule.nonResourceURLs?.length) out.nonResourceURLs = rule.nonResourceURLs;
  out.verbs = rule.verbs;
  return out;
}

/** Reads a rule from an untyped object (a parsed Role), keeping only string lists. */
export function ruleFromObject(value: unknown): PolicyRule {
  const v = (value ?? {}) as Record<string, unknown>;
  const strings = (x: unknown): string[] | undefined => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : undefined);
  const rule: PolicyRule = { verbs: strings(v.verbs) ?? [] };
  const g = strings(v.apiGroups);
  const r = strings(v.resources);
  const n = strings(v.resourceNames);
  const u = strings(v.nonResourceURLs);
  if (g) rule.apiGroups = g;
  if (r) rule.resources = r;
  if (n) rule.resourceNames = n;
  if (u) rule.nonResourceURLs = u;
  return rule;
}
