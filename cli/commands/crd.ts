/** `olmpub crd diff OLD NEW`: CRD upgrade safety with the crdify rules OLM v1 enforces. */
import type { Command } from '../command.js';
import { type CRD, type CRDSetDiff, diffCRDSets, formatFinding, loadManifests } from '../../bundle/crddiff/index.js';
import { usageError } from '../../lib/errors.js';
import { color, emit } from '../../lib/output.js';

async function loadCRDs(path: string): Promise<CRD[]> {
  const objects = await loadManifests([path]);
  const crds = objects.filter((o) => o.object.kind === 'CustomResourceDefinition').map((o) => o.object as CRD);
  const seen = new Map<string, number>();
  for (const c of crds) seen.set(c.metadata?.name ?? '', (seen.get(c.metadata?.name ?? '') ?? 0) + 1);
  const dup = [...seen].find(([, n]) => n > 1);
  if (dup) throw usageError('duplicate-crd', `${path}: CRD "${dup[0]}" appears ${dup[1]} times`, { hint: 'each side must hold each CRD once' });
  return crds;
}

export function renderCRDDiff(result: CRDSetDiff, stream: NodeJS.WritableStream = process.stdout): string {
  const lines: string[] = [];
  if (result.crds.length === 0) lines.push('no CustomResourceDefinitions found on either side');
  for (const c of result.crds) {
    const label =
      c.status === 'unsafe' || c.status === 'removed'
        ? color.red(`✗ ${c.name}`, stream)
        : color.green(`✓ ${c.name}`, stream);
    const what = { added: 'new CRD (nothing to break)', removed: 'removed', unchanged: 'unchanged', safe: 'compatible changes only', unsafe: `${c.findings.length} incompatible change(s)` }[c.status];
    lines.push(`${label}  ${color.dim(what, stream)}`);
    for (const f of c.findings) lines.push(`    ${formatFinding(f)}${f.olm ? '' : color.dim(' (olmpub check; OLM itself does not block this)', stream)}`);
  }
  const bad = result.crds.filter((c) => c.findings.length).length;
  lines.push('', result.passed ? color.green('CRD upgrade is safe', stream) : color.red(`CRD upgrade is unsafe: ${bad} CRD(s) with incompatible changes`, stream));
  return lines.join('\n');
}

export const crdDiff: Command = {
  noun: 'crd',
  verb: 'diff',
  args: 'OLD NEW',
  summary: 'check that NEW CRDs can replace OLD ones on a cluster (OLM v1 CRD upgrade safety)',
  description: `
OLD and NEW are files or directories of manifests (YAML, multi-document, or JSON; directories are read
recursively). CustomResourceDefinitions are matched by name; other objects are ignored. A CRD only in NEW
passes; a CRD only in OLD fails (its custom resources would be lost).

The rules are crdify's (sigs.k8s.io/crdify) with the settings OLM v1's CRD upgrade safety preflight uses:
scope change, removal of a stored version (status.storedVersions, or the storage version when the file has
no status), removal of an existing field, and per property of each version and between the served versions
(skipped with webhook conversion): default added/changed/removed, enum constraint added or values removed
(added values are fine), newly required fields, type changed, maximum/maxItems/maxLength/maxProperties
added or decreased, minimum/minItems/minLength/minProperties added or increased, pattern added/changed/
removed, nullable added or removed. Description changes are ignored; any other change to a property
(x-kubernetes-*, format, allOf/anyOf/oneOf, ...) is an "unhandled" error, as OLM is fail-closed.
olmpub also fails a served version that disappears (marked as not blocked by OLM itself).

Each finding is one line in OLM's shape:
  validating upgrade for CRD "<name>": <version>: <property path>: <validation>: <message>

Exit status: 0 safe, 1 unsafe, 2 usage error.`,
  examples: ['olmpub crd diff release-1.0/manifests release-1.1/manifests', 'olmpub crd diff old-crd.yaml new-crd.yaml -o json'],
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length !== 2) throw usageError('bad-arguments', 'crd diff takes exactly two arguments: OLD NEW', { hint: 'run "olmpub crd diff --help"' });
    const [oldPath, newPath] = ctx.positionals as [string, string];
    const result = diffCRDSets(await loadCRDs(oldPath), await loadCRDs(newPath));
    const data = {
      passed: result.passed,
      crds: result.crds.map((c) => ({ ...c, messages: c.findings.map(formatFinding) })),
    };
    emit(ctx.output, data, () => renderCRDDiff(result, ctx.stdout), ctx.stdout);
    return result.passed ? 0 : 1;
  },
};

export const CRD_COMMANDS: Command[] = [crdDiff];
