/** `olmpub rbac check`: least privilege, declared == used, the installer ServiceAccount's role, OLM's preflight report. */
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import type { Command } from '../command.js';
import { type LoadedObject, loadManifests } from '../../bundle/crddiff/load.js';
import {
  type ApiCall,
  type DeclaredUsedReport,
  type InstallerRole,
  type KubeObject,
  type LintFinding,
  type PreflightResult,
  type ScopedRule,
  RbacAuthorizer,
  compareDeclaredWithUsed,
  describeCall,
  formatPreflight,
  installerManifests,
  lintRules,
  parseApiCalls,
  preflight,
  ruleFromObject,
  ruleString,
  serviceAccountUser,
  toBinding,
  toRole,
} from '../../bundle/rbac/index.js';
import { yamlStream } from '../../lib/canonical.js';
import { OlmpubError, usageError, validationError } from '../../lib/errors.js';
import { writeFileAtomic } from '../../lib/fsx.js';
import { color, emit } from '../../lib/output.js';

const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** Reads API calls: YAML/JSON (a list, `{calls: [...]}` or an audit EventList) or JSON lines (an audit log). */
export async function loadApiCalls(path: string): Promise<ApiCall[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw usageError('path-not-found', `${path}: cannot read the file`, { hint: 'pass a file listing the API calls the code makes' });
  }
  const lines = text.split('\n').filter((l) => l.trim());
  const jsonLines = lines.length > 1 && lines.every((l) => l.trim().startsWith('{') && l.trim().endsWith('}'));
  try {
    if (jsonLines) return lines.flatMap((l, i) => parseApiCalls([JSON.parse(l)], `${path}:${i + 1}`)).map((c) => ({ ...c, source: c.source!.replace(/\[0\]$/, '') }));
    const docs = YAML.parseAllDocuments(text);
    const values = (Array.isArray(docs) ? docs : [docs]).map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
    return values.flatMap((v, i) => parseApiCalls(v, values.length > 1 ? `${path}#${i + 1}` : path));
  } catch (err) {
    if (err instanceof OlmpubError) throw err;
    throw validationError('bad-api-calls', `${path}: ${(err as Error).message}`, { place: path, hint: 'list calls as {verb, group, resource, namespace?, name?}, {verb, path}, {method, url} or audit events' });
  }
}

/** Scoped rules of the Roles/ClusterRoles among `objects`, with their file:line. */
export function scopedRulesOf(objects: LoadedObject[]): ScopedRule[] {
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

interface CheckReport {
  passed: boolean;
  leastPrivilege?: { findings: LintFinding[] };
  declaredUsed?: DeclaredUsedReport;
  installer?: { extension: string; namespace: string; serviceAccount: string; role: KubeObject; warnings: string[]; emittedTo?: string };
  preflight?: PreflightResult & { message: string };
}

function render(r: CheckReport, out: NodeJS.WritableStream): string {
  const ok = (s: string) => color.green(`✓ ${s}`, out);
  const bad = (s: string) => color.red(`✗ ${s}`, out);
  const lines: string[] = [];
  if (r.leastPrivilege) {
    const f = r.leastPrivilege.findings;
    lines.push(f.length ? bad(`least privilege: ${f.length} finding(s)`) : ok('least privilege: no wildcards, no escalate/bind/impersonate, no cluster-wide Secrets'));
    for (const x of f) lines.push(`    ${x.place}: ${x.message} [${x.code}]`, `        hint: ${x.hint}`);
  }
  if (r.declaredUsed) {
    const { undeclared, unused } = r.declaredUsed;
    const n = undeclared.length + unused.length;
    lines.push(n ? bad(`declared == used: ${undeclared.length} call(s) not declared, ${unused.length} declared permission(s) unused`) : ok('declared == used'));
    for (const c of undeclared) lines.push(`    ${c.source ?? ''}: ${describeCall(c)} is not allowed by the declared rules`, '        hint: declare it next to the code that makes the call (requires(...)), or stop making the call');
    for (const u of unused) lines.push(`    ${u.place ?? ''}: ${ruleString(u.rule)}${u.namespace ? ` in ${u.namespace}` : ''} is never used`, '        hint: remove it from the role and from the declarations');
  }
  if (r.installer) {
    const i = r.installer;
    lines.push(ok(`installer role for ClusterExtension ${i.extension} (ServiceAccount ${i.namespace}/${i.serviceAccount}): ${((i.role.rules as unknown[]) ?? []).length} rule(s)${i.emittedTo ? `, written to ${i.emittedTo}` : ''}`));
    for (const w of i.warnings) lines.push(color.yellow(`    warning: ${w}`, out));
    if (!i.emittedTo) {
      for (const r of (i.role.rules as unknown[]) ?? []) lines.push(`    ${ruleString(ruleFromObject(r))}`);
      lines.push(color.dim('    (write it with --emit-installer-role FILE, or -o yaml)', out));
    }
  }
  if (r.preflight) {
    lines.push(r.preflight.message ? bad('OLM 1.10 pre-authorization would fail:') : ok('OLM 1.10 pre-authorization passes for the ServiceAccount'));
    if (r.preflight.message) lines.push(...r.preflight.message.split('\n').map((l) => `    ${l}`));
  }
  lines.push('', r.passed ? color.green('rbac check passed', out) : color.red('rbac check failed', out));
  return lines.join('\n');
}

export const rbacCheck: Command = {
  noun: 'rbac',
  verb: 'check',
  summary: "check the operator's RBAC and derive the ClusterExtension installer's role",
  description: `
Three checks, each run when its inputs are given; any finding fails the command (exit 1).

(a) Least privilege of the operator's own RBAC (--rules: Role/ClusterRole manifests, optionally with their
    bindings): no "*" in verbs, resources, apiGroups or nonResourceURLs; no escalate, bind or impersonate;
    no Secrets access from a ClusterRole bound cluster-wide. With --used, declared == used both ways: every
    API call the code makes must be allowed by the rules, and every rule must be exercised by some call.
    --used lists calls as YAML/JSON ({verb, group, resource, namespace?, name?, subresource?}, {verb, path},
    {method, url} or "GET /apis/apps/v1/namespaces/x/deployments"), or is a kube-apiserver audit log
    (JSON lines) or audit EventList.

(b) The minimal ClusterRole the ServiceAccount of an OLM <= 1.10 ClusterExtension needs to install the
    bundle (--bundle DIR of rendered manifests, --extension NAME, --namespace NS): per resource create,
    list, watch; get, update, patch, delete on the objects' names; update on clusterextensions/finalizers
    for the ClusterExtension; bind on roles the bundle binds without shipping; and every rule the bundle
    grants (RBAC escalation prevention: to grant a rule you must hold it). --emit-installer-role FILE
    writes the ServiceAccount, ClusterRole and ClusterRoleBinding as YAML; otherwise the role is printed.
    (OLM >= 1.11 ignores spec.serviceAccount and installs as cluster-admin.)

(c) With --service-account-rules FILE (the Roles/ClusterRoles and bindings the ServiceAccount has; roles no
    binding references count as bound to it), the missing permissions in the format OLM 1.10's
    PreflightPermissions check reports:
      pre-authorization failed: service account requires the following permissions to manage cluster extension:
        Namespace:"" APIGroups:[apps] Resources:[deployments] Verbs:[list,watch]

Later this command will default to the operator's own bundle.`,
  options: {
    rules: { type: 'string', value: 'FILE', description: "the operator's Role/ClusterRole manifests (file or directory)" },
    used: { type: 'string', value: 'FILE', description: 'API calls the code makes (YAML/JSON list or audit log) for declared == used' },
    bundle: { type: 'string', value: 'DIR', description: 'rendered bundle manifests the ClusterExtension installs' },
    extension: { type: 'string', value: 'NAME', description: 'ClusterExtension name (with --bundle)' },
    namespace: { type: 'string', value: 'NS', description: 'ClusterExtension spec.namespace, the install namespace (with --bundle)' },
    'service-account': { type: 'string', value: 'NAME', description: 'installer ServiceAccount name (default: <extension>-installer)' },
    'emit-installer-role': { type: 'string', value: 'FILE', description: 'write the installer ServiceAccount, ClusterRole and ClusterRoleBinding here' },
    'service-account-rules': { type: 'string', value: 'FILE', description: "RBAC the installer ServiceAccount holds; reports what OLM's preflight would find missing" },
  },
  examples: [
    'olmpub rbac check --rules config/rbac/role.yaml --used calls.yaml',
    'olmpub rbac check --bundle out/manifests --extension inference --namespace inference-system --emit-installer-role installer.yaml',
    'olmpub rbac check --bundle out/manifests --extension inference --namespace inference-system --service-account-rules sa-rbac.yaml -o json',
  ],
  structuredOutput: true,
  async run(ctx) {
    const v = ctx.values as Record<string, string | undefined>;
    if (!v.rules && !v.bundle) throw usageError('bad-arguments', 'nothing to check: give --rules and/or --bundle', { hint: 'run "olmpub rbac check --help"' });
    if (v.used && !v.rules) throw usageError('bad-arguments', '--used needs --rules (the declared rules to compare with)');
    if (v.bundle && (!v.extension || !v.namespace)) throw usageError('bad-arguments', '--bundle needs --extension NAME and --namespace NS');
    if ((v['service-account-rules'] || v['emit-installer-role']) && !v.bundle) throw usageError('bad-arguments', '--service-account-rules and --emit-installer-role need --bundle');

    const report: CheckReport = { passed: true };
    if (v.rules) {
      const loaded = (await loadManifests([v.rules])).filter((o) => RBAC_KINDS.has(String(o.object.kind)));
      if (!loaded.some((o) => o.object.kind === 'Role' || o.object.kind === 'ClusterRole')) {
        throw usageError('no-rules', `${v.rules}: no Role or ClusterRole found`, { hint: "pass the operator's RBAC manifests" });
      }
      const findings = lintRules(
        loaded.map((o) => ({
          object: o.object as KubeObject,
          place: `${o.file}:${o.line}`,
          rulePlaces: Array.isArray(o.object.rules) ? o.object.rules.map((_, i) => o.placeOf(['rules', i])) : [],
        })),
      );
      report.leastPrivilege = { findings };
      if (findings.length) report.passed = false;
      if (v.used) {
        report.declaredUsed = compareDeclaredWithUsed(scopedRulesOf(loaded), await loadApiCalls(v.used));
        if (report.declaredUsed.undeclared.length || report.declaredUsed.unused.length) report.passed = false;
      }
    }
    if (v.bundle) {
      const objects = (await loadManifests([v.bundle])).map((o) => o.object as KubeObject);
      const csv = objects.find((o) => o.kind === 'ClusterServiceVersion');
      if (csv) {
        throw usageError('bundle-not-rendered', `${v.bundle}: contains a ClusterServiceVersion (${csv.metadata?.name}); the installer role is derived from the objects OLM renders from it`, {
          hint: 'pass the rendered manifests (the Deployment, ServiceAccount, Roles, bindings and CRDs), not the registry+v1 bundle directory',
        });
      }
      const input = { objects: objects.filter((o) => o.kind), extensionName: v.extension!, installNamespace: v.namespace! };
      const serviceAccount = v['service-account'] ?? `${v.extension}-installer`;
      const { objects: manifests, role } = installerManifests(input, { serviceAccountName: serviceAccount });
      report.installer = installerSummary(input.extensionName, input.installNamespace, serviceAccount, role);
      if (v['emit-installer-role']) {
        await writeFileAtomic(v['emit-installer-role'], yamlStream(manifests, false));
        report.installer.emittedTo = v['emit-installer-role'];
      }
      if (v['service-account-rules']) {
        const held = (await loadManifests([v['service-account-rules']])).map((o) => o.object as KubeObject).filter((o) => RBAC_KINDS.has(String(o.kind)));
        const authorizer = new RbacAuthorizer(bindUnboundRoles(held, input.installNamespace, serviceAccount));
        const result = preflight(input, authorizer, serviceAccount, serviceAccountUser(input.installNamespace, serviceAccount));
        report.preflight = { ...result, message: formatPreflight(result) };
        if (report.preflight.message) report.passed = false;
      }
    }
    emit(ctx.output, report, () => render(report, ctx.stdout), ctx.stdout);
    return report.passed ? 0 : 1;
  },
};

function installerSummary(extension: string, namespace: string, serviceAccount: string, role: InstallerRole): NonNullable<CheckReport['installer']> {
  return { extension, namespace, serviceAccount, role: role.clusterRole, warnings: role.warnings };
}

/** Roles and ClusterRoles that no binding in the file references are bound to the ServiceAccount. */
export function bindUnboundRoles(objects: KubeObject[], namespace: string, serviceAccount: string): KubeObject[] {
  const bindings = objects.map(toBinding).filter((b) => b !== undefined);
  const extra: KubeObject[] = [];
  for (const o of objects) {
    const role = toRole(o);
    if (!role || bindings.some((b) => b.roleRef.kind === role.kind && b.roleRef.name === role.name)) continue;
    const subjects = [{ kind: 'ServiceAccount', name: serviceAccount, namespace }];
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name: role.name };
    extra.push(
      role.kind === 'ClusterRole'
        ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `olmpub-implied-${role.name}` }, roleRef, subjects }
        : { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `olmpub-implied-${role.name}`, namespace: role.namespace || namespace }, roleRef, subjects },
    );
  }
  return [...objects, ...extra];
}

export const RBAC_COMMANDS: Command[] = [rbacCheck];
