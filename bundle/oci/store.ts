/**
 * One interface for every place content lives (an OCI layout on disk, a remote repository), so `copy`
 * moves images between any two of them. Modelled on oras-go's `content.Storage` + `TagResolver`.
 */
import { Readable } from 'node:stream';
import { createReadStream } from 'node:fs';
import type { Descriptor } from './content.js';

/**
 * Opens a blob's bytes from `offset` on. Called again to retry or resume an upload, so it must be able
 * to start over (a file, a buffer, or a ranged GET from another store).
 */
export type BlobSource = (offset: number) => Promise<Readable>;

export interface PushBlobOptions {
  /** Called as bytes go out: how many of `total` have been sent. */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** Remote only: try a cross-repository mount from this repository of the same registry first. */
  mountFrom?: string;
  /** Remote only: called when the registry satisfied the upload with a mount. */
  onMounted?: () => void;
  /** Remote only: force (true) or forbid (false) a chunked PATCH upload; default: chunked above the store's threshold. */
  chunked?: boolean;
}

export interface Store {
  /** How the store is named in messages: `oci:PATH` or `host/repository`. */
  readonly description: string;
  /** Whether the blob or manifest is present (a HEAD on a registry). */
  exists(desc: Descriptor, signal?: AbortSignal): Promise<boolean>;
  /** A blob's bytes; verified against the descriptor when read from the start. */
  fetchBlob(desc: Descriptor, options?: { offset?: number; signal?: AbortSignal }): Promise<Readable>;
  /** Stores a blob; the store checks its digest and size. */
  pushBlob(desc: Descriptor, source: BlobSource, options?: PushBlobOptions): Promise<void>;
  /** A manifest or index by digest, verified, at most 4 MiB. */
  fetchManifest(desc: Descriptor, signal?: AbortSignal): Promise<Uint8Array>;
  /** Stores a manifest or index; with `tag`, the tag points at it once it is stored (in one step on a registry). */
  pushManifest(desc: Descriptor, bytes: Uint8Array, options?: { tag?: string; signal?: AbortSignal }): Promise<void>;
  /** Points `tag` at a manifest already in the store. */
  tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void>;
  /** The descriptor a tag or digest names. */
  resolve(reference: string, signal?: AbortSignal): Promise<Descriptor>;
}

/** A source over bytes in memory. */
export function bufferSource(data: Uint8Array): BlobSource {
  return async (offset: number) => Readable.from([Buffer.from(data.buffer, data.byteOffset + offset, data.byteLength - offset)], { objectMode: false });
}

/** A source over a file. */
export function fileSource(path: string): BlobSource {
  return async (offset: number) => createReadStream(path, { start: offset });
}

/** Reads a whole stream (for small content only). */
export async function readAll(stream: Readable, limit = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    n += b.length;
    if (n > limit) {
      stream.destroy();
      throw new Error(`content exceeds the ${limit}-byte limit`);
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}
