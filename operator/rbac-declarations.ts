/**
 * RBAC declared next to the code that needs it, as kubebuilder's `+kubebuilder:rbac` markers do.
 *
 *   // operator/controllers/inference.ts
 *   import { requires } from '../rbac-declarations.js';
 *   export const RBAC = [
 *     requires({ group: 'apps', resource: 'deployments', verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'], reason: 'owns the model server Deployment' }),
 *     requires({ group: 'inference.olmpub.dev', resource: 'inferenceservices', subresource: 'status', verbs: ['update', 'patch'] }),
 *   ];
 *
 * `requires()` validates a declaration, freezes it and records it in a process-wide registry, so importing
 * the operator's modules is enough to collect them (`declaredPermissions()`); the returned constant can
 * also be exported and collected explicitly (`collectDeclarations(...)`). bundle/rbac turns declarations
 * into the operator's ClusterRole and checks them against the API calls the code makes. This module
 * imports nothing, so any operator module may use it.
 */

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | (string & {});

export interface PermissionDeclaration {
  /** API group; `''` is the core group. */
  readonly group: string;
  /** Plural resource, e.g. `deployments`. */
  readonly resource: string;
  /** Subresource such as `status` or `finalizers`. */
  readonly subresource?: string;
  readonly verbs: readonly Verb[];
  /** Restricts the permission to these object names. */
  readonly resourceNames?: readonly string[];
  /** `cluster` (ClusterRole, the default) or `namespace` (a Role in the operator's namespace). */
  readonly scope?: 'cluster' | 'namespace';
  /** Why the code needs it; shown by `olmpub rbac check`. */
  readonly reason?: string;
  /** Where it is declared (module or function); filled from the call stack when omitted. */
  readonly declaredBy?: string;
}

export interface NonResourcePermissionDeclaration {
  /** A URL path such as `/metrics`. */
  readonly nonResourceURL: string;
  readonly verbs: readonly Verb[];
  readonly reason?: string;
  readonly declaredBy?: string;
}

export type Declaration = PermissionDeclaration | NonResourcePermissionDeclaration;

const registry = new Map<string, Declaration>();

const FORBIDDEN_WILDCARD = /\*/;

function caller(): string | undefined {
  const stack = new Error().stack?.split('\n') ?? [];
  // [0] "Error", [1] caller(), [2] requires*(), [3] the declaring module.
  const line = stack[3]?.trim();
  const m = line?.match(/\(?((?:file:\/\/)?[^()\s]+:\d+):\d+\)?$/);
  return m?.[1]?.replace(/^file:\/\//, '');
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new TypeError(`rbac declaration: ${message}`);
}

function keyOf(d: Declaration): string {
  return 'nonResourceURL' in d
    ? JSON.stringify(['url', d.nonResourceURL, [...d.verbs].sort()])
    : JSON.stringify([d.group, d.resource, d.subresource ?? '', [...d.verbs].sort(), [...(d.resourceNames ?? [])].sort(), d.scope ?? 'cluster']);
}

/** Declares a resource permission the calling code needs; returns the frozen declaration. */
export function requires(decl: PermissionDeclaration): PermissionDeclaration {
  check(typeof decl.group === 'string', 'group must be a string ("" for the core group)');
  check(typeof decl.resource === 'string' && /^[a-z0-9.-]+$/.test(decl.resource), `resource must be a lowercase plural, got "${decl.resource}"`);
  check(decl.subresource === undefined || /^[a-z0-9.-]+$/.test(decl.subresource), `subresource must be a lowercase name, got "${decl.subresource}"`);
  check(Array.isArray(decl.verbs) && decl.verbs.length > 0, 'verbs must list at least one verb');
  for (const v of [decl.group, decl.resource, decl.subresource ?? '', ...decl.verbs]) {
    check(!FORBIDDEN_WILDCARD.test(v), `wildcards are not allowed (least privilege): "${v}"`);
  }
  const frozen: PermissionDeclaration = Object.freeze({
    ...decl,
    verbs: Object.freeze([...new Set(decl.verbs)]),
    ...(decl.resourceNames ? { resourceNames: Object.freeze([...decl.resourceNames]) } : {}),
    declaredBy: decl.declaredBy ?? caller(),
  });
  const key = keyOf(frozen);
  if (!registry.has(key)) registry.set(key, frozen);
  return frozen;
}

/** Declares a non-resource URL permission (e.g. `get` on `/metrics`). */
export function requiresURL(decl: NonResourcePermissionDeclaration): NonResourcePermissionDeclaration {
  check(typeof decl.nonResourceURL === 'string' && decl.nonResourceURL.startsWith('/'), `nonResourceURL must be a path, got "${decl.nonResourceURL}"`);
  check(!FORBIDDEN_WILDCARD.test(decl.nonResourceURL), `wildcards are not allowed (least privilege): "${decl.nonResourceURL}"`);
  check(Array.isArray(decl.verbs) && decl.verbs.length > 0, 'verbs must list at least one verb');
  const frozen: NonResourcePermissionDeclaration = Object.freeze({ ...decl, verbs: Object.freeze([...new Set(decl.verbs)]), declaredBy: decl.declaredBy ?? caller() });
  const key = keyOf(frozen);
  if (!registry.has(key)) registry.set(key, frozen);
  return frozen;
}

/** Every declaration made so far in this process (by every imported module), in a stable order. */
export function declaredPermissions(): readonly Declaration[] {
  return [...registry.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

/** Flattens exported declaration constants (single declarations or arrays of them) without duplicates. */
export function collectDeclarations(...groups: (Declaration | readonly Declaration[])[]): Declaration[] {
  const out = new Map<string, Declaration>();
  for (const g of groups) for (const d of Array.isArray(g) ? g : [g as Declaration]) if (!out.has(keyOf(d))) out.set(keyOf(d), d);
  return [...out.values()];
}

/** For tests: forgets every declaration recorded so far. */
export function resetDeclarationsForTesting(): void {
  registry.clear();
}
