/**
 * One layer: a deterministic tar, hashed uncompressed (the diff_id) and compressed (the blob digest),
 * written to a temporary file so that it can be pushed, retried and resumed without being held in memory.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { MediaType, type Descriptor } from '../oci/content.js';
import { DigestStream } from '../oci/digest.js';
import { deterministicGzip } from './gzip.js';
import { entriesFromDir, entriesFromFiles, normalizeEntries, tarStream, type FileSpec, type LayerEntry, type TarOptions } from './tar.js';

export type LayerContent =
  /** Files by path in the image. */
  | { files: Record<string, FileSpec> | LayerEntry[] }
  /** A directory tree on disk, placed at `prefix` (default `/`). */
  | { dir: string; prefix?: string; exclude?: (relPath: string) => boolean };

export type LayerSpec = LayerContent & {
  /** Owner of the layer's entries (default 0:0); entries may set their own. */
  uid?: number;
  gid?: number;
  /** `created_by` in the image history (default "olmpub image build"). */
  createdBy?: string;
  comment?: string;
};

export interface BuiltLayer {
  descriptor: Descriptor;
  /** sha256 of the uncompressed tar. */
  diffId: string;
  /** The compressed blob on disk. */
  path: string;
  uncompressedSize: number;
}

export interface LayerBuildOptions extends TarOptions {
  /** Where the blob file goes. */
  workDir: string;
  compression?: 'gzip' | 'none';
  gzipLevel?: number;
}

export async function layerEntries(spec: LayerContent): Promise<LayerEntry[]> {
  if ('files' in spec) return entriesFromFiles(spec.files);
  return entriesFromDir(spec.dir, spec.prefix ?? '/', spec.exclude ? { exclude: spec.exclude } : {});
}

/** Builds one layer from its spec into `workDir`. */
export async function buildLayer(spec: LayerSpec, options: LayerBuildOptions): Promise<BuiltLayer> {
  const tarOptions: TarOptions = {
    ...(options.mtime !== undefined ? { mtime: options.mtime } : {}),
    uid: spec.uid ?? options.uid ?? 0,
    gid: spec.gid ?? options.gid ?? 0,
    ...(options.dirMode !== undefined ? { dirMode: options.dirMode } : {}),
  };
  const entries = await normalizeEntries(await layerEntries(spec), tarOptions);
  const path = join(options.workDir, `layer-${randomBytes(6).toString('hex')}`);
  const uncompressed = new DigestStream();
  const compressed = new DigestStream();
  const gzip = options.compression !== 'none';
  await pipeline(
    tarStream(entries, tarOptions),
    uncompressed,
    ...(gzip ? [deterministicGzip(options.gzipLevel !== undefined ? { level: options.gzipLevel } : {})] : []),
    compressed,
    createWriteStream(path),
  );
  return {
    descriptor: { mediaType: gzip ? MediaType.LayerGzip : MediaType.Layer, digest: compressed.digest, size: compressed.bytes },
    diffId: uncompressed.digest,
    path,
    uncompressedSize: uncompressed.bytes,
  };
}
