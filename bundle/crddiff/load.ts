/**
 * Reads Kubernetes objects from files or directories: YAML (multi-document) or JSON, `kind: List` expanded,
 * each object with the file and line it starts at and a way to find the line of any field inside it.
 * The I/O edge of `olmpub crd diff` and `olmpub rbac check`.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import YAML, { LineCounter, isMap, isSeq, type Document, type Node } from 'yaml';
import { usageError, validationError } from '../../lib/errors.js';

export interface LoadedObject {
  object: Record<string, unknown>;
  /** File path as given (or relative to the directory given). */
  file: string;
  /** 1-based line of the object's first key. */
  line: number;
  /** `file:line` of a field inside the object, e.g. `["rules", 2]`; falls back to the object's line. */
  placeOf(path: (string | number)[]): string;
}

const MANIFEST = /\.(ya?ml|json)$/i;

/** Every manifest file under `path` (recursively, skipping hidden entries), sorted; or `path` itself. */
export async function manifestFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw usageError('path-not-found', `${path}: no such file or directory`, { hint: 'pass a manifest file or a directory of manifests' });
  }
  if (!info.isDirectory()) return [path];
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (MANIFEST.test(entry.name)) out.push(full);
    }
  };
  await walk(path);
  return out;
}

/** Parses one file's text into objects with positions. */
export function parseManifests(text: string, file: string): LoadedObject[] {
  const lineCounter = new LineCounter();
  const docs = YAML.parseAllDocuments(text, { lineCounter, uniqueKeys: false });
  const out: LoadedObject[] = [];
  const lineAt = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list as Document.Parsed[]) {
    if (doc.errors.length) {
      const e = doc.errors[0]!;
      throw validationError('bad-manifest', `${file}:${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`, { place: `${file}:${e.linePos?.[0]?.line ?? 1}`, hint: 'fix the YAML/JSON syntax' });
    }
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (value === null || value === undefined) continue;
    const root = doc.contents as Node | null;
    const make = (object: Record<string, unknown>, node: Node | null | undefined): LoadedObject => ({
      object,
      file,
      line: lineAt(node?.range?.[0]),
      placeOf(path) {
        let n: unknown = node;
        for (const key of path) {
          if (isMap(n)) n = n.get(key, true);
          else if (isSeq(n) && typeof key === 'number') n = n.items[key];
          else {
            n = undefined;
            break;
          }
        }
        const offset = (n as Node | undefined)?.range?.[0];
        return `${file}:${offset === undefined ? lineAt(node?.range?.[0]) : lineAt(offset)}`;
      },
    });
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw validationError('bad-manifest', `${file}:${lineAt(root?.range?.[0])}: a manifest document must be an object`, { place: `${file}:${lineAt(root?.range?.[0])}` });
    }
    const obj = value as Record<string, unknown>;
    if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
      const itemsNode = isMap(root) ? (root.get('items', true) as Node | undefined) : undefined;
      obj.items.forEach((item, i) => {
        if (item && typeof item === 'object') out.push(make(item as Record<string, unknown>, isSeq(itemsNode) ? (itemsNode.items[i] as Node) : root));
      });
    } else out.push(make(obj, root));
  }
  return out;
}

/** Loads every object from the given files and directories, in path order. */
export async function loadManifests(paths: readonly string[]): Promise<LoadedObject[]> {
  const out: LoadedObject[] = [];
  for (const p of paths) {
    const files = await manifestFiles(p);
    for (const f of files) {
      const text = await readFile(f, 'utf8');
      const shown = f === p ? f : join(p, relative(p, f));
      out.push(...parseManifests(text, shown));
    }
  }
  return out;
}
