/**
 * The upgrade graph as a self-contained SVG, and an HTML page around it that opens with no network.
 *
 * Layout (computed here, no external tools): one lane per channel, versions as boxes in columns by
 * ascending version (the same version lines up across lanes), edges old → new. `replaces` is a solid
 * arrow (straight between neighbours, arched above the lane otherwise), `skips` a dashed arch above,
 * `skipRange` a dotted arch below. A source outside the channel (a `replaces` into an older minor
 * channel) is drawn as a dashed ghost box. The head has a thick border; deprecated bundles are orange,
 * deprecated channels lilac (the colours `opm alpha render-graph` uses).
 */
import * as blang from '../semver/blang.js';
import { packageProperties } from '../fbc/properties.js';
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, type DeclarativeConfig } from '../fbc/types.js';
import { channelHeads } from '../validate/validate.js';
import { renderMermaid } from './mermaid.js';

export type EdgeKind = 'replace' | 'skip' | 'skipRange';

export interface GraphNode {
  bundle: string;
  version: string;
  /** Not an entry of this channel: only the source of an edge into it. */
  external: boolean;
  head: boolean;
  deprecated?: string;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  label: string;
}

export interface GraphChannel {
  name: string;
  isDefault: boolean;
  deprecated?: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GraphPackage {
  name: string;
  deprecated?: string;
  defaultChannel: string;
  /** Every version that appears in some lane, ascending: the columns. */
  columns: string[];
  channels: GraphChannel[];
}

const ZERO: blang.Version = { major: 0n, minor: 0n, patch: 0n, pre: [], build: [] };

/** The upgrade graph of each package, from the FBC (no validation needed, but edges must name bundles). */
export function buildGraph(cfg: DeclarativeConfig): GraphPackage[] {
  const versionOf = new Map<string, { parsed: blang.Version; text: string }>();
  for (const b of cfg.bundles) {
    if (versionOf.has(b.name)) continue;
    const p = packageProperties(b)[0];
    const parsed = p ? blang.tryParse(p.version) : undefined;
    versionOf.set(b.name, { parsed: parsed ?? ZERO, text: parsed ? p!.version : '?' });
  }
  const ver = (name: string) => versionOf.get(name)?.parsed ?? ZERO;
  const label = (name: string) => versionOf.get(name)?.text ?? name;
  const cmp = (a: string, b: string) => blang.compare(ver(a), ver(b)) || (a < b ? -1 : a > b ? 1 : 0);

  const pkgNames = [...new Set([...cfg.packages.map((p) => p.name), ...cfg.channels.map((c) => c.package)])].sort();
  return pkgNames.map((pkgName) => {
    const pkg = cfg.packages.find((p) => p.name === pkgName);
    const deps = cfg.deprecations.find((d) => d.package === pkgName)?.entries ?? [];
    const depOf = (schema: string, name?: string) => deps.find((e) => e.reference.schema === schema && (schema === SCHEMA_PACKAGE || e.reference.name === name))?.message;
    const channels: GraphChannel[] = cfg.channels
      .filter((c) => c.package === pkgName)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((c) => {
        const names = new Set(c.entries.map((e) => e.name));
        const heads = channelHeads(c.entries).map((e) => e.name);
        const edges: GraphEdge[] = [];
        const external = new Set<string>();
        for (const e of c.entries) {
          if (e.replaces) {
            edges.push({ from: e.replaces, to: e.name, kind: 'replace', label: 'replace' });
            if (!names.has(e.replaces)) external.add(e.replaces);
          }
          for (const s of e.skips ?? []) {
            if (names.has(s)) edges.push({ from: s, to: e.name, kind: 'skip', label: 'skip' });
          }
          const range = e.skipRange ? blang.tryParseRange(e.skipRange) : undefined;
          if (range) for (const x of c.entries) if (x.name !== e.name && versionOf.has(x.name) && range(ver(x.name))) edges.push({ from: x.name, to: e.name, kind: 'skipRange', label: `skipRange(${e.skipRange})` });
        }
        const nodes: GraphNode[] = [...names, ...external].sort(cmp).map((n) => {
          const d = names.has(n) ? depOf(SCHEMA_BUNDLE, n) : undefined;
          return { bundle: n, version: label(n), external: !names.has(n), head: heads.length === 1 && heads[0] === n, ...(d !== undefined ? { deprecated: d } : {}) };
        });
        const cd = depOf(SCHEMA_CHANNEL, c.name);
        return { name: c.name, isDefault: pkg?.defaultChannel === c.name, ...(cd !== undefined ? { deprecated: cd } : {}), nodes, edges };
      });
    const columns = [...new Set(channels.flatMap((c) => c.nodes.map((n) => n.bundle)))].sort(cmp);
    const pd = depOf(SCHEMA_PACKAGE);
    return { name: pkgName, ...(pd !== undefined ? { deprecated: pd } : {}), defaultChannel: pkg?.defaultChannel ?? '', columns, channels };
  });
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const CHAR_W = 7.4;
const NODE_H = 26;
const ARC_ROOM = 34;
const LANE_H = NODE_H + 2 * ARC_ROOM + 12;
const COLORS = { replace: '#1f2937', skip: '#2563eb', skipRange: '#9ca3af', deprecated: '#E8960F', channelDeprecated: '#DCD0FF' };

function arcHeight(span: number): number {
  return Math.min(ARC_ROOM - 6, 10 + 6 * (span - 1));
}

/** Renders the graph as one standalone SVG document (deterministic). */
export function renderSvg(graph: GraphPackage[], title = 'Upgrade graph'): string {
  const laneLabelW = Math.max(120, ...graph.flatMap((p) => p.channels.map((c) => (c.name.length + (c.isDefault ? 10 : 0)) * CHAR_W + 24)));
  const colW = Math.max(84, ...graph.flatMap((p) => p.columns.map((b) => p.channels.flatMap((c) => c.nodes).find((n) => n.bundle === b)!.version.length * CHAR_W + 28)));
  const margin = 16;
  const maxCols = Math.max(1, ...graph.map((p) => p.columns.length));
  const width = Math.ceil(margin * 2 + laneLabelW + maxCols * colW);
  const body: string[] = [];
  let y = margin;
  body.push(`<text x="${margin}" y="${y + 16}" class="title">${esc(title)}</text>`);
  y += 32;
  for (const pkg of graph) {
    body.push(`<g class="package" id="${esc(`pkg-${pkg.name}`)}">`);
    body.push(`<text x="${margin}" y="${y + 14}" class="pkg">${esc(pkg.name)}${pkg.deprecated !== undefined ? ' (deprecated)' : ''}</text>`);
    if (pkg.deprecated) body.push(`<text x="${margin}" y="${y + 30}" class="note">${esc(pkg.deprecated)}</text>`);
    y += pkg.deprecated ? 40 : 24;
    const colX = new Map(pkg.columns.map((b, i) => [b, margin + laneLabelW + i * colW + colW / 2]));
    for (const ch of pkg.channels) {
      const top = y;
      const cy = top + ARC_ROOM + 6 + NODE_H / 2;
      const laneFill = ch.deprecated !== undefined ? COLORS.channelDeprecated : '#f9fafb';
      body.push(`<g class="channel" id="${esc(`ch-${pkg.name}-${ch.name}`)}">`);
      body.push(`<rect x="${margin}" y="${top}" width="${width - 2 * margin}" height="${LANE_H}" rx="6" fill="${laneFill}" stroke="#e5e7eb"/>`);
      body.push(`<text x="${margin + 10}" y="${cy - 2}" class="lane">${esc(ch.name)}${ch.isDefault ? ' ★ default' : ''}</text>`);
      if (ch.deprecated !== undefined) body.push(`<text x="${margin + 10}" y="${cy + 13}" class="note">deprecated${ch.deprecated ? `: ${esc(truncate(ch.deprecated, 28))}` : ''}</text>`);
      // Edges under the nodes. Arcs attach at spread-out points along the top (replaces, skips) or the
      // bottom (skipRange) of each box, ordered by the other end, so they do not pile up on one point.
      const nodeIndex = new Map(pkg.columns.map((b, i) => [b, i]));
      const boxW = (b: string) => Math.max(56, (ch.nodes.find((n) => n.bundle === b)?.version.length ?? 5) * CHAR_W + 20);
      const straight = (e: GraphEdge) => e.kind === 'replace' && Math.abs(nodeIndex.get(e.to)! - nodeIndex.get(e.from)!) === 1;
      const ports = new Map<string, GraphEdge[]>();
      for (const e of ch.edges) {
        if (straight(e) || colX.get(e.from) === undefined || colX.get(e.to) === undefined) continue;
        const side = e.kind === 'skipRange' ? 'b' : 't';
        for (const end of [e.from, e.to]) ports.set(`${end}/${side}`, [...(ports.get(`${end}/${side}`) ?? []), e]);
      }
      const portX = (node: string, side: string, e: GraphEdge) => {
        const list = ports.get(`${node}/${side}`) ?? [e];
        const other = (x: GraphEdge) => colX.get(x.from === node ? x.to : x.from)!;
        const sorted = [...list].sort((a, b) => other(a) - other(b) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
        const i = sorted.indexOf(e);
        const usable = boxW(node) - 16;
        return colX.get(node)! - usable / 2 + (sorted.length === 1 ? usable / 2 : (usable * i) / (sorted.length - 1));
      };
      for (const e of ch.edges) {
        const x1 = colX.get(e.from);
        const x2 = colX.get(e.to);
        if (x1 === undefined || x2 === undefined) continue;
        const span = Math.abs(nodeIndex.get(e.to)! - nodeIndex.get(e.from)!);
        const dir = x2 >= x1 ? 1 : -1;
        let d: string;
        if (straight(e)) {
          d = `M ${fmt(x1 + (dir * boxW(e.from)) / 2)} ${fmt(cy)} L ${fmt(x2 - (dir * boxW(e.to)) / 2)} ${fmt(cy)}`;
        } else {
          const up = e.kind === 'skipRange' ? 1 : -1;
          const side = up === 1 ? 'b' : 't';
          const h = arcHeight(span);
          const sy = cy + (up * NODE_H) / 2;
          const px1 = portX(e.from, side, e);
          const px2 = portX(e.to, side, e);
          d = `M ${fmt(px1)} ${fmt(sy)} C ${fmt(px1)} ${fmt(sy + up * h)}, ${fmt(px2)} ${fmt(sy + up * h)}, ${fmt(px2)} ${fmt(sy)}`;
        }
        const dash = e.kind === 'skip' ? ' stroke-dasharray="6 4"' : e.kind === 'skipRange' ? ' stroke-dasharray="2 3"' : '';
        body.push(`<path d="${d}" class="edge ${e.kind}" fill="none" stroke="${COLORS[e.kind]}" stroke-width="${e.kind === 'replace' ? 1.8 : 1.2}"${dash} marker-end="url(#arrow-${e.kind})"><title>${esc(`${e.from} → ${e.to}: ${e.label}`)}</title></path>`);
      }
      for (const n of ch.nodes) {
        const x = colX.get(n.bundle)!;
        const w = Math.max(56, n.version.length * CHAR_W + 20);
        const fill = n.external ? '#ffffff' : n.deprecated !== undefined ? COLORS.deprecated : '#ffffff';
        const stroke = n.external ? '#9ca3af' : '#1f2937';
        const sw = n.head ? 3 : 1.2;
        const dash = n.external ? ' stroke-dasharray="4 3"' : '';
        const tip = `${n.bundle} (${n.version})${n.head ? ', channel head' : ''}${n.external ? ', in another channel' : ''}${n.deprecated !== undefined ? `, deprecated: ${n.deprecated}` : ''}`;
        body.push(`<g class="node${n.head ? ' head' : ''}${n.external ? ' external' : ''}${n.deprecated !== undefined ? ' deprecated' : ''}"><title>${esc(tip)}</title>`);
        body.push(`<rect x="${fmt(x - w / 2)}" y="${fmt(cy - NODE_H / 2)}" width="${fmt(w)}" height="${NODE_H}" rx="5" fill="${fill}" stroke="${stroke}" stroke-width="${sw}"${dash}/>`);
        body.push(`<text x="${fmt(x)}" y="${fmt(cy + 4.5)}" text-anchor="middle" class="${n.external ? 'ext' : 'ver'}">${esc(n.version)}</text></g>`);
      }
      body.push('</g>');
      y += LANE_H + 8;
    }
    body.push('</g>');
    y += 12;
  }
  // Legend.
  const ly = y + 8;
  const items: [string, string][] = [
    [`<path d="M 0 0 L 34 0" stroke="${COLORS.replace}" stroke-width="1.8" marker-end="url(#arrow-replace)"/>`, 'replaces'],
    [`<path d="M 0 0 L 34 0" stroke="${COLORS.skip}" stroke-width="1.2" stroke-dasharray="6 4" marker-end="url(#arrow-skip)"/>`, 'skips'],
    [`<path d="M 0 0 L 34 0" stroke="${COLORS.skipRange}" stroke-width="1.2" stroke-dasharray="2 3" marker-end="url(#arrow-skipRange)"/>`, 'skipRange'],
    [`<rect x="0" y="-9" width="34" height="18" rx="4" fill="#fff" stroke="#1f2937" stroke-width="3"/>`, 'channel head'],
    [`<rect x="0" y="-9" width="34" height="18" rx="4" fill="${COLORS.deprecated}" stroke="#1f2937"/>`, 'deprecated bundle'],
    [`<rect x="0" y="-9" width="34" height="18" rx="4" fill="#fff" stroke="#9ca3af" stroke-dasharray="4 3"/>`, 'in another channel'],
    [`<rect x="0" y="-9" width="34" height="18" rx="4" fill="${COLORS.channelDeprecated}" stroke="#e5e7eb"/>`, 'deprecated channel'],
  ];
  let lx = margin;
  body.push(`<g class="legend">`);
  for (const [shape, text] of items) {
    body.push(`<g transform="translate(${fmt(lx)},${fmt(ly + 10)})">${shape}<text x="42" y="4" class="legend-text">${esc(text)}</text></g>`);
    lx += 52 + text.length * CHAR_W + 18;
  }
  body.push('</g>');
  const height = Math.ceil(ly + 32);
  const widthAll = Math.max(width, Math.ceil(lx + margin));
  const marker = (kind: EdgeKind) =>
    `<marker id="arrow-${kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="${COLORS[kind]}"/></marker>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${widthAll}" height="${height}" viewBox="0 0 ${widthAll} ${height}" role="img" aria-label="${esc(title)}">`,
    `<defs>${marker('replace')}${marker('skip')}${marker('skipRange')}</defs>`,
    '<style>',
    'text { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; fill: #111827; }',
    '.title { font-size: 16px; font-weight: bold; } .pkg { font-size: 14px; font-weight: bold; } .lane { font-weight: bold; }',
    '.note { font-size: 11px; fill: #6b21a8; } .ext { fill: #6b7280; } .legend-text { font-size: 11px; }',
    '</style>',
    `<rect x="0" y="0" width="${widthAll}" height="${height}" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

const fmt = (n: number) => (Math.round(n * 10) / 10).toString();
const truncate = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** An HTML page with the SVG inline, a table per channel and the Mermaid source; no scripts, no network. */
export function renderHtml(cfg: DeclarativeConfig, title = 'Upgrade graph'): string {
  const graph = buildGraph(cfg);
  const svg = renderSvg(graph, title);
  const tables = graph.flatMap((p) =>
    p.channels.map((c) => {
      const rows = cfg.channels
        .find((x) => x.package === p.name && x.name === c.name)!
        .entries.map((e) => {
          const node = c.nodes.find((n) => n.bundle === e.name)!;
          return `<tr${node.deprecated !== undefined ? ' class="dep"' : ''}><td>${esc(e.name)}</td><td>${esc(node.version)}${node.head ? ' <b>(head)</b>' : ''}</td><td>${esc(e.replaces ?? '')}</td><td>${esc((e.skips ?? []).join(', '))}</td><td>${esc(e.skipRange ?? '')}</td><td>${esc(node.deprecated ?? '')}</td></tr>`;
        });
      return `<h3>${esc(p.name)} / ${esc(c.name)}${c.isDefault ? ' (default)' : ''}${c.deprecated !== undefined ? ` — deprecated: ${esc(c.deprecated)}` : ''}</h3>
<table><thead><tr><th>bundle</th><th>version</th><th>replaces</th><th>skips</th><th>skipRange</th><th>deprecated</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
    }),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #111827; }
.graph { overflow-x: auto; border: 1px solid #e5e7eb; border-radius: 8px; padding: 8px; }
table { border-collapse: collapse; margin-bottom: 16px; font-size: 13px; }
th, td { border: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f6; } tr.dep td { background: #fde7c2; }
pre { background: #f3f4f6; padding: 12px; overflow-x: auto; }
</style>
</head>
<body>
<h1>${esc(title)}</h1>
<p>Edges run from the installed version to the version OLM may upgrade to. OLM v1 follows replaces, skips and skipRange edges within the selected channels and picks the highest non-deprecated successor.</p>
<div class="graph">
${svg}</div>
<h2>Channels</h2>
${tables.join('\n')}
<details><summary>Mermaid source (as <code>opm alpha render-graph</code> prints it)</summary>
<pre>${esc(renderMermaid(cfg))}</pre>
</details>
</body>
</html>
`;
}
