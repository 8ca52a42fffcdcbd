/** `olmpub rbac check`: least privilege, declared == used, the installer ServiceAccount's role, OLM's preflight report. */
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import YAML from 'yaml';
import type { Command } from '../command.js';
import { type LoadedObject, loadManifests } from '../../bundle/crddiff/load.js';
import { operatorRbacObjects } from '../../bundle/manifests/index.js';
import { checkRenderable, lintCSVPermissions, readRegistryV1, renderRegistryV1, type RegistryV1Contents } from '../../bundle/registryv1/index.js';
import { readBundleDir } from '../../bundle/release.js';
import { declaredPermissions, type Declaration } from '../../operator/rbac-declarations.js';
import {
  type ApiCall,
  type DeclaredUsedReport,
  type InstallerRole,
  type KubeObject,
  type LintFinding,
  type PolicyRule,
  type PreflightResult,
  RbacAuthorizer,
  bindUnboundRoles,
  compareDeclaredWithUsed,
  describeCall,
  formatPreflight,
  installerManifests,
  lintRules,
  parseApiCalls,
  preflight,
  ruleFromObject,
  ruleString,
  scopedRulesOf,
  serviceAccountUser,
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

/** What one run checked, for the report's first lines. */
interface Checked {
  what: 'model' | 'rules' | 'registry+v1' | 'rendered';
  description: string;
}

interface CheckReport {
  passed: boolean;
  checked: Checked[];
  leastPrivilege?: { findings: LintFinding[] };
  declaredUsed?: DeclaredUsedReport;
  installer?: {
    extension: string;
    namespace: string;
    serviceAccount: string;
    role: KubeObject;
    warnings: string[];
    /** The objects the role was derived from (`Kind namespace/name`), for a registry+v1 bundle what OLM renders. */
    objects: string[];
    emittedTo?: string;
  };
  preflight?: PreflightResult & { message: string };
}

function render(r: CheckReport, out: NodeJS.WritableStream): string {
  const ok = (s: string) => color.green(`✓ ${s}`, out);
  const bad = (s: string) => color.red(`✗ ${s}`, out);
  const lines: string[] = r.checked.map((c) => color.dim(`checking ${c.description}`, out));
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
    lines.push(
      ok(`installer role for ClusterExtension ${i.extension} (ServiceAccount ${i.namespace}/${i.serviceAccount}), derived from ${i.objects.length} object(s): ${((i.role.rules as unknown[]) ?? []).length} rule(s)${i.emittedTo ? `, written to ${i.emittedTo}` : ''}`),
    );
    for (const w of i.warnings) lines.push(color.yellow(`    warning: ${w}`, out));
    if (!i.emittedTo) {
      lines.push(color.dim(`    objects: ${i.objects.join(', ')}`, out));
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

/** The Roles, ClusterRoles and bindings of the install manifests model, as loaded objects placed at their declarations. */
export function modelRbacObjects(): LoadedObject[] {
  return operatorRbacObjects().map((object) => ({ object: object as unknown as Record<string, unknown>, file: 'install manifests model', line: 0, placeOf: () => 'install manifests model' }));
}

/** Where a rule of the model comes from: the `requires(...)` declarations it is made of. */
export function declarationSites(rule: PolicyRule, scope: 'cluster' | 'namespace', decls: readonly Declaration[] = declaredPermissions()): string[] {
  const sites = new Set<string>();
  for (const d of decls) {
    const hit =
      'nonResourceURL' in d
        ? scope === 'cluster' && (rule.nonResourceURLs ?? []).includes(d.nonResourceURL)
        : (d.scope ?? 'cluster') === scope &&
          (rule.apiGroups ?? []).includes(d.group) &&
          (rule.resources ?? []).includes(d.subresource ? `${d.resource}/${d.subresource}` : d.resource) &&
          d.verbs.some((v) => rule.verbs.includes(v));
    if (hit && d.declaredBy) sites.add(relative(process.cwd(), d.declaredBy) || d.declaredBy);
  }
  return [...sites].sort();
}

const objectLabel = (o: KubeObject) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? ''}`;

export const rbacCheck: Command = {
  noun: 'rbac',
  verb: 'check',
  summary: "check the operator's RBAC and a bundle's, and derive the ClusterExtension installer's role",
  description: `
Each check runs when its inputs are given; any finding fails the command (exit 1).

(a) Least privilege of the operator's own RBAC: no "*" in verbs, resources, apiGroups or nonResourceURLs;
    no escalate, bind or impersonate; no Secrets access from a ClusterRole bound cluster-wide.
    Without --rules and --bundle the rules come from the install manifests model (the requires(...)
    declarations of operator/ plus the leader-election and metrics roles); --rules FILE checks Role and
    ClusterRole manifests instead (optionally with their bindings). With --used, declared == used both
    ways: every API call the code makes must be allowed by the rules, and every rule must be exercised by
    some call. --used lists calls as YAML/JSON ({verb, group, resource, namespace?, name?, subresource?},
    {verb, path}, {method, url} or "GET /apis/apps/v1/namespaces/x/deployments"), or is a kube-apiserver
    audit log (JSON lines) or audit EventList.

(b) --bundle DIR: a registry+v1 bundle directory (manifests/ with a ClusterServiceVersion, metadata/),
    such as the bundle/ folder of "olmpub bundle build". The CSV's permissions and clusterPermissions get
    the least-privilege lint (findings name the CSV file and line, the permission set and the rule index;
    OLM v1 installs AllNamespaces, so permissions count as cluster-wide). DIR may instead hold rendered
    manifests (no CSV): the objects a ClusterExtension installs, used as they are.

(c) With --extension NAME and --namespace NS (and --bundle): the minimal ClusterRole the ServiceAccount of
    an OLM <= 1.10 ClusterExtension needs to install the bundle. For a registry+v1 bundle it is derived from
    the objects OLM 1.10 renders from it (ServiceAccounts, the (Cluster)Roles and bindings with OLM's hashed
    names, CRDs, Deployments, webhook configurations and Services, cert-manager Issuer and Certificate):
    per resource create, list, watch; get, update, patch, delete on the objects' names; update on
    clusterextensions/finalizers for the ClusterExtension; bind on roles the bundle binds without shipping;
    and every rule the bundle grants (RBAC escalation prevention: to grant a rule you must hold it).
    --emit-installer-role FILE writes the ServiceAccount, ClusterRole and ClusterRoleBinding as YAML;
    otherwise the role is printed. (OLM >= 1.11 ignores spec.serviceAccount and installs as cluster-admin.)

(d) With --service-account-rules FILE (the Roles/ClusterRoles and bindings the ServiceAccount has; roles no
    binding references count as bound to it), the missing permissions in the format OLM 1.10's
    PreflightPermissions check reports:
      pre-authorization failed: service account requires the following permissions to manage cluster extension:
        Namespace:"" APIGroups:[apps] Resources:[deployments] Verbs:[list,watch]`,
  options: {
    rules: { type: 'string', value: 'FILE', description: "the operator's Role/ClusterRole manifests (file or directory) (default: the install manifests model)" },
    used: { type: 'string', value: 'FILE', description: 'API calls the code makes (YAML/JSON list or audit log) for declared == used' },
    bundle: { type: 'string', value: 'DIR', description: 'a registry+v1 bundle directory, or rendered manifests the ClusterExtension installs' },
    extension: { type: 'string', value: 'NAME', description: 'ClusterExtension name: derive its installer role (with --bundle)' },
    namespace: { type: 'string', value: 'NS', description: 'ClusterExtension spec.namespace, the install namespace (with --extension)' },
    'service-account': { type: 'string', value: 'NAME', description: 'installer ServiceAccount name (default: <extension>-installer)' },
    'emit-installer-role': { type: 'string', value: 'FILE', description: 'write the installer ServiceAccount, ClusterRole and ClusterRoleBinding here' },
    'service-account-rules': { type: 'string', value: 'FILE', description: "RBAC the installer ServiceAccount holds; reports what OLM's preflight would find missing" },
  },
  examples: [
    'olmpub rbac check',
    'olmpub rbac check --used audit.log',
    'olmpub rbac check --rules config/rbac/role.yaml --used calls.yaml',
    'olmpub rbac check --bundle out/bundle',
    'olmpub rbac check --bundle out/bundle --extension inference --namespace inference-system --emit-installer-role installer.yaml',
    'olmpub rbac check --bundle out/bundle --extension inference --namespace inference-system --service-account-rules sa-rbac.yaml -o json',
  ],
  structuredOutput: true,
  async run(ctx) {
    const v = ctx.values as Record<string, string | undefined>;
    const installer = Boolean(v.extension || v.namespace);
    if (installer && (!v.extension || !v.namespace)) throw usageError('bad-arguments', '--extension and --namespace go together (the ClusterExtension name and its install namespace)');
    if (installer && !v.bundle) throw usageError('bad-arguments', '--extension and --namespace need --bundle DIR (the bundle to install)');
    if ((v['service-account-rules'] || v['emit-installer-role']) && !installer) {
      throw usageError('bad-arguments', '--service-account-rules and --emit-installer-role need --bundle DIR, --extension NAME and --namespace NS');
    }
    if (v.used && v.bundle && !v.rules) {
      throw usageError('bad-arguments', "--used compares the operator's own rules: give --rules, or leave --bundle out to use the install manifests model");
    }

    const report: CheckReport = { passed: true, checked: [] };
    const addFindings = (findings: LintFinding[]) => {
      report.leastPrivilege = { findings: [...(report.leastPrivilege?.findings ?? []), ...findings] };
      if (findings.length) report.passed = false;
    };

    // (a) The operator's own RBAC: --rules, or the install manifests model when no bundle is given.
    if (v.rules || !v.bundle) {
      let loaded: LoadedObject[];
      if (v.rules) {
        loaded = (await loadManifests([v.rules])).filter((o) => RBAC_KINDS.has(String(o.object.kind)));
        if (!loaded.some((o) => o.object.kind === 'Role' || o.object.kind === 'ClusterRole')) {
          throw usageError('no-rules', `${v.rules}: no Role or ClusterRole found`, { hint: "pass the operator's RBAC manifests" });
        }
        report.checked.push({ what: 'rules', description: `the RBAC manifests in ${v.rules}` });
      } else {
        loaded = modelRbacObjects();
        report.checked.push({ what: 'model', description: `the operator's RBAC from the install manifests model (${loaded.length} Roles, ClusterRoles and bindings)` });
      }
      addFindings(
        lintRules(
          loaded.map((o) => ({
            object: o.object as KubeObject,
            place: v.rules ? `${o.file}:${o.line}` : o.file,
            rulePlaces: Array.isArray(o.object.rules) ? o.object.rules.map((_, i) => o.placeOf(['rules', i])) : [],
          })),
        ),
      );
      if (v.used) {
        let scoped = scopedRulesOf(loaded);
        if (!v.rules) {
          const decls = declaredPermissions();
          scoped = scoped.map((s) => {
            const sites = declarationSites(s.rule, s.namespace === undefined ? 'cluster' : 'namespace', decls);
            return sites.length ? { ...s, place: `${s.place} (declared at ${sites.join(', ')})` } : s;
          });
        }
        report.declaredUsed = compareDeclaredWithUsed(scoped, await loadApiCalls(v.used));
        if (report.declaredUsed.undeclared.length || report.declaredUsed.unused.length) report.passed = false;
      }
    }

    // (b) A bundle: registry+v1 (its CSV's permissions) or rendered manifests.
    if (v.bundle) {
      const loaded = await loadManifests([v.bundle]);
      const csvLoaded = loaded.find((o) => o.object.kind === 'ClusterServiceVersion');
      let objects: KubeObject[];
      let contents: RegistryV1Contents | undefined;
      if (csvLoaded) {
        contents = readRegistryV1(await readBundleDir(v.bundle));
        const csvFile = join(v.bundle, contents.csv.path);
        const csvAt = loaded.find((o) => o.object.kind === 'ClusterServiceVersion' && o.file === csvFile) ?? csvLoaded;
        report.checked.push({ what: 'registry+v1', description: `the registry+v1 bundle ${v.bundle} (ClusterServiceVersion ${contents.csv.object.metadata?.name ?? ''}, ${csvFile})` });
        addFindings(lintCSVPermissions({ ...contents.csv, path: csvFile }, (path) => csvAt.placeOf(path)));
        objects = [];
      } else {
        objects = loaded.map((o) => o.object as KubeObject).filter((o) => o.kind);
        report.checked.push({ what: 'rendered', description: `the rendered manifests in ${v.bundle} (${objects.length} objects)` });
        if (!installer) throw usageError('bad-arguments', `${v.bundle} holds no ClusterServiceVersion: rendered manifests need --extension NAME and --namespace NS`, { hint: 'pass a registry+v1 bundle directory, or the ClusterExtension name and namespace' });
      }

      // (c) The installer role, from what OLM 1.10 renders (registry+v1) or from the rendered manifests.
      if (installer) {
        if (contents) {
          const problems = checkRenderable(contents, { certProvider: 'cert-manager' });
          if (problems.length) throw validationError('bundle-not-installable', `OLM v1 would not install ${v.bundle} (${problems.length} problem(s))`, { children: problems });
          objects = renderRegistryV1(contents, { installNamespace: v.namespace!, certProvider: 'cert-manager', olmVersion: '1.10' });
        }
        const input = { objects, extensionName: v.extension!, installNamespace: v.namespace! };
        const serviceAccount = v['service-account'] ?? `${v.extension}-installer`;
        const { objects: manifests, role } = installerManifests(input, { serviceAccountName: serviceAccount });
        report.installer = { ...installerSummary(input.extensionName, input.installNamespace, serviceAccount, role), objects: objects.map(objectLabel) };
        if (v['emit-installer-role']) {
          await writeFileAtomic(v['emit-installer-role'], yamlStream(manifests, false));
          report.installer.emittedTo = v['emit-installer-role'];
        }
        // (d) OLM 1.10's pre-authorization against the RBAC the ServiceAccount holds.
        if (v['service-account-rules']) {
          const held = (await loadManifests([v['service-account-rules']])).map((o) => o.object as KubeObject).filter((o) => RBAC_KINDS.has(String(o.kind)));
          const authorizer = new RbacAuthorizer(bindUnboundRoles(held, input.installNamespace, serviceAccount));
          const result = preflight(input, authorizer, serviceAccount, serviceAccountUser(input.installNamespace, serviceAccount));
          report.preflight = { ...result, message: formatPreflight(result) };
          if (report.preflight.message) report.passed = false;
        }
      }
    }
    emit(ctx.output, report, () => render(report, ctx.stdout), ctx.stdout);
    return report.passed ? 0 : 1;
  },
};

function installerSummary(extension: string, namespace: string, serviceAccount: string, role: InstallerRole): Omit<NonNullable<CheckReport['installer']>, 'objects'> {
  return { extension, namespace, serviceAccount, role: role.clusterRole, warnings: role.warnings };
}

export const RBAC_COMMANDS: Command[] = [rbacCheck];
