/**
 * The upgrade graph as Mermaid, in the shape `opm alpha render-graph` prints (operator-registry
 * `declcfg.MermaidWriter.WriteChannels` with its defaults: all packages, no minimum edge, no OLMv0
 * decorations): `graph LR`, three classDef lines, a subgraph per package and per channel, nodes
 * `<pkg>-<channel>-<bundle>` by descending version, edges old → new labelled `replace`, `skip` or
 * `"skipRange(<range>)"`, then `style`/`class` lines for deprecations.
 */
import { usageError } from '../../lib/errors.js';
import * as blang from '../semver/blang.js';
import { packageProperties } from '../fbc/properties.js';
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, type DeclarativeConfig } from '../fbc/types.js';

const ZERO: blang.Version = { major: 0n, minor: 0n, patch: 0n, pre: [], build: [] };

/** Go's %q for the plain strings catalog names are made of. */
const goQuote = (s: string) => JSON.stringify(s);

/** Bundle name → version, as opm's getBundleVersions (first blob of a name wins; errors are fatal). */
export function bundleVersionMap(cfg: DeclarativeConfig): Map<string, blang.Version> {
  const out = new Map<string, blang.Version>();
  for (const b of cfg.bundles) {
    if (out.has(b.name)) continue;
    const pkgs = packageProperties(b);
    if (pkgs.length !== 1) throw usageError('graph-bad-bundle', `bundle ${goQuote(b.name)} has multiple "olm.package" properties, expected exactly 1`, { hint: 'run "olmpub catalog validate" first' });
    try {
      out.set(b.name, blang.parse(pkgs[0]!.version));
    } catch (err) {
      throw usageError('graph-bad-bundle', `bundle ${goQuote(b.name)} has invalid version ${goQuote(pkgs[0]!.version)}: ${(err as Error).message}`, { hint: 'run "olmpub catalog validate" first' });
    }
  }
  return out;
}

export interface MermaidOptions {
  /** Only this package (opm's `-p`). */
  packageName?: string;
}

export function renderMermaid(cfg: DeclarativeConfig, options: MermaidOptions = {}): string {
  const versions = bundleVersionMap(cfg);
  const ver = (name: string) => versions.get(name) ?? ZERO;
  const depPackages = new Set<string>();
  const depChannels = new Set<string>();
  const depBundles = new Set<string>();
  for (const d of cfg.deprecations) {
    for (const e of d.entries) {
      if (e.reference.schema === SCHEMA_PACKAGE) depPackages.add(d.package);
      else if (e.reference.schema === SCHEMA_CHANNEL) depChannels.add(e.reference.name ?? '');
      else if (e.reference.schema === SCHEMA_BUNDLE) depBundles.add(e.reference.name ?? '');
    }
  }
  const pkgs = new Map<string, string[]>();
  let deprecatedPackage = '';
  const deprecatedChannelIDs: string[] = [];
  const deprecatedBundleIDs: string[] = [];
  const channels = [...cfg.channels].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const c of channels) {
    if (options.packageName && c.package !== options.packageName) continue;
    if (c.entries.length === 0 && options.packageName) continue;
    let lines = pkgs.get(c.package);
    if (!lines) pkgs.set(c.package, (lines = []));
    const channelID = `${c.package}-${c.name}`;
    lines.push(`    %% channel ${goQuote(c.name)}`);
    lines.push(`    subgraph ${channelID}[${goQuote(c.name)}]`);
    if (depPackages.has(c.package)) deprecatedPackage = c.package;
    if (depChannels.has(c.name)) deprecatedChannelIDs.push(channelID);
    const sorted = [...c.entries].sort((a, b) => blang.compare(ver(b.name), ver(a.name)));
    for (const ce of sorted) {
      const entryID = `${channelID}-${ce.name}`;
      lines.push(`      ${entryID}[${goQuote(ce.name)}]`);
      if (depBundles.has(ce.name)) deprecatedBundleIDs.push(entryID);
      for (const s of ce.skips ?? []) lines.push(`      ${channelID}-${s}[${goQuote(s)}]-- skip --> ${entryID}[${goQuote(ce.name)}]`);
      if (ce.skipRange) {
        const range = blang.tryParseRange(ce.skipRange);
        if (range) {
          for (const e of c.entries) {
            if (range(ver(e.name))) lines.push(`      ${channelID}-${e.name}[${goQuote(e.name)}]-- "skipRange(${ce.skipRange})" --> ${entryID}[${goQuote(ce.name)}]`);
          }
        }
      }
      if (ce.replaces) lines.push(`      ${channelID}-${ce.replaces}[${goQuote(ce.replaces)}]-- replace --> ${entryID}[${goQuote(ce.name)}]`);
    }
    lines.push('    end');
  }
  const out = [
    'graph LR',
    '  classDef deprecated fill:#E8960F',
    '  classDef skipped stroke:#FF0000,stroke-width:4px',
    '  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px',
  ];
  for (const name of [...pkgs.keys()].sort()) {
    out.push(`  %% package ${goQuote(name)}`, `  subgraph ${goQuote(name)}`, ...pkgs.get(name)!, '  end');
  }
  if (deprecatedPackage) out.push(`style ${deprecatedPackage} fill:#989695`);
  for (const id of deprecatedChannelIDs) out.push(`style ${id} fill:#DCD0FF`);
  if (deprecatedBundleIDs.length) out.push(`class ${[...deprecatedBundleIDs].sort().join(',')} deprecated`);
  return out.join('\n') + '\n';
}

/** Nodes and labelled edges of Mermaid text, for structural comparison (formatting aside). */
export function parseMermaidStructure(text: string): { nodes: string[]; edges: string[]; classes: string[]; styles: string[] } {
  const nodes = new Set<string>();
  const edges = new Set<string>();
  const classes: string[] = [];
  const styles: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const edge = /^(\S+?)\[".*?"\]-- (.+?) --> (\S+?)\[".*?"\]$/.exec(line);
    if (edge) {
      edges.add(`${edge[1]} -${edge[2]}-> ${edge[3]}`);
      continue;
    }
    const node = /^(\S+?)\[".*?"\]$/.exec(line);
    if (node && !line.startsWith('subgraph')) nodes.add(node[1]!);
    if (line.startsWith('class ')) classes.push(line);
    if (line.startsWith('style ')) styles.push(line);
  }
  return { nodes: [...nodes].sort(), edges: [...edges].sort(), classes: classes.sort(), styles: styles.sort() };
}
