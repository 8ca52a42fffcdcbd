/**
 * Unpacks an image's layers into a root filesystem directory, applying OCI whiteouts (`.wh.NAME` removes
 * NAME from lower layers, `.wh..wh..opq` empties a directory of lower-layer content). Paths are resolved
 * inside the root: `..` and symlinks never lead outside it. Device nodes and FIFOs are skipped. Meant for
 * checks such as running the entrypoint under chroot.
 */
import { createWriteStream } from 'node:fs';
import { chmod, lchown, link, lstat, mkdir, readdir, readlink, rm, symlink, utimes } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { validationError } from '../../lib/errors.js';
import { MediaType, type Descriptor, type ImageConfig, type ImageManifest, type Platform } from '../oci/content.js';
import type { Store } from '../oci/store.js';
import { readImage } from './build.js';

export interface UnpackOptions {
  platform?: Platform;
  /** Apply uid/gid from the layers (default: when running as root). */
  preserveOwner?: boolean;
  signal?: AbortSignal;
}

export interface UnpackResult {
  manifest: ImageManifest;
  config: ImageConfig;
  /** Entries skipped (devices, FIFOs). */
  skipped: string[];
}

const WHITEOUT_PREFIX = '.wh.';
const OPAQUE = '.wh..wh..opq';

/** Resolves a path inside `root`, following symlinks in the parent components within the root. */
export async function resolveInRoot(root: string, relPath: string, followLast = false): Promise<string> {
  const parts = posix.normalize(`/${relPath}`).split('/').filter(Boolean);
  const resolved: string[] = [];
  let hops = 0;
  while (parts.length) {
    const part = parts.shift()!;
    if (part === '.' || part === '') continue;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const candidate = join(root, ...resolved, part);
    const isLast = parts.length === 0;
    if (!isLast || followLast) {
      let st;
      try {
        st = await lstat(candidate);
      } catch {
        st = undefined;
      }
      if (st?.isSymbolicLink()) {
        if (++hops > 255) throw validationError('image-symlink-loop', `too many symlinks resolving ${relPath}`);
        const target = await readlink(candidate);
        const targetParts = target.split('/').filter(Boolean);
        if (target.startsWith('/')) resolved.length = 0;
        parts.unshift(...targetParts);
        continue;
      }
    }
    resolved.push(part);
  }
  return join(root, ...resolved);
}

async function removeAll(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/** Applies one uncompressed layer tar to `root`. */
export async function applyLayer(root: string, layer: Readable, options: { preserveOwner?: boolean } = {}): Promise<string[]> {
  const skipped: string[] = [];
  const createdHere = new Set<string>();
  const preserveOwner = options.preserveOwner ?? process.getuid?.() === 0;
  const extract = tar.extract();
  const handle = async (header: tar.Header, stream: Readable) => {
    const name = posix.normalize(`/${header.name}`).replace(/\/+$/, '');
    if (name === '/' || name === '') {
      stream.resume();
      return;
    }
    const dir = posix.dirname(name);
    const base = posix.basename(name);
    if (base === OPAQUE) {
      stream.resume();
      const target = await resolveInRoot(root, dir, true);
      let names: string[] = [];
      try {
        names = await readdir(target);
      } catch {
        names = [];
      }
      for (const n of names) if (!createdHere.has(posix.join(dir, n))) await removeAll(join(target, n));
      return;
    }
    if (base.startsWith(WHITEOUT_PREFIX)) {
      stream.resume();
      const victim = posix.join(dir, base.slice(WHITEOUT_PREFIX.length));
      if (!createdHere.has(victim)) await removeAll(await resolveInRoot(root, victim));
      return;
    }
    const parent = await resolveInRoot(root, dir, true);
    await mkdir(parent, { recursive: true });
    const target = join(parent, base);
    createdHere.add(name);
    const existing = await lstat(target).catch(() => undefined);
    const mode = header.mode & 0o7777;
    switch (header.type) {
      case 'directory': {
        if (existing && !existing.isDirectory()) await removeAll(target);
        if (!existing || !existing.isDirectory()) await mkdir(target);
        await chmod(target, mode);
        stream.resume();
        break;
      }
      case 'file':
      case 'contiguous-file': {
        if (existing) await removeAll(target);
        await pipeline(stream, createWriteStream(target, { mode: 0o600 }));
        await chmod(target, mode);
        await utimes(target, header.mtime, header.mtime);
        break;
      }
      case 'symlink': {
        stream.resume();
        if (existing) await removeAll(target);
        await symlink(header.linkname, target);
        break;
      }
      case 'link': {
        stream.resume();
        if (existing) await removeAll(target);
        const source = await resolveInRoot(root, header.linkname);
        await link(source, target);
        break;
      }
      default:
        stream.resume();
        skipped.push(`${name} (${header.type})`);
        return;
    }
    if (preserveOwner) await lchown(target, header.uid, header.gid).catch(() => undefined);
  };
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      handle(header, stream as unknown as Readable).then(
        () => next(),
        (err: unknown) => {
          (stream as unknown as Readable).resume();
          next(err as Error);
        },
      );
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  layer.on('error', (err) => extract.destroy(err));
  layer.pipe(extract as unknown as NodeJS.WritableStream);
  await done;
  return skipped;
}

/** A layer blob as an uncompressed tar stream. */
export async function openLayer(store: Store, desc: Descriptor, signal?: AbortSignal): Promise<Readable> {
  const blob = await store.fetchBlob(desc, signal ? { signal } : {});
  if (desc.mediaType === MediaType.LayerGzip || desc.mediaType === MediaType.DockerLayerGzip || desc.mediaType === MediaType.LayerNonDistributableGzip) {
    const gunzip = createGunzip();
    blob.on('error', (err) => gunzip.destroy(err));
    return blob.pipe(gunzip);
  }
  if (desc.mediaType === MediaType.Layer || desc.mediaType === MediaType.LayerNonDistributable) return blob;
  blob.destroy();
  throw validationError('image-layer-type', `cannot unpack a layer of type ${desc.mediaType}`, { hint: 'olmpub unpacks tar and tar+gzip layers' });
}

/** Unpacks every layer of `reference` in `store` into `root` (created if missing), in order. */
export async function unpackImage(store: Store, reference: string, root: string, options: UnpackOptions = {}): Promise<UnpackResult> {
  const image = await readImage(store, reference, options.platform, options.signal);
  await mkdir(root, { recursive: true });
  const skipped: string[] = [];
  for (const layer of image.manifest.layers) {
    skipped.push(...(await applyLayer(root, await openLayer(store, layer, options.signal), options.preserveOwner !== undefined ? { preserveOwner: options.preserveOwner } : {})));
  }
  return { manifest: image.manifest, config: image.config, skipped };
}
