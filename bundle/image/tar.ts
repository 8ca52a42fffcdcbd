/**
 * Deterministic tar layers (tar-stream, ustar/pax): entries sorted by path, every parent directory
 * written explicitly, a fixed mtime (SOURCE_DATE_EPOCH or 0), uid/gid 0 unless configured, no user or
 * group names, modes preserved. Files from disk are streamed, never read whole into memory.
 */
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { validationError } from '../../lib/errors.js';

export type LayerEntry =
  | { path: string; type: 'file'; content: Uint8Array | string; mode?: number; uid?: number; gid?: number }
  | { path: string; type: 'file'; source: string; size: number; mode?: number; uid?: number; gid?: number }
  | { path: string; type: 'dir'; mode?: number; uid?: number; gid?: number }
  | { path: string; type: 'symlink'; target: string; uid?: number; gid?: number }
  | { path: string; type: 'hardlink'; target: string; uid?: number; gid?: number };

/** What one file of a `files` layer may be: its content, or an entry without its path. */
export type FileSpec =
  | string
  | Uint8Array
  | { content: string | Uint8Array; mode?: number; uid?: number; gid?: number }
  | { source: string; mode?: number; uid?: number; gid?: number }
  | { dir: true; mode?: number; uid?: number; gid?: number }
  | { symlink: string }
  | { hardlink: string };

export interface TarOptions {
  /** Seconds since the epoch for every entry (default: SOURCE_DATE_EPOCH, else 0). */
  mtime?: number;
  /** Owner of entries that do not set their own (default 0). */
  uid?: number;
  gid?: number;
  /** Mode of directories the layer creates implicitly (default 0o755). */
  dirMode?: number;
}

/** SOURCE_DATE_EPOCH as seconds, else 0. */
export function sourceDateEpoch(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.SOURCE_DATE_EPOCH;
  if (v === undefined || v === '') return 0;
  if (!/^\d+$/.test(v)) throw validationError('bad-source-date-epoch', `SOURCE_DATE_EPOCH="${v}" is not a number of seconds`);
  return Number(v);
}

/** `/usr/bin/node`, `./a/b/`, `a//b` → `usr/bin/node`, `a/b`; rejects `..` and empty paths. */
export function normalizeLayerPath(path: string): string {
  if (path.split('/').includes('..')) throw validationError('image-bad-path', `"${path}" leaves the image root`);
  const n = posix.normalize(`/${path}`).replace(/^\/+/, '').replace(/\/+$/, '');
  if (!n || n === '.') throw validationError('image-bad-path', `"${path}" is not a path inside the image`);
  if (n.split('/').includes('..')) throw validationError('image-bad-path', `"${path}" leaves the image root`);
  return n;
}

/** Entries from a `files` map or list. */
export function entriesFromFiles(files: Record<string, FileSpec> | LayerEntry[]): LayerEntry[] {
  if (Array.isArray(files)) return files.map((e) => ({ ...e, path: normalizeLayerPath(e.path) }) as LayerEntry);
  return Object.entries(files).map(([path, spec]): LayerEntry => {
    const p = normalizeLayerPath(path);
    if (typeof spec === 'string' || spec instanceof Uint8Array) return { path: p, type: 'file', content: spec };
    const owner = { ...('uid' in spec && spec.uid !== undefined ? { uid: spec.uid } : {}), ...('gid' in spec && spec.gid !== undefined ? { gid: spec.gid } : {}) };
    if ('content' in spec) return { path: p, type: 'file', content: spec.content, ...(spec.mode !== undefined ? { mode: spec.mode } : {}), ...owner };
    if ('source' in spec) return { path: p, type: 'file', source: spec.source, size: -1, ...(spec.mode !== undefined ? { mode: spec.mode } : {}), ...owner };
    if ('dir' in spec) return { path: p, type: 'dir', ...(spec.mode !== undefined ? { mode: spec.mode } : {}), ...owner };
    if ('symlink' in spec) return { path: p, type: 'symlink', target: spec.symlink };
    return { path: p, type: 'hardlink', target: normalizeLayerPath(spec.hardlink) };
  });
}

/**
 * Entries for a directory tree on disk, placed under `prefix` in the image. Modes come from the files;
 * owners do not (they are the layer's uid/gid). Sockets and devices are refused.
 */
export async function entriesFromDir(dir: string, prefix = '/', options: { exclude?: (relPath: string) => boolean } = {}): Promise<LayerEntry[]> {
  const out: LayerEntry[] = [];
  const base = prefix === '/' || prefix === '' ? '' : normalizeLayerPath(prefix);
  if (base) out.push({ path: base, type: 'dir', mode: 0o755 });
  const walk = async (abs: string, rel: string) => {
    const names = (await readdir(abs)).sort();
    for (const name of names) {
      const relPath = rel ? `${rel}/${name}` : name;
      if (options.exclude?.(relPath)) continue;
      const full = join(abs, name);
      const st = await lstat(full);
      const path = base ? `${base}/${relPath}` : relPath;
      const mode = st.mode & 0o7777;
      if (st.isDirectory()) {
        out.push({ path, type: 'dir', mode });
        await walk(full, relPath);
      } else if (st.isFile()) out.push({ path, type: 'file', source: full, size: st.size, mode });
      else if (st.isSymbolicLink()) out.push({ path, type: 'symlink', target: await readlink(full) });
      else throw validationError('image-unsupported-file', `${full} is neither a file, a directory nor a symlink`, { place: full });
    }
  };
  await walk(dir, '');
  return out;
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Sorts entries, adds missing parent directories, and rejects duplicates; sizes of disk files are filled in. */
export async function normalizeEntries(entries: LayerEntry[], options: TarOptions = {}): Promise<LayerEntry[]> {
  const map = new Map<string, LayerEntry>();
  for (const e of entries) {
    const path = normalizeLayerPath(e.path);
    const prev = map.get(path);
    if (prev && !(prev.type === 'dir' && e.type === 'dir')) throw validationError('image-duplicate-path', `"${path}" appears twice in one layer`);
    let entry = { ...e, path } as LayerEntry;
    if (entry.type === 'file' && 'source' in entry && entry.size < 0) {
      const st = await lstat(entry.source);
      if (!st.isFile()) throw validationError('image-unsupported-file', `${entry.source} is not a regular file`, { place: entry.source });
      entry = { ...entry, size: st.size, mode: entry.mode ?? st.mode & 0o7777 };
    }
    map.set(path, entry);
  }
  for (const path of [...map.keys()]) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const existing = map.get(dir);
      if (!existing) map.set(dir, { path: dir, type: 'dir', mode: options.dirMode ?? 0o755 });
      else if (existing.type !== 'dir') throw validationError('image-bad-path', `"${dir}" is both a ${existing.type} and a directory`);
    }
  }
  return [...map.values()].sort(byPath);
}

/** A tar stream of already-normalised entries. */
export function tarStream(entries: LayerEntry[], options: TarOptions = {}): Readable {
  const mtime = new Date((options.mtime ?? sourceDateEpoch()) * 1000);
  const uid = options.uid ?? 0;
  const gid = options.gid ?? 0;
  const pack = tar.pack();
  const out = new PassThrough();
  pack.on('error', (err: Error) => out.destroy(err));
  pack.pipe(out as unknown as NodeJS.WritableStream);
  const add = (header: Partial<tar.Header> & { name: string }, body?: Buffer | Readable) =>
    new Promise<void>((resolve, reject) => {
      if (body === undefined) {
        pack.entry(header, (err) => (err ? reject(err) : resolve()));
        return;
      }
      if (Buffer.isBuffer(body)) {
        pack.entry(header, body, (err) => (err ? reject(err) : resolve()));
        return;
      }
      const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
      body.on('error', (err) => {
        sink.destroy(err);
        reject(err);
      });
      body.pipe(sink as unknown as NodeJS.WritableStream);
    });
  (async () => {
    for (const e of entries) {
      const common = { mtime, uid: e.uid ?? uid, gid: e.gid ?? gid, uname: '', gname: '' };
      switch (e.type) {
        case 'dir':
          await add({ ...common, name: `${e.path}/`, type: 'directory', mode: e.mode ?? 0o755 });
          break;
        case 'symlink':
          await add({ ...common, name: e.path, type: 'symlink', linkname: e.target, mode: 0o777 });
          break;
        case 'hardlink':
          await add({ ...common, name: e.path, type: 'link', linkname: e.target, mode: 0o644 });
          break;
        case 'file':
          if ('content' in e) {
            const data = Buffer.from(typeof e.content === 'string' ? Buffer.from(e.content, 'utf8') : e.content);
            await add({ ...common, name: e.path, type: 'file', mode: e.mode ?? 0o644, size: data.length }, data);
          } else {
            await add({ ...common, name: e.path, type: 'file', mode: e.mode ?? 0o644, size: e.size }, createReadStream(e.source));
          }
          break;
      }
    }
    pack.finalize();
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** One entry of a tar read back whole (archives small enough to hold in memory: charts, test layers). */
export interface TarEntry {
  name: string;
  type: string;
  mode: number;
  /** Seconds since the epoch. */
  mtime: number;
  uid: number;
  gid: number;
  uname: string;
  content: Buffer;
}

/** Reads every entry of a tar, or of a gzipped tar with `gzip: true`, in archive order. */
export async function readTar(bytes: Uint8Array, options: { gzip?: boolean } = {}): Promise<TarEntry[]> {
  const extract = tar.extract();
  const out: TarEntry[] = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out.push({
          name: h.name,
          type: h.type ?? 'file',
          mode: h.mode ?? 0,
          mtime: Math.floor((h.mtime?.getTime() ?? 0) / 1000),
          uid: h.uid ?? 0,
          gid: h.gid ?? 0,
          uname: h.uname ?? '',
          content: Buffer.concat(chunks),
        });
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  const source = Readable.from([Buffer.from(bytes)]);
  if (options.gzip) {
    const gunzip = createGunzip();
    gunzip.on('error', (err) => extract.destroy(err));
    source.pipe(gunzip).pipe(extract);
  } else {
    source.pipe(extract);
  }
  await done;
  return out;
}
