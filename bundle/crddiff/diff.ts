/**
 * CRD upgrade safety: the crdify rule set (sigs.k8s.io/crdify) with the settings OLM v1's preflight uses
 * (internal/operator-controller/rukpak/preflights/crdupgradesafety): unhandled changes are errors,
 * served-version checks are skipped for webhook conversion, enum additions are allowed and description
 * changes are ignored. Pure: two CRD objects in, findings out.
 *
 * Checks:
 * - CRD-wide: `scope` (no Namespaced↔Cluster), `storedVersionRemoval` (a version in the old
 *   status.storedVersions, or the old storage version when the object has no status, must stay),
 *   `existingFieldRemoval` (every property path of a version must stay in that version);
 *   olmpub adds `servedVersionRemoval` (a served version vanishing breaks its clients; OLM does not check it).
 * - Per property of each version present in both (`<version>`), and between every pair of served versions of
 *   the new CRD (`<older> -> <newer>`) unless it converts with a webhook: `default` (added, changed, removed),
 *   `enum` (constraint added, values removed; values added are fine), `maximum`/`maxItems`/`maxLength`/
 *   `maxProperties` (added or decreased), `minimum`/`minItems`/`minLength`/`minProperties` (added or
 *   increased), `required` (newly required), `type` (changed), `pattern` (added, changed, removed),
 *   `nullable` (added or removed), `description` (ignored), and `unhandled`: any other change of the
 *   property itself (x-kubernetes-*, format, allOf/anyOf/oneOf/not, exclusiveMinimum, ...) is an error.
 *   Served-pair issues already present between the same pair in the old CRD are not reported again.
 *
 * Property paths follow crdify: `^` is the root, `^.spec.replicas`, list items `^.spec.ports.items`, map values
 * `^.spec.labels.additionalProperties`. Children are compared at their own paths, so an added optional field
 * changes nothing at its parent. One finding per property and rule; a removed object reports its topmost path.
 */
import { canonicalJSON } from '../../lib/canonical.js';
import { validationError } from '../../lib/errors.js';

export type Schema = Record<string, unknown>;

export interface CRDVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Schema };
  [key: string]: unknown;
}

export interface CRD {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; [key: string]: unknown };
  spec?: {
    group?: string;
    scope?: string;
    versions?: CRDVersion[];
    conversion?: { strategy?: string; [key: string]: unknown };
    [key: string]: unknown;
  };
  status?: { storedVersions?: string[]; [key: string]: unknown };
  [key: string]: unknown;
}

export type Validation =
  | 'scope'
  | 'storedVersionRemoval'
  | 'servedVersionRemoval'
  | 'existingFieldRemoval'
  | 'default'
  | 'enum'
  | 'maximum'
  | 'maxItems'
  | 'maxLength'
  | 'maxProperties'
  | 'minimum'
  | 'minItems'
  | 'minLength'
  | 'minProperties'
  | 'required'
  | 'type'
  | 'pattern'
  | 'nullable'
  | 'unhandled'
  | 'crdRemoval';

export interface CRDFinding {
  crd: string;
  validation: Validation;
  /** `crd`: CRD-wide; `version`: the same version old → new; `served`: between two served versions of the new CRD. */
  scope: 'crd' | 'version' | 'served';
  /** Version name (`v1`) or served pair (`v1alpha1 -> v1`). */
  version?: string;
  /** crdify property path, e.g. `^.spec.replicas`. */
  property?: string;
  message: string;
  /** Whether OLM's own preflight reports this (false for olmpub's additions). */
  olm: boolean;
}

export interface CRDDiffResult {
  name: string;
  passed: boolean;
  findings: CRDFinding[];
}

export interface DiffOptions {
  /** Report served versions that vanish (olmpub's addition; default true). */
  servedVersionRemoval?: boolean;
}

/** The message OLM prints for one finding: `validating upgrade for CRD "<name>": <version>: <path>: <validation>: <message>`. */
export function formatFinding(f: CRDFinding): string {
  const where = f.scope === 'crd' ? `${f.validation}: ` : `${f.version}: ${f.property}: ${f.validation}: `;
  return `validating upgrade for CRD ${JSON.stringify(f.crd)}: ${where}${f.message}`;
}

// ---------------------------------------------------------------------------------------------
// Schema flattening

const isObj = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every property path of a schema mapped to its node. */
export function flattenSchema(schema: Schema | undefined): Map<string, Schema> {
  const out = new Map<string, Schema>();
  const walk = (node: unknown, path: string) => {
    if (!isObj(node)) return;
    out.set(path, node);
    if (isObj(node.properties)) for (const [name, child] of Object.entries(node.properties)) walk(child, `${path}.${name}`);
    if (isObj(node.items)) walk(node.items, `${path}.items`);
    else if (Array.isArray(node.items)) node.items.forEach((child, i) => walk(child, `${path}.items[${i}]`));
    if (isObj(node.additionalProperties)) walk(node.additionalProperties, `${path}.additionalProperties`);
  };
  walk(schema, '^');
  return out;
}

/** Plain (non-pointer) fields of JSONSchemaProps: their zero value equals absence. */
const ZERO_BOOL = new Set(['nullable', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource', 'uniqueItems', 'exclusiveMaximum', 'exclusiveMinimum']);
const ZERO_STRING = new Set(['type', 'format', 'pattern', 'description', 'title', 'id', '$schema', '$ref']);

/** A property's own attributes: children dropped, zero values and empty lists removed (Go semantic equality). */
export function ownAttributes(node: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties') continue;
    if (k === 'items' && (isObj(v) || Array.isArray(v))) continue;
    if (k === 'additionalProperties' && isObj(v)) continue;
    if (v === undefined || v === null) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (ZERO_BOOL.has(k) && v === false) continue;
    if (ZERO_STRING.has(k) && v === '') continue;
    if ((k === 'definitions' || k === 'patternProperties' || k === 'dependencies') && isObj(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Property comparators (each consumes its field on both sides, as crdify's do, so that what remains
// is what no rule handled)

type Comparator = { name: Validation | 'description'; compare(a: Schema, b: Schema): string | undefined };

const raw = (v: unknown) => canonicalJSON(v);
const goQuote = (s: string) => JSON.stringify(s);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : v === undefined ? undefined : Number(v));

function take(a: Schema, b: Schema, key: string): [unknown, unknown] {
  const x = a[key];
  const y = b[key];
  delete a[key];
  delete b[key];
  return [x, y];
}

const maxComparator = (name: Validation): Comparator => ({
  name,
  compare(a, b) {
    const [x, y] = take(a, b, name).map(num);
    if (x === undefined && y !== undefined) return `maximum constraint added when there was none previously : ${y}`;
    if (x !== undefined && y !== undefined && y < x) return `maximum decreased : ${x} -> ${y}`;
    return undefined;
  },
});

const minComparator = (name: Validation): Comparator => ({
  name,
  compare(a, b) {
    const [x, y] = take(a, b, name).map(num);
    if (x === undefined && y !== undefined) return `minimum constraint added when there was none previously : ${y}`;
    if (x !== undefined && y !== undefined && y > x) return `minimum increased : ${x} -> ${y}`;
    return undefined;
  },
});

const COMPARATORS: Comparator[] = [
  {
    name: 'default',
    compare(a, b) {
      const [x, y] = take(a, b, 'default');
      if (x === undefined && y !== undefined) return `default added when there was none previously : ${goQuote(raw(y))}`;
      if (x !== undefined && y === undefined) return `default value removed : ${goQuote(raw(x))}`;
      if (x !== undefined && y !== undefined && raw(x) !== raw(y)) return `default value changed : ${goQuote(raw(x))} -> ${goQuote(raw(y))}`;
      return undefined;
    },
  },
  {
    name: 'enum',
    compare(a, b) {
      const [x, y] = take(a, b, 'enum');
      const before = new Set((Array.isArray(x) ? x : []).map(raw));
      const after = new Set((Array.isArray(y) ? y : []).map(raw));
      const show = (s: string[]) => `[${s.sort().join(' ')}]`;
      if (before.size === 0 && after.size > 0) return `enum constraint added when there was none previously : ${show([...after])}`;
      const removed = [...before].filter((v) => !after.has(v));
      if (removed.length) return `allowed enum values removed : ${show(removed)}`;
      // OLM configures additionPolicy: Allow, so added values are compatible.
      return undefined;
    },
  },
  maxComparator('maximum'),
  maxComparator('maxItems'),
  maxComparator('maxLength'),
  maxComparator('maxProperties'),
  minComparator('minimum'),
  minComparator('minItems'),
  minComparator('minLength'),
  minComparator('minProperties'),
  {
    name: 'required',
    compare(a, b) {
      const [x, y] = take(a, b, 'required');
      const before = new Set(Array.isArray(x) ? (x as string[]) : []);
      const added = (Array.isArray(y) ? (y as string[]) : []).filter((f) => !before.has(f));
      return added.length ? `new required fields: [${[...new Set(added)].sort().join(' ')}]` : undefined;
    },
  },
  {
    name: 'type',
    compare(a, b) {
      const [x, y] = take(a, b, 'type');
      return (x ?? '') !== (y ?? '') ? `type changed : ${goQuote(String(x ?? ''))} -> ${goQuote(String(y ?? ''))}` : undefined;
    },
  },
  {
    name: 'pattern',
    compare(a, b) {
      const [x, y] = take(a, b, 'pattern').map((v) => String(v ?? ''));
      if (x === y) return undefined;
      if (!x) return `pattern added : ${goQuote(x!)} -> ${goQuote(y!)}`;
      if (!y) return `pattern removed : ${goQuote(x)} -> ${goQuote(y!)}`;
      return `pattern changed : ${goQuote(x)} -> ${goQuote(y!)}`;
    },
  },
  {
    name: 'nullable',
    compare(a, b) {
      const [x, y] = take(a, b, 'nullable').map((v) => v === true);
      if (!x && y) return 'nullable added : false -> true';
      if (x && !y) return 'nullable removed : true -> false';
      return undefined;
    },
  },
  {
    // OLM sets the description validation's enforcement to None: consumed, never reported.
    name: 'description',
    compare(a, b) {
      take(a, b, 'description');
      return undefined;
    },
  },
];

/** Compares one property's own attributes: one finding per violated rule, then `unhandled` for the rest. */
export function compareProperty(oldNode: Schema, newNode: Schema): { validation: Validation; message: string }[] {
  const a = ownAttributes(oldNode);
  const b = ownAttributes(newNode);
  const out: { validation: Validation; message: string }[] = [];
  for (const c of COMPARATORS) {
    const message = c.compare(a, b);
    if (message && c.name !== 'description') out.push({ validation: c.name, message });
  }
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().filter((k) => raw(a[k]) !== raw(b[k]));
  if (keys.length) {
    const show = (v: unknown) => (v === undefined ? '(none)' : raw(v));
    out.push({ validation: 'unhandled', message: `unhandled change(s) found - diff: ${keys.map((k) => `${k}: ${show(a[k])} -> ${show(b[k])}`).join('; ')}` });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Versions

/** Kubernetes' kube-aware version order (CompareKubeAwareVersionStrings): v1alpha1 < v1beta1 < v1 < v2. */
export function compareKubeVersions(a: string, b: string): number {
  if (a === b) return 0;
  const parse = (v: string) => {
    const m = v.match(/^v(\d+)(?:(alpha|beta)(\d+))?$/);
    if (!m) return undefined;
    return { major: Number(m[1]), type: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor: m[3] ? Number(m[3]) : 0 };
  };
  const x = parse(a);
  const y = parse(b);
  if (!x && !y) return a < b ? 1 : -1;
  if (!x) return -1;
  if (!y) return 1;
  if (x.type !== y.type) return x.type - y.type;
  if (x.major !== y.major) return x.major - y.major;
  return x.minor - y.minor;
}

const versionsOf = (crd: CRD): CRDVersion[] => (Array.isArray(crd.spec?.versions) ? crd.spec.versions : []);
const schemaOf = (v: CRDVersion): Schema | undefined => v.schema?.openAPIV3Schema;

type PropertyIssue = { version: string; property: string; validation: Validation; message: string };

function compareVersions(label: string, oldVersion: CRDVersion, newVersion: CRDVersion, removedAsIssue: boolean): PropertyIssue[] {
  const before = flattenSchema(schemaOf(oldVersion));
  const after = flattenSchema(schemaOf(newVersion));
  const issues: PropertyIssue[] = [];
  const removed: string[] = [];
  for (const [path, oldNode] of before) {
    const newNode = after.get(path);
    if (!newNode) {
      removed.push(path);
      continue;
    }
    for (const r of compareProperty(oldNode, newNode)) issues.push({ version: label, property: path, ...r });
  }
  if (removedAsIssue) {
    for (const path of topmost(removed)) {
      issues.push({ version: label, property: path, validation: 'existingFieldRemoval', message: `field present in ${oldVersion.name} is missing in ${newVersion.name}` });
    }
  }
  return issues;
}

/** Paths without their descendants (a removed object is reported once). */
function topmost(paths: string[]): string[] {
  const set = new Set(paths);
  return paths.filter((p) => {
    for (let i = p.length - 1; i > 0; i--) {
      if ((p[i] === '.' || p[i] === '[') && set.has(p.slice(0, i))) return false;
    }
    return true;
  });
}

function servedPairs(crd: CRD): Map<string, [CRDVersion, CRDVersion]> {
  const served = versionsOf(crd)
    .filter((v) => v.served && schemaOf(v))
    .sort((a, b) => compareKubeVersions(a.name, b.name));
  const pairs = new Map<string, [CRDVersion, CRDVersion]>();
  for (let i = 0; i < served.length; i++) for (let j = i + 1; j < served.length; j++) pairs.set(`${served[i]!.name} -> ${served[j]!.name}`, [served[i]!, served[j]!]);
  return pairs;
}

/** Compares an installed (old) CRD with its replacement (new), as OLM's CRD upgrade safety preflight does. */
export function diffCRDs(oldCRD: CRD, newCRD: CRD, options: DiffOptions = {}): CRDDiffResult {
  const name = newCRD.metadata?.name ?? '';
  if ((oldCRD.metadata?.name ?? '') !== name) {
    throw validationError('crd-name-mismatch', `cannot compare CRD "${oldCRD.metadata?.name}" with CRD "${name}"`, { hint: 'diff the same CRD from two releases' });
  }
  const findings: CRDFinding[] = [];
  const crdWide = (validation: Validation, message: string, olm = true) => findings.push({ crd: name, validation, scope: 'crd', message, olm });

  const oldScope = oldCRD.spec?.scope ?? 'Namespaced';
  const newScope = newCRD.spec?.scope ?? 'Namespaced';
  if (oldScope !== newScope) crdWide('scope', `scope changed from ${goQuote(oldScope)} to ${goQuote(newScope)}`);

  const newNames = new Set(versionsOf(newCRD).map((v) => v.name));
  const stored = oldCRD.status?.storedVersions?.length ? oldCRD.status.storedVersions : versionsOf(oldCRD).filter((v) => v.storage).map((v) => v.name);
  const removedStored = stored.filter((v) => !newNames.has(v));
  if (removedStored.length) crdWide('storedVersionRemoval', `stored versions [${removedStored.join(' ')}] removed`);
  if (options.servedVersionRemoval !== false) {
    const removedServed = versionsOf(oldCRD).filter((v) => v.served && !newNames.has(v.name) && !stored.includes(v.name)).map((v) => v.name);
    if (removedServed.length) crdWide('servedVersionRemoval', `served versions [${removedServed.join(' ')}] removed: clients using them break`, false);
  }

  for (const newVersion of versionsOf(newCRD)) {
    const oldVersion = versionsOf(oldCRD).find((v) => v.name === newVersion.name);
    if (!oldVersion) continue;
    const after = flattenSchema(schemaOf(newVersion));
    const removed = [...flattenSchema(schemaOf(oldVersion)).keys()].filter((p) => !after.has(p));
    for (const path of topmost(removed)) crdWide('existingFieldRemoval', `crd/${name} version/${newVersion.name} field/${path} may not be removed`);
  }

  for (const oldVersion of versionsOf(oldCRD)) {
    const newVersion = versionsOf(newCRD).find((v) => v.name === oldVersion.name);
    if (!newVersion) continue;
    for (const issue of compareVersions(oldVersion.name, oldVersion, newVersion, false)) findings.push({ crd: name, scope: 'version', olm: true, ...issue });
  }

  if (newCRD.spec?.conversion?.strategy !== 'Webhook') {
    const key = (i: PropertyIssue) => JSON.stringify([i.version, i.property, i.validation, i.message]);
    const existing = new Set<string>();
    for (const [label, [a, b]] of servedPairs(oldCRD)) for (const i of compareVersions(label, a, b, true)) existing.add(key(i));
    for (const [label, [a, b]] of servedPairs(newCRD)) {
      for (const issue of compareVersions(label, a, b, true)) {
        if (!existing.has(key(issue))) findings.push({ crd: name, scope: 'served', olm: true, ...issue });
      }
    }
  }

  const order = { crd: 0, version: 1, served: 2 };
  findings.sort(
    (a, b) =>
      order[a.scope] - order[b.scope] ||
      (a.version ?? '').localeCompare(b.version ?? '') ||
      (a.property ?? '').localeCompare(b.property ?? '') ||
      a.validation.localeCompare(b.validation) ||
      a.message.localeCompare(b.message),
  );
  return { name, passed: findings.length === 0, findings };
}

export interface CRDSetEntry {
  name: string;
  /** `added` (only in NEW: passes), `removed` (only in OLD: fails), `unchanged`, `safe`, `unsafe`. */
  status: 'added' | 'removed' | 'unchanged' | 'safe' | 'unsafe';
  findings: CRDFinding[];
}

export interface CRDSetDiff {
  passed: boolean;
  crds: CRDSetEntry[];
}

/** Compares two sets of CRDs matched by name: a CRD only in NEW passes; a CRD only in OLD is a removal. */
export function diffCRDSets(oldCRDs: readonly CRD[], newCRDs: readonly CRD[], options: DiffOptions = {}): CRDSetDiff {
  const byName = (list: readonly CRD[]) => new Map(list.map((c) => [c.metadata?.name ?? '', c]));
  const before = byName(oldCRDs);
  const after = byName(newCRDs);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  const crds: CRDSetEntry[] = names.map((name) => {
    const o = before.get(name);
    const n = after.get(name);
    if (!o) return { name, status: 'added', findings: [] };
    if (!n) {
      return {
        name,
        status: 'removed',
        findings: [{ crd: name, validation: 'crdRemoval', scope: 'crd', message: `CRD ${name} was removed: its custom resources and their data would be lost`, olm: false }],
      };
    }
    const result = diffCRDs(o, n, options);
    const same = canonicalJSON(o.spec) === canonicalJSON(n.spec);
    return { name, status: result.passed ? (same ? 'unchanged' : 'safe') : 'unsafe', findings: result.findings };
  });
  return { passed: crds.every((c) => c.findings.length === 0), crds };
}
