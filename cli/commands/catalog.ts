/**
 * `olmpub catalog render|validate|graph|promote|deprecate|upgrades`: the File-Based Catalog, from the
 * catalog template to what OLM v1 would install next.
 */
import { stat } from 'node:fs/promises';
import type { Command, CommandContext } from '../command.js';
import { formatErrorTree, usageError } from '../../lib/errors.js';
import { writeFileAtomic } from '../../lib/fsx.js';
import { color, emit, table } from '../../lib/output.js';
import { loadCatalogDir } from '../../catalog/fbc/load.js';
import type { DeclarativeConfig } from '../../catalog/fbc/types.js';
import { validateCatalog } from '../../catalog/validate/validate.js';
import { renderMermaid } from '../../catalog/graph/mermaid.js';
import { buildGraph, renderHtml, renderSvg } from '../../catalog/graph/svg.js';
import { resolveUpgrade, type UpgradePolicy } from '../../catalog/resolve/resolve.js';
import type { BundleInfo } from '../../catalog/template/bundleinfo.js';
import { renderTemplate } from '../../catalog/template/render.js';
import type { EditResult, TemplateEdit } from '../../catalog/template/edit.js';
import { bundleInfosFromDirs, editTemplateFile, readBundleInfoFile, readTemplateFile, renderTemplateFile } from '../../catalog/io.js';

const DEFAULT_TEMPLATE = 'catalog/template.yaml';
const DEFAULT_OUT = 'out/catalog';

const TEMPLATE_OPTION = { type: 'string' as const, short: 't', value: 'FILE', description: 'the catalog template', default: DEFAULT_TEMPLATE };

const list = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === 'string' ? [v] : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

async function bundleInfos(ctx: CommandContext): Promise<BundleInfo[]> {
  const out: BundleInfo[] = [];
  for (const f of list(ctx.values['bundle-info'])) out.push(...(await readBundleInfoFile(f)));
  out.push(...(await bundleInfosFromDirs(list(ctx.values.bundles))));
  return out;
}

async function requireDir(dir: string, what: string): Promise<void> {
  try {
    if ((await stat(dir)).isDirectory()) return;
  } catch {
    // fall through
  }
  throw usageError('no-catalog-dir', `${what} ${dir} is not a directory`, { hint: `render it first ("olmpub catalog render --out ${dir}") or pass the catalog directory` });
}

/** The FBC to look at: a rendered directory (default out/catalog) or, with --template, a preview render. */
async function catalogSource(ctx: CommandContext): Promise<{ config: DeclarativeConfig; label: string }> {
  const template = str(ctx.values.template);
  if (template) {
    const { template: tpl } = await readTemplateFile(template);
    const rendered = renderTemplate(tpl, { bundles: await bundleInfos(ctx), allowMissingBundles: true });
    return { config: rendered.config, label: template };
  }
  const dir = ctx.positionals[0] ?? DEFAULT_OUT;
  await requireDir(dir, 'catalog directory');
  const loaded = await loadCatalogDir(dir);
  if (loaded.problems.length) {
    const report = validateCatalog(loaded, { rules: 'opm' });
    throw report.error!;
  }
  return { config: loaded.config, label: dir };
}

const BUNDLE_OPTIONS = {
  'bundle-info': { type: 'string' as const, multiple: true, value: 'FILE', description: 'bundle facts: YAML/JSON list of {name, version, image?, properties, relatedImages}' },
  bundles: { type: 'string' as const, multiple: true, value: 'DIR', description: 'registry+v1 bundle directories (or directories holding them) to read bundle facts from' },
};

// ---------------------------------------------------------------------------------------------

export const catalogRender: Command = {
  noun: 'catalog',
  verb: 'render',
  summary: 'render the catalog template into a File-Based Catalog directory',
  description: `
Reads the catalog template (docs/catalog-template.md), derives the channels and upgrade edges, validates
the result with every opm rule and the OLM v1 limits, and writes <out>/<package>/catalog.json (or .yaml),
replacing the directory atomically: a failed render leaves the previous catalog untouched.

Each version's bundle facts (CSV name, olm.gvk, olm.csv.metadata, relatedImages) come from --bundle-info
files or --bundles directories (registry+v1 bundle directories, e.g. what "olmpub bundle build" writes).
--allow-missing-bundles stands in "<package>.v<version>" bundles with only the olm.package property for
versions without facts: fine for previews, not for publishing.

Output is deterministic: the same template and bundles give byte-identical files, in the layout and field
order "opm render" writes.`,
  examples: [
    'olmpub catalog render --bundles out/bundles',
    'olmpub catalog render --template catalog/template.yaml --bundle-info bundles.yaml --out out/catalog --format yaml',
    'olmpub catalog render --allow-missing-bundles --out /tmp/preview',
  ],
  options: {
    template: TEMPLATE_OPTION,
    out: { type: 'string', value: 'DIR', description: 'where to write the catalog', default: DEFAULT_OUT },
    format: { type: 'string', value: 'json|yaml', description: 'file format', default: 'json' },
    ...BUNDLE_OPTIONS,
    'allow-missing-bundles': { type: 'boolean', description: 'use stand-in bundles for versions without bundle facts' },
  },
  structuredOutput: true,
  async run(ctx) {
    const format = str(ctx.values.format) ?? 'json';
    if (format !== 'json' && format !== 'yaml') throw usageError('bad-format', `unknown --format ${format}`, { hint: 'use json or yaml' });
    if (ctx.positionals.length) throw usageError('bad-arguments', 'catalog render takes no arguments', { hint: 'use --template FILE and --out DIR' });
    const templatePath = str(ctx.values.template)!;
    const outDir = str(ctx.values.out)!;
    const result = await renderTemplateFile(templatePath, {
      bundles: await bundleInfos(ctx),
      allowMissingBundles: ctx.values['allow-missing-bundles'] === true,
      outDir,
      format,
    });
    const data = {
      out: outDir,
      files: result.files,
      defaultChannel: result.defaultChannel,
      channels: result.channels.map((c) => ({ name: c.name, head: c.head, versions: c.entries.map((e) => e.version) })),
      warnings: result.report.warnings.map((w) => w.toJSON()),
    };
    emit(ctx.output, data, () => {
      const lines = [
        `${color.green('rendered', ctx.stdout)} ${templatePath} → ${result.files!.map((f) => `${outDir}/${f}`).join(', ')}`,
        '',
        table(
          ['CHANNEL', 'HEAD', 'VERSIONS'],
          result.channels.map((c) => [c.name + (c.name === result.defaultChannel ? ' (default)' : ''), c.head, c.entries.map((e) => e.version).join(' ')]),
        ),
      ];
      for (const w of result.report.warnings) lines.push(color.yellow(`warning: ${w.place ? `${w.place}: ` : ''}${w.message}`, ctx.stdout));
      return lines.join('\n');
    }, ctx.stdout);
  },
};

export const catalogValidate: Command = {
  noun: 'catalog',
  verb: 'validate',
  args: '[DIR]',
  summary: 'check a File-Based Catalog with every opm validate rule and the OLM v1 limits',
  description: `
Loads DIR (default ${DEFAULT_OUT}) the way opm does (every file of any extension, except what .indexignore
files exclude; JSON or YAML streams) and applies:
  - every "opm validate" rule, with opm's messages: packages, channels (one head, no cycle, nothing
    stranded), bundles (exactly one olm.package, semver versions, image references), unique versions,
    default channel, deprecations;
  - the OLM v1 limits: no olm.package.required / olm.gvk.required / olm.constraint properties,
    AllNamespaces supported (when the install modes are known), no APIService definitions;
  - reachability: every version in a channel can reach the head along replaces/skips/skipRange edges.
Problems print as a tree (package → channel → bundle) with the file and line of each. --opm-rules applies
opm's rules only (what "opm validate" would say).

Exit status: 0 valid, 1 invalid, 2 usage error. With -o json|yaml the result is {passed, error} like
"opm validate -o json", plus warnings.`,
  examples: ['olmpub catalog validate', 'olmpub catalog validate out/catalog -o json', 'olmpub catalog validate ./catalog --opm-rules'],
  options: {
    'opm-rules': { type: 'boolean', description: "only opm validate's rules (no OLM v1 limits, no reachability)" },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length > 1) throw usageError('bad-arguments', 'catalog validate takes at most one directory', { hint: 'olmpub catalog validate DIR' });
    const dir = ctx.positionals[0] ?? DEFAULT_OUT;
    await requireDir(dir, 'catalog directory');
    const loaded = await loadCatalogDir(dir);
    const report = validateCatalog(loaded, { rules: ctx.values['opm-rules'] ? 'opm' : 'olmv1' });
    const data = {
      passed: report.passed,
      ...(report.error ? { error: { ...report.error.toJSON(), message: formatErrorTree(report.error) } } : {}),
      warnings: report.warnings.map((w) => w.toJSON()),
    };
    emit(ctx.output, data, () => {
      const lines: string[] = [];
      if (report.passed) {
        const pkgs = loaded.config.packages.length;
        lines.push(color.green(`${dir}: valid`, ctx.stdout) + ` (${pkgs} package${pkgs === 1 ? '' : 's'}, ${loaded.config.channels.length} channels, ${loaded.config.bundles.length} bundles)`);
      } else lines.push(formatErrorTree(report.error!));
      for (const w of report.warnings) lines.push(color.yellow(`warning: ${w.place ? `${w.place}: ` : ''}${w.message}`, ctx.stdout));
      return lines.join('\n');
    }, ctx.stdout);
    return report.passed ? 0 : 1;
  },
};

export const catalogGraph: Command = {
  noun: 'catalog',
  verb: 'graph',
  args: '[DIR]',
  summary: 'print the upgrade graph as Mermaid; write it as SVG or HTML',
  description: `
Prints the upgrade graph of the catalog in DIR (default ${DEFAULT_OUT}) as Mermaid, in the shape
"opm alpha render-graph" prints: a subgraph per package and channel, edges from the old version to the new
one labelled replace, skip or skipRange(<range>), deprecated bundles and channels styled.

--svg and --html also write a self-contained picture (no network needed to open it): one lane per channel,
versions left to right, replaces solid, skips dashed, skipRange dotted, the head outlined, deprecations
coloured. The HTML page adds a table per channel and the Mermaid source.

With --template the graph is previewed from the template instead of a rendered directory.`,
  examples: ['olmpub catalog graph > graph.mmd', 'olmpub catalog graph out/catalog --html graph.html', 'olmpub catalog graph --template catalog/template.yaml --svg graph.svg'],
  options: {
    svg: { type: 'string', value: 'FILE', description: 'also write the graph as SVG' },
    html: { type: 'string', value: 'FILE', description: 'also write an HTML page with the graph' },
    template: { type: 'string', short: 't', value: 'FILE', description: 'preview from a catalog template instead of DIR' },
    package: { type: 'string', short: 'p', value: 'NAME', description: 'only this package' },
    ...BUNDLE_OPTIONS,
  },
  async run(ctx) {
    const { config, label } = await catalogSource(ctx);
    const pkg = str(ctx.values.package);
    const cfg = pkg
      ? {
          ...config,
          packages: config.packages.filter((p) => p.name === pkg),
          channels: config.channels.filter((c) => c.package === pkg),
          bundles: config.bundles.filter((b) => b.package === pkg),
          deprecations: config.deprecations.filter((d) => d.package === pkg),
        }
      : config;
    ctx.stdout.write(renderMermaid(config, pkg ? { packageName: pkg } : {}));
    const title = `Upgrade graph: ${[...new Set(cfg.packages.map((p) => p.name))].join(', ') || label}`;
    const svgPath = str(ctx.values.svg);
    const htmlPath = str(ctx.values.html);
    if (svgPath) {
      await writeFileAtomic(svgPath, renderSvg(buildGraph(cfg), title));
      ctx.stderr.write(`wrote ${svgPath}\n`);
    }
    if (htmlPath) {
      await writeFileAtomic(htmlPath, renderHtml(cfg, title));
      ctx.stderr.write(`wrote ${htmlPath}\n`);
    }
  },
};

function editOutput(ctx: CommandContext, path: string, result: EditResult, dryRun: boolean): void {
  const data = {
    template: path,
    changed: result.changed,
    written: result.changed && !dryRun,
    summary: result.summary,
    notes: result.notes,
    defaultChannel: result.rendered.defaultChannel,
    channels: result.rendered.channels.map((c) => ({ name: c.name, head: c.head })),
  };
  emit(ctx.output, data, () => {
    const lines: string[] = [];
    if (!result.changed) lines.push(`${path}: nothing to change`);
    for (const s of result.summary) lines.push(`${color.green('✓', ctx.stdout)} ${s}`);
    for (const n of result.notes) lines.push(`  ${n}`);
    if (result.changed) lines.push(dryRun ? color.dim(`(dry run: ${path} not written)`, ctx.stdout) : `${path} updated; the rendered catalog validates. Run "olmpub catalog render" to write it.`);
    return lines.join('\n');
  }, ctx.stdout);
}

export const catalogPromote: Command = {
  noun: 'catalog',
  verb: 'promote',
  args: 'VERSION',
  summary: 'promote a released version to the fast or stable channels',
  description: `
Sets the version's stage in the template (a version in stable is also in fast and candidate), re-renders
and re-validates the catalog, and writes the template back with its comments, atomically. The change is
refused, and nothing written, when the result would strand a version, break a channel's single head, or
take a version out of a channel (promotion only moves up: candidate → fast → stable).`,
  examples: ['olmpub catalog promote 1.2.0 --to fast', 'olmpub catalog promote 1.2.0 --to stable --dry-run'],
  options: {
    to: { type: 'string', value: 'fast|stable', description: 'the archetype to promote to (required)' },
    template: TEMPLATE_OPTION,
    'dry-run': { type: 'boolean', description: 'check the change and show it without writing the template' },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length !== 1) throw usageError('bad-arguments', 'catalog promote takes one VERSION', { hint: 'olmpub catalog promote 1.2.0 --to stable' });
    const to = str(ctx.values.to);
    if (to !== 'fast' && to !== 'stable') throw usageError('bad-arguments', to ? `cannot promote to ${JSON.stringify(to)}` : '--to is required', { hint: 'use --to fast or --to stable' });
    const path = str(ctx.values.template)!;
    const dryRun = ctx.values['dry-run'] === true;
    const result = await editTemplateFile(path, { kind: 'promote', version: ctx.positionals[0]!, to }, { dryRun });
    editOutput(ctx, path, result, dryRun);
  },
};

export const catalogDeprecate: Command = {
  noun: 'catalog',
  verb: 'deprecate',
  summary: 'deprecate a bundle, a channel or the package, with a message for users',
  description: `
Adds the deprecation to the template, re-renders and re-validates the catalog, and writes the template back
with its comments, atomically. OLM v1 shows deprecations as conditions on the ClusterExtension and prefers
non-deprecated bundles when it resolves. Exactly one of --bundle, --channel or --package.`,
  examples: [
    'olmpub catalog deprecate --bundle 1.0.0 --message "CVE-2026-1234: upgrade to 1.0.1"',
    'olmpub catalog deprecate --channel candidate-v0 --message "v0 is no longer maintained; use stable-v1"',
    'olmpub catalog deprecate --package --message "replaced by inference-operator-ng"',
  ],
  options: {
    bundle: { type: 'string', value: 'VERSION', description: 'deprecate this version' },
    channel: { type: 'string', value: 'NAME', description: 'deprecate this channel' },
    package: { type: 'boolean', description: 'deprecate the whole package' },
    message: { type: 'string', short: 'm', value: 'TEXT', description: 'what users should know and do (required)' },
    template: TEMPLATE_OPTION,
    'dry-run': { type: 'boolean', description: 'check the change and show it without writing the template' },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length) throw usageError('bad-arguments', 'catalog deprecate takes no arguments', { hint: 'use --bundle VERSION, --channel NAME or --package' });
    const message = str(ctx.values.message);
    if (!message || !message.trim()) throw usageError('bad-arguments', '--message is required', { hint: 'say why, and what to use instead' });
    const targets = [ctx.values.bundle !== undefined, ctx.values.channel !== undefined, ctx.values.package === true].filter(Boolean).length;
    if (targets !== 1) throw usageError('bad-arguments', 'give exactly one of --bundle, --channel, --package', { hint: 'olmpub catalog deprecate --bundle 1.0.0 --message "..."' });
    const edit: TemplateEdit =
      ctx.values.bundle !== undefined
        ? { kind: 'deprecate-bundle', version: str(ctx.values.bundle)!, message }
        : ctx.values.channel !== undefined
          ? { kind: 'deprecate-channel', channel: str(ctx.values.channel)!, message }
          : { kind: 'deprecate-package', message };
    const path = str(ctx.values.template)!;
    const dryRun = ctx.values['dry-run'] === true;
    editOutput(ctx, path, await editTemplateFile(path, edit, { dryRun }), dryRun);
  },
};

export const catalogUpgrades: Command = {
  noun: 'catalog',
  verb: 'upgrades',
  args: '[DIR]',
  summary: 'what OLM v1 would install next from an installed version, and why',
  description: `
Applies operator-controller's resolution to the catalog in DIR (default ${DEFAULT_OUT}, or the template with
--template), as for a ClusterExtension with the given channels, version range and upgrade policy:
  1. only bundles in the selected channels (edges are also taken from those channels only);
  2. only versions in the range (Masterminds syntax: ">=1.2.0 <2.0.0", "~1.2", "^1", "1.2.x", "a || b");
  3. CatalogProvided (default): only successors of the installed bundle (an entry that replaces it, skips
     it, or whose skipRange contains its version) or the installed version itself. SelfCertified: any
     version in range, including downgrades;
  4. non-deprecated bundles first, then the highest version.
Prints the selected bundle, every candidate with the edge that makes it eligible, and why the others are
not. Exit status: 0 when a bundle resolves, 1 when none does (OLM would report the error shown).`,
  examples: [
    'olmpub catalog upgrades --from 1.0.0',
    'olmpub catalog upgrades --from 1.0.0 --channel stable-v1',
    'olmpub catalog upgrades --from 1.2.0 --version "<1.2.0" --policy SelfCertified',
    'olmpub catalog upgrades --template catalog/template.yaml --from inference-operator.v1.1.0 -o json',
  ],
  options: {
    from: { type: 'string', value: 'VERSION|BUNDLE', description: 'the installed version or bundle name (omit for a fresh install)' },
    channel: { type: 'string', short: 'c', multiple: true, value: 'NAME', description: 'ClusterExtension channels' },
    version: { type: 'string', value: 'RANGE', description: 'ClusterExtension version range' },
    policy: { type: 'string', value: 'POLICY', description: 'CatalogProvided or SelfCertified', default: 'CatalogProvided' },
    package: { type: 'string', short: 'p', value: 'NAME', description: 'the package (when the catalog has several)' },
    template: { type: 'string', short: 't', value: 'FILE', description: 'resolve against a catalog template instead of DIR' },
  },
  structuredOutput: true,
  async run(ctx) {
    const policy = str(ctx.values.policy) as UpgradePolicy;
    if (policy !== 'CatalogProvided' && policy !== 'SelfCertified') throw usageError('bad-policy', `unknown --policy ${policy}`, { hint: 'use CatalogProvided or SelfCertified' });
    const { config } = await catalogSource(ctx);
    const channels = list(ctx.values.channel);
    const from = str(ctx.values.from);
    const range = str(ctx.values.version);
    const pkg = str(ctx.values.package);
    const result = resolveUpgrade(config, {
      ...(pkg ? { packageName: pkg } : {}),
      ...(from ? { installed: from } : {}),
      ...(channels.length ? { channels } : {}),
      ...(range ? { versionRange: range } : {}),
      policy,
    });
    emit(ctx.output, result, () => {
      const lines: string[] = [];
      const where = [channels.length ? `channels ${channels.join(', ')}` : 'all channels', range ? `version ${range}` : '', `policy ${policy}`].filter(Boolean).join(', ');
      lines.push(`${result.packageName}: ${result.installed ? `installed ${result.installed.version}${result.installed.bundle ? ` (${result.installed.bundle})` : ''}` : 'not installed'}; ${where}`);
      if (result.selected) {
        const s = result.selected;
        const verb = s.direction === 'same' ? 'stays on' : s.direction === 'install' ? 'installs' : `${s.direction === 'downgrade' ? 'downgrades' : 'upgrades'} to`;
        lines.push(`${color.green('→', ctx.stdout)} OLM v1 ${verb} ${color.bold(s.version, ctx.stdout)} (${s.bundle})${s.deprecated !== undefined ? color.yellow(` — deprecated: ${s.deprecated}`, ctx.stdout) : ''}`);
        for (const r of s.reasons) lines.push(`    because ${r.channel ? `${r.channel}: ` : ''}${r.detail}`);
      } else lines.push(`${color.red('✗', ctx.stdout)} ${result.error}`);
      if (result.candidates.length > 1) {
        lines.push('', 'Candidates, in OLM order (non-deprecated first, then highest version):');
        lines.push(table(['VERSION', 'BUNDLE', 'DEPRECATED', 'ELIGIBLE BECAUSE'], result.candidates.map((c) => [c.version, c.bundle, c.deprecated !== undefined ? 'yes' : '', c.reasons.map((r) => `${r.channel ? `${r.channel}: ` : ''}${r.detail}`).join('; ')])).replace(/^/gm, '  '));
      }
      if (result.rejected.length) {
        lines.push('', 'Not eligible:');
        lines.push(table(['VERSION', 'BUNDLE', 'WHY NOT'], result.rejected.map((r) => [r.version, r.bundle, r.reason])).replace(/^/gm, '  '));
      }
      for (const n of result.notes) lines.push(color.yellow(`note: ${n}`, ctx.stdout));
      return lines.join('\n');
    }, ctx.stdout);
    return result.selected ? 0 : 1;
  },
};

export const CATALOG_COMMANDS: Command[] = [catalogRender, catalogValidate, catalogGraph, catalogPromote, catalogDeprecate, catalogUpgrades];
