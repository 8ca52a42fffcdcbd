/**
 * Writing FBC exactly as opm writes it (`declcfg.WriteFS` / `WriteJSON` / `WriteYAML`):
 * `<dir>/<package>/catalog.json|yaml` with the package, its channels by name, its bundles by name, other
 * blobs by schema, then its deprecations; blobs without a package go to `<dir>/catalog.json|yaml`.
 * JSON is Go's encoder with a 4-space indent (one object after another); YAML has sorted keys and each
 * document starts with `---`. Field order follows opm's structs, so the bytes match `opm render`.
 */
import { join } from 'node:path';
import { writeFile, mkdir } from 'node:fs/promises';
import YAML from 'yaml';
import { sortKeys } from '../../lib/canonical.js';
import { replaceDirAtomic } from '../../lib/fsx.js';
import { usageError } from '../../lib/errors.js';
import type { Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Package, Property } from './types.js';

export type FbcFormat = 'json' | 'yaml';

/** Go's encoding/json string escaping with SetEscapeHTML(false). */
function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c < 0x20) out += '\\u00' + c.toString(16).padStart(2, '0');
    else if (c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16);
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}

/** JSON like Go's `json.Encoder` with `SetIndent("", "    ")`; objects keep the key order given. */
export function goJSON(value: unknown, indent = '    ', level = 0): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  const pad = indent.repeat(level + 1);
  const close = indent.repeat(level);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + goJSON(v, indent, level + 1)).join(',\n')}\n${close}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${goString(k)}: ${goJSON(v, indent, level + 1)}`).join(',\n')}\n${close}}`;
}

// Property values and other blobs get sorted keys at every level: opm re-encodes them through Go maps.
const property = (p: Property) => ({ type: p.type, value: p.value === undefined ? null : sortKeys(p.value) });
const nonEmpty = <T>(a: T[] | undefined) => (a && a.length ? a : undefined);

/** The wire form of each blob, in opm's field order, without olmpub's positions. */
export function packageWire(p: Package): Record<string, unknown> {
  return {
    schema: p.schema,
    name: p.name,
    defaultChannel: p.defaultChannel,
    icon: p.icon ? { base64data: Buffer.from(p.icon.base64data, 'base64').toString('base64'), mediatype: p.icon.mediatype } : undefined,
    description: p.description || undefined,
    properties: nonEmpty(p.properties)?.map(property),
  };
}

export function channelWire(c: Channel): Record<string, unknown> {
  return {
    schema: c.schema,
    name: c.name,
    package: c.package,
    entries: c.entries.map((e) => ({
      name: e.name,
      replaces: e.replaces || undefined,
      skips: nonEmpty(e.skips),
      skipRange: e.skipRange || undefined,
    })),
    properties: nonEmpty(c.properties)?.map(property),
  };
}

export function bundleWire(b: Bundle): Record<string, unknown> {
  return {
    schema: b.schema,
    name: b.name || undefined,
    package: b.package || undefined,
    image: b.image,
    properties: nonEmpty(b.properties)?.map(property),
    relatedImages: nonEmpty(b.relatedImages)?.map((r) => ({ name: r.name, image: r.image })),
  };
}

export function deprecationWire(d: Deprecation): Record<string, unknown> {
  return {
    schema: d.schema,
    package: d.package,
    entries: d.entries.map((e) => ({
      reference: { schema: e.reference.schema, name: e.reference.name || undefined },
      message: e.message,
    })),
  };
}

export const metaWire = (m: Meta): unknown => sortKeys(m.blob);

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The blobs of one package (or of no package), in opm's order. */
function orderedBlobs(cfg: DeclarativeConfig): unknown[] {
  return [
    ...cfg.packages.map(packageWire),
    ...[...cfg.channels].sort(byName).map(channelWire),
    ...[...cfg.bundles].sort(byName).map(bundleWire),
    ...[...cfg.others].sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0)).map(metaWire),
    ...cfg.deprecations.map(deprecationWire),
  ];
}

/** Serialises blobs as one file's content. */
export function encodeBlobs(blobs: unknown[], format: FbcFormat): string {
  if (format === 'json') return blobs.map((b) => goJSON(b) + '\n').join('');
  return blobs.map((b) => '---\n' + goYAML(b)).join('');
}

/** YAML 1.1's implicit scalar tags (null, bool, int, float, timestamp): what go-yaml v2 resolves plain scalars with. */
const YAML11_TESTS: RegExp[] = (new YAML.Document(null, { version: '1.1' }).schema.tags as { tag?: string; test?: RegExp }[])
  .filter((t) => t.test && t.tag !== 'tag:yaml.org,2002:str')
  .map((t) => t.test!);

/** Whether a plain scalar would not read back as this string under YAML 1.1 (so go-yaml double-quotes it). */
function ambiguous(s: string): boolean {
  return YAML11_TESTS.some((re) => re.test(s));
}

/**
 * YAML like sigs.k8s.io/yaml (go-yaml v2) writes it: sorted keys, sequences not indented, strings that
 * YAML 1.1 would read as another type (yes, on, 1.0, null, "") double-quoted, others plain or
 * single-quoted, multi-line strings as literal blocks.
 */
function goYAML(value: unknown): string {
  const doc = new YAML.Document(sortKeys(stripUndefined(value)), { version: '1.1', aliasDuplicateObjects: false });
  YAML.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && !node.value.includes('\n') && ambiguous(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0, indentSeq: false, singleQuote: true });
}

function stripUndefined(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

/** Splits a config by package (opm's configsByPackage). Blobs with no package name go under "". */
export function splitByPackage(cfg: DeclarativeConfig): Map<string, DeclarativeConfig> {
  const out = new Map<string, DeclarativeConfig>();
  const get = (name: string) => {
    let c = out.get(name);
    if (!c) out.set(name, (c = { packages: [], channels: [], bundles: [], deprecations: [], others: [] }));
    return c;
  };
  for (const p of cfg.packages) if (p.name) get(p.name).packages.push(p);
  for (const c of cfg.channels) if (c.package) get(c.package).channels.push(c);
  for (const b of cfg.bundles) if (b.package) get(b.package).bundles.push(b);
  for (const o of cfg.others) get(o.package).others.push(o);
  for (const d of cfg.deprecations) if (d.package) get(d.package).deprecations.push(d);
  return out;
}

/**
 * The files opm's WriteFS would write for `cfg`, as `relative path → content`, sorted by path.
 * Pure; throws a usage error for a package name that is not a single path element.
 */
export function renderCatalogFiles(cfg: DeclarativeConfig, format: FbcFormat = 'json'): Map<string, string> {
  const files = new Map<string, string>();
  const parts = splitByPackage(cfg);
  const names = [...parts.keys()].filter((n) => n !== '').sort();
  for (const name of names) {
    if (name === '.' || name === '..' || /[/\\]/.test(name)) {
      throw usageError('fbc-bad-package-dir', `invalid package name ${JSON.stringify(name)}: must be a single local path element`);
    }
    files.set(`${name}/catalog.${format}`, encodeBlobs(orderedBlobs(parts.get(name)!), format));
  }
  const root = parts.get('');
  if (root && root.others.length) files.set(`catalog.${format}`, encodeBlobs(orderedBlobs(root), format));
  return files;
}

/** Writes the catalog to `dir`, replacing it atomically: a failure leaves the previous catalog intact. */
export async function writeCatalogDir(dir: string, cfg: DeclarativeConfig, format: FbcFormat = 'json'): Promise<string[]> {
  const files = renderCatalogFiles(cfg, format);
  await replaceDirAtomic(dir, async (tmp) => {
    for (const [rel, content] of files) {
      const path = join(tmp, rel);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, content);
    }
  });
  return [...files.keys()];
}
