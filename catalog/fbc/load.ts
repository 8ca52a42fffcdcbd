/**
 * Reading a catalog directory the way `opm validate` / `opm serve` do (`declcfg.LoadFS`): every file of
 * any extension under the root, except `.indexignore` files and what they exclude, parsed as a stream
 * of JSON/YAML blobs. Unlike opm, reading does not stop at the first bad file: every problem is
 * collected with its `file:line`, and the blobs that did parse are kept.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DecodeError, decodeBundle, decodeChannel, decodeDeprecation, decodeMeta, decodePackage } from './decode.js';
import { IndexIgnore } from './indexignore.js';
import { parseStream } from './stream.js';
import {
  emptyConfig,
  PROPERTY_BUNDLE_OBJECT,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  type DeclarativeConfig,
  type LoadedCatalog,
  type LoadProblem,
} from './types.js';

export interface SourceFile {
  /** Path relative to the catalog root, `/`-separated. */
  path: string;
  text: string;
}

const INDEX_IGNORE = '.indexignore';

/** Decodes base64 the way Go's StdEncoding does; undefined when malformed. */
function decodeBase64(s: string): string | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  return Buffer.from(s, 'base64').toString('utf8');
}

/** opm's readBundleObjects: each `olm.bundle.object` must hold base64 `data` that parses as YAML or JSON. */
function bundleObjectProblem(value: unknown): string | undefined {
  if (value === undefined) return 'unexpected end of JSON input';
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return `json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type property.BundleObject`;
  const data = Object.entries(value as Record<string, unknown>).find(([k]) => k.toLowerCase() === 'data')?.[1];
  if (data === undefined || data === null) return undefined;
  if (typeof data !== 'string') return 'json: cannot unmarshal non-string into Go struct field BundleObject.data of type []uint8';
  const text = decodeBase64(data);
  if (text === undefined) return 'illegal base64 data';
  const parsed = parseStream(text);
  if (parsed.error) return parsed.error.message;
  return undefined;
}

/** Adds the blobs of one file to `cfg`; returns the problems found. Pure. */
export function addFile(cfg: DeclarativeConfig, file: SourceFile): LoadProblem[] {
  const problems: LoadProblem[] = [];
  const res = parseStream(file.text);
  for (const doc of res.docs) {
    const at = { file: file.path, line: doc.line };
    if (doc.value === null) {
      problems.push({
        code: 'fbc-empty-document',
        message: "object '' is missing root schema field",
        pos: at,
        hint: 'this YAML document is empty (only comments or blank lines, e.g. after a trailing "---"); opm fails on it: remove it, or list files that are not FBC in a .indexignore',
      });
      continue;
    }
    try {
      const meta = decodeMeta(doc.value);
      const blob = meta.blob;
      switch (meta.schema) {
        case SCHEMA_PACKAGE:
          cfg.packages.push(wrap('parse package', () => decodePackage(blob, file.path, doc.line)));
          break;
        case SCHEMA_CHANNEL:
          cfg.channels.push(wrap('parse channel', () => decodeChannel(blob, file.path, doc.line)));
          break;
        case SCHEMA_BUNDLE: {
          const b = wrap('parse bundle', () => decodeBundle(blob, file.path, doc.line));
          b.properties.forEach((p, i) => {
            if (p.type !== PROPERTY_BUNDLE_OBJECT) return;
            const err = bundleObjectProblem(p.value);
            if (err) throw new DecodeError(`read bundle objects: package ${JSON.stringify(b.package)}, bundle ${JSON.stringify(b.name)}: parse property at index ${i} as bundle object: ${err}`, p.pos?.line);
          });
          cfg.bundles.push(b);
          break;
        }
        case SCHEMA_DEPRECATIONS:
          cfg.deprecations.push(wrap('parse deprecation', () => decodeDeprecation(blob, file.path, doc.line)));
          break;
        case '':
          throw new DecodeError(`object '${JSON.stringify(blob)}' is missing root schema field`);
        default:
          cfg.others.push({ schema: meta.schema, package: meta.package, name: meta.name, blob, pos: at });
      }
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      const missing = err.message.includes('missing root schema field');
      problems.push({
        code: missing ? 'fbc-missing-schema' : 'fbc-bad-blob',
        message: err.message,
        pos: { file: file.path, line: err.line ?? doc.line },
        hint: missing
          ? 'every object in a catalog file needs a "schema" (olm.package, olm.channel, olm.bundle, olm.deprecations); list files that are not FBC in a .indexignore'
          : 'fix the field so it has the type the FBC schema expects',
      });
    }
  }
  if (res.error) {
    problems.push({
      code: 'fbc-syntax',
      message: res.error.message,
      pos: { file: file.path, line: res.error.line },
      hint: 'catalog files hold concatenated JSON objects or YAML documents separated by "---" lines; list files that are not FBC in a .indexignore',
    });
  }
  return problems;
}

function wrap<T>(prefix: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof DecodeError) throw new DecodeError(`${prefix}: ${err.message}`, err.line);
    throw err;
  }
}

/** Builds the catalog from files already read; applies `.indexignore` files among them. Pure. */
export function loadFromFiles(root: string, files: SourceFile[]): LoadedCatalog {
  const ignore = new IndexIgnore();
  const sorted = [...files].sort((a, b) => walkOrder(a.path, b.path));
  for (const f of sorted) if (basename(f.path) === INDEX_IGNORE) ignore.add(f.path, f.text);
  const config = emptyConfig();
  const problems: LoadProblem[] = [];
  const read: string[] = [];
  for (const f of sorted) {
    if (basename(f.path) === INDEX_IGNORE || ignore.ignores(f.path)) continue;
    read.push(f.path);
    problems.push(...addFile(config, f));
  }
  return { root, files: read, config, problems };
}

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** fs.WalkDir order: entries of a directory sorted by name, depth first. */
function walkOrder(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  }
  return pa.length - pb.length;
}

/**
 * Reads the files under `dir` that opm would read (directories recursively, any extension), plus the
 * `.indexignore` files; files those exclude are not read at all.
 */
export async function readCatalogFiles(dir: string): Promise<SourceFile[]> {
  const paths: string[] = [];
  const walk = async (rel: string) => {
    const entries = await readdir(rel ? join(dir, rel) : dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path);
      else if (e.isFile() || e.isSymbolicLink()) paths.push(path);
    }
  };
  await walk('');
  const ignore = new IndexIgnore();
  const out: SourceFile[] = [];
  for (const path of paths) {
    if (basename(path) !== INDEX_IGNORE) continue;
    const text = await readFile(join(dir, path), 'utf8');
    ignore.add(path, text);
    out.push({ path, text });
  }
  for (const path of paths) {
    if (basename(path) === INDEX_IGNORE || ignore.ignores(path)) continue;
    out.push({ path, text: await readFile(join(dir, path), 'utf8') });
  }
  return out;
}

/** Loads the catalog under `dir`. Throws only when the directory cannot be read. */
export async function loadCatalogDir(dir: string): Promise<LoadedCatalog> {
  return loadFromFiles(dir, await readCatalogFiles(dir));
}
