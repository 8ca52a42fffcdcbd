/**
 * Copies a graph of content (an image, an index and its images, an artifact) from one store to another,
 * as oras-go's `oras.Copy` does: the root is resolved in the source; every node is first checked in the
 * destination (HEAD) and skipped, with its subtree, when present; children are stored before their
 * parents and the root manifest last, then tagged; at most `concurrency` (3) transfers run at once;
 * blobs are mounted across repositories of the same registry; non-distributable layers are not copied.
 * A failed copy never writes the tag.
 */
import { environmentError } from '../../lib/errors.js';
import { isManifestOrIndex, isNonDistributable, successors, type Descriptor } from './content.js';
import { isDigest } from './digest.js';
import { RemoteRepository } from './remote.js';
import type { Store } from './store.js';

export interface CopyEvents {
  /** A node was already in the destination (its subtree is skipped). */
  onSkipped?(desc: Descriptor): void;
  /** A blob was mounted from another repository of the same registry. */
  onMounted?(desc: Descriptor, from: string): void;
  /** A node was written to the destination. */
  onCopied?(desc: Descriptor): void;
  /** Bytes of a blob sent so far. */
  onProgress?(desc: Descriptor, done: number, total: number): void;
}

export interface CopyOptions extends CopyEvents {
  /** Transfers at once (default 3, as oras-go). */
  concurrency?: number;
  /** Force (true) or forbid (false) chunked uploads to a registry; default: by size. */
  chunked?: boolean;
  /** Try cross-repository mounts when both stores are repositories of one registry (default true). */
  mount?: boolean;
  signal?: AbortSignal;
}

export interface CopyResult {
  /** The root that was copied (as resolved in the source). */
  root: Descriptor;
  /** Nodes written, skipped because present, and blobs mounted. */
  copied: number;
  skipped: number;
  mounted: number;
}

/** A counting semaphore. */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(readonly max: number) {
    if (max < 1) throw new Error('concurrency must be at least 1');
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Copies `srcRef` (a tag or digest in `src`) to `dst`, tagged `dstRef` when it is a tag (default: the
 * source tag; with a digest, untagged).
 */
export async function copy(src: Store, srcRef: string, dst: Store, dstRef?: string, options: CopyOptions = {}): Promise<CopyResult> {
  const root = await src.resolve(srcRef, options.signal);
  const tag = dstRef !== undefined ? (isDigest(dstRef) ? undefined : dstRef) : isDigest(srcRef) ? undefined : srcRef;
  if (dstRef !== undefined && isDigest(dstRef) && dstRef !== root.digest) {
    throw environmentError('oci-digest-mismatch', `${src.description}: ${srcRef} is ${root.digest}, not the requested destination digest ${dstRef}`);
  }
  const result = await copyGraph(src, dst, root, { ...options, ...(tag !== undefined ? { tag } : {}) });
  return result;
}

/** Copies the graph under `root`; with `tag`, the root is pushed under that tag once everything else is stored. */
export async function copyGraph(src: Store, dst: Store, root: Descriptor, options: CopyOptions & { tag?: string } = {}): Promise<CopyResult> {
  const limiter = new Limiter(options.concurrency ?? 3);
  const controller = new AbortController();
  const outer = options.signal;
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  const signal = controller.signal;
  const started = new Map<string, Promise<void>>();
  const stats = { copied: 0, skipped: 0, mounted: 0 };
  const mountFrom = options.mount !== false && dst instanceof RemoteRepository && dst.sameRegistry(src) && src instanceof RemoteRepository && src.repository !== dst.repository ? src.repository : undefined;

  const visit = (desc: Descriptor): Promise<void> => {
    let p = started.get(desc.digest);
    if (!p) {
      p = copyNode(desc);
      started.set(desc.digest, p);
      // Stop starting new work as soon as anything fails.
      p.catch((err) => controller.abort(err));
    }
    return p;
  };

  const copyNode = async (desc: Descriptor): Promise<void> => {
    if (signal.aborted) throw signal.reason;
    if (isNonDistributable(desc.mediaType)) return;
    if (isManifestOrIndex(desc.mediaType)) {
      const bytes = await limiter.run(async () => {
        if (await dst.exists(desc, signal)) return undefined;
        return src.fetchManifest(desc, signal);
      });
      if (!bytes) {
        stats.skipped++;
        options.onSkipped?.(desc);
        return;
      }
      await Promise.all(successors(desc, bytes).map(visit));
      await limiter.run(() => dst.pushManifest(desc, bytes, { signal }));
      stats.copied++;
      options.onCopied?.(desc);
      return;
    }
    await limiter.run(async () => {
      if (await dst.exists(desc, signal)) {
        stats.skipped++;
        options.onSkipped?.(desc);
        return;
      }
      let mounted = false;
      await dst.pushBlob(desc, (offset) => src.fetchBlob(desc, { offset, signal }), {
        signal,
        ...(mountFrom ? { mountFrom, onMounted: () => (mounted = true) } : {}),
        ...(options.chunked !== undefined ? { chunked: options.chunked } : {}),
        onProgress: (done, total) => options.onProgress?.(desc, done, total),
      });
      if (mounted) {
        stats.mounted++;
        options.onMounted?.(desc, mountFrom!);
      } else stats.copied++;
      options.onCopied?.(desc);
    });
  };

  try {
    if (!isManifestOrIndex(root.mediaType)) {
      await visit(root);
      return { root, ...stats };
    }
    // The root: children first, then the manifest with its tag in one step, even if already present.
    const bytes = await limiter.run(() => src.fetchManifest(root, signal));
    const present = await limiter.run(() => dst.exists(root, signal));
    if (!present) await Promise.all(successors(root, bytes).map(visit));
    else {
      stats.skipped++;
      options.onSkipped?.(root);
    }
    if (!present || options.tag !== undefined) {
      await limiter.run(() => dst.pushManifest(root, bytes, { ...(options.tag !== undefined ? { tag: options.tag } : {}), signal }));
      if (!present) {
        stats.copied++;
        options.onCopied?.(root);
      }
    }
    if (options.tag === undefined && !present) await dst.tag(root, root.digest, signal);
    return { root, ...stats };
  } catch (err) {
    controller.abort(err);
    // Let in-flight transfers settle so no work continues after we return.
    await Promise.allSettled([...started.values()]);
    throw err;
  } finally {
    outer?.removeEventListener('abort', onOuterAbort);
  }
}
