/**
 * An OCI image layout on disk (image-spec `image-layout.md`): `oci-layout`, `index.json` whose entries
 * carry tags in `org.opencontainers.image.ref.name`, and `blobs/<alg>/<hex>`. Every write is atomic
 * (temporary file, verified, renamed); `index.json` is rewritten last, after the content it names.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { environmentError, validationError } from '../../lib/errors.js';
import { writeFileAtomic } from '../../lib/fsx.js';
import { Annotation, MAX_MANIFEST_BYTES, MediaType, isManifestOrIndex, type Descriptor, type ImageIndex } from './content.js';
import { DigestStream, checkDigest, digestAlgorithm, digestHex, isDigest, verifyBytes } from './digest.js';
import { isValidTag } from './reference.js';
import type { BlobSource, PushBlobOptions, Store } from './store.js';

export const OCI_LAYOUT_FILE = 'oci-layout';
export const OCI_LAYOUT_VERSION = '1.0.0';

export class OciLayoutStore implements Store {
  readonly description: string;
  private initialised?: Promise<void>;
  /** Serialises index.json updates within this process. */
  private indexLock: Promise<unknown> = Promise.resolve();

  constructor(readonly root: string) {
    this.description = `oci:${root}`;
  }

  blobPath(digest: string): string {
    return join(this.root, 'blobs', digestAlgorithm(digest), digestHex(digest));
  }

  /** Creates `oci-layout` and an empty `index.json` when missing; refuses a directory that is another layout version. */
  init(): Promise<void> {
    this.initialised ??= (async () => {
      await mkdir(join(this.root, 'blobs', 'sha256'), { recursive: true });
      const layoutFile = join(this.root, OCI_LAYOUT_FILE);
      let text: string | undefined;
      try {
        text = await readFile(layoutFile, 'utf8');
      } catch {
        await writeFileAtomic(layoutFile, JSON.stringify({ imageLayoutVersion: OCI_LAYOUT_VERSION }));
      }
      if (text !== undefined) this.checkLayoutFile(text);
      try {
        await stat(join(this.root, 'index.json'));
      } catch {
        await this.writeIndex({ schemaVersion: 2, mediaType: MediaType.ImageIndex, manifests: [] });
      }
    })();
    this.initialised.catch(() => (this.initialised = undefined));
    return this.initialised;
  }

  private checkLayoutFile(text: string): void {
    let version: unknown;
    try {
      version = (JSON.parse(text) as { imageLayoutVersion?: unknown }).imageLayoutVersion;
    } catch {
      version = undefined;
    }
    if (version !== OCI_LAYOUT_VERSION) {
      throw validationError('oci-layout-version', `${this.root}/oci-layout does not declare imageLayoutVersion ${OCI_LAYOUT_VERSION}`, {
        place: join(this.root, OCI_LAYOUT_FILE),
      });
    }
  }

  /** Reads index.json; a directory without oci-layout is not a layout. */
  async readIndex(): Promise<ImageIndex> {
    let layoutText: string;
    try {
      layoutText = await readFile(join(this.root, OCI_LAYOUT_FILE), 'utf8');
    } catch {
      throw environmentError('oci-layout-missing', `${this.root} is not an OCI image layout (no oci-layout file)`, {
        hint: 'write the layout first (olmpub image copy SRC oci:PATH:TAG), or check the path',
      });
    }
    this.checkLayoutFile(layoutText);
    let index: ImageIndex;
    try {
      index = JSON.parse(await readFile(join(this.root, 'index.json'), 'utf8')) as ImageIndex;
    } catch (err) {
      throw validationError('oci-layout-index', `${this.root}/index.json cannot be read: ${(err as Error).message}`, { place: join(this.root, 'index.json') });
    }
    if (!Array.isArray(index.manifests)) {
      throw validationError('oci-layout-index', `${this.root}/index.json has no manifests array`, { place: join(this.root, 'index.json') });
    }
    return index;
  }

  private async writeIndex(index: ImageIndex): Promise<void> {
    // Deterministic: entries sorted by tag, then digest, whatever order the tags were written in.
    const key = (d: Descriptor) => `${d.annotations?.[Annotation.RefName] ?? ''}\u0000${d.digest}`;
    const manifests = [...index.manifests].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const out = { schemaVersion: 2, mediaType: MediaType.ImageIndex, manifests, ...(index.annotations ? { annotations: index.annotations } : {}) };
    await writeFileAtomic(join(this.root, 'index.json'), JSON.stringify(out, null, 2) + '\n');
  }

  private updateIndex(change: (index: ImageIndex) => ImageIndex): Promise<void> {
    const next = this.indexLock.then(async () => {
      await this.init();
      await this.writeIndex(change(await this.readIndex()));
    });
    this.indexLock = next.catch(() => undefined);
    return next;
  }

  async exists(desc: Descriptor): Promise<boolean> {
    try {
      const s = await stat(this.blobPath(desc.digest));
      return s.isFile() && s.size === desc.size;
    } catch {
      return false;
    }
  }

  async fetchBlob(desc: Descriptor, options: { offset?: number } = {}): Promise<Readable> {
    const path = this.blobPath(desc.digest);
    try {
      await stat(path);
    } catch {
      throw environmentError('oci-not-found', `${this.description}: blob ${desc.digest} not found`, { place: path });
    }
    const offset = options.offset ?? 0;
    const file = createReadStream(path, { start: offset });
    if (offset > 0) return file;
    const check = new DigestStream({ digest: desc.digest, size: desc.size, where: this.description });
    file.on('error', (err) => check.destroy(err));
    return file.pipe(check);
  }

  async pushBlob(desc: Descriptor, source: BlobSource, options: PushBlobOptions = {}): Promise<void> {
    checkDigest(desc.digest);
    await this.init();
    if (await this.exists(desc)) return;
    const target = this.blobPath(desc.digest);
    await mkdir(join(this.root, 'blobs', digestAlgorithm(desc.digest)), { recursive: true });
    const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    let done = 0;
    const progress = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        done += chunk.length;
        options.onProgress?.(done, desc.size);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(
        await source(0),
        new DigestStream({ digest: desc.digest, size: desc.size, where: `${this.description}: blob` }),
        progress,
        createWriteStream(tmp),
        ...(options.signal ? [{ signal: options.signal }] : []),
      );
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async fetchManifest(desc: Descriptor): Promise<Uint8Array> {
    if (desc.size > MAX_MANIFEST_BYTES) {
      throw validationError('oci-manifest-too-large', `${this.description}: manifest ${desc.digest} is ${desc.size} bytes, above the ${MAX_MANIFEST_BYTES}-byte limit`);
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(this.blobPath(desc.digest));
    } catch {
      throw environmentError('oci-not-found', `${this.description}: manifest ${desc.digest} not found`, { place: this.blobPath(desc.digest) });
    }
    verifyBytes(bytes, desc, this.description);
    return bytes;
  }

  async pushManifest(desc: Descriptor, bytes: Uint8Array, options: { tag?: string } = {}): Promise<void> {
    verifyBytes(bytes, desc, `${this.description}: manifest`);
    await this.init();
    if (!(await this.exists(desc))) await writeFileAtomic(this.blobPath(desc.digest), bytes);
    if (options.tag !== undefined) await this.tag(desc, options.tag);
  }

  /**
   * Points `tag` at `desc` in index.json (replacing the tag's previous entry). A digest instead of a tag
   * records the manifest as an untagged root, so the layout still names it.
   */
  async tag(desc: Descriptor, tag: string): Promise<void> {
    if (!isDigest(tag) && !isValidTag(tag)) {
      throw validationError('oci-bad-reference', `"${tag}" is not a valid tag`, { hint: 'a tag is up to 128 letters, digits, "_", "." and "-"' });
    }
    if (!(await this.exists(desc))) {
      throw environmentError('oci-not-found', `${this.description}: cannot tag ${desc.digest}: it is not in the layout`);
    }
    const entry: Descriptor = { mediaType: desc.mediaType, digest: desc.digest, size: desc.size };
    if (desc.platform) entry.platform = desc.platform;
    if (desc.artifactType) entry.artifactType = desc.artifactType;
    await this.updateIndex((index) => {
      if (isDigest(tag)) {
        if (index.manifests.some((d) => d.digest === desc.digest)) return index;
        return { ...index, manifests: [...index.manifests, entry] };
      }
      const others = index.manifests.filter((d) => d.annotations?.[Annotation.RefName] !== tag);
      return { ...index, manifests: [...others, { ...entry, annotations: { [Annotation.RefName]: tag } }] };
    });
  }

  /** The tags in index.json, sorted. */
  async tags(): Promise<string[]> {
    const index = await this.readIndex();
    return [...new Set(index.manifests.map((d) => d.annotations?.[Annotation.RefName]).filter((t): t is string => !!t))].sort();
  }

  async resolve(reference: string): Promise<Descriptor> {
    const index = await this.readIndex();
    if (isDigest(reference)) {
      const listed = index.manifests.find((d) => d.digest === reference);
      if (listed) return { mediaType: listed.mediaType, digest: listed.digest, size: listed.size };
      const path = this.blobPath(reference);
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch {
        throw environmentError('oci-not-found', `${this.description}: ${reference} not found`);
      }
      return { mediaType: sniffManifestType(bytes, reference), digest: reference, size: bytes.length };
    }
    const matches = index.manifests.filter((d) => d.annotations?.[Annotation.RefName] === reference);
    if (matches.length === 0) {
      const tags = await this.tags();
      throw environmentError('oci-not-found', `${this.description}: tag "${reference}" not found`, {
        hint: tags.length ? `tags in this layout: ${tags.join(', ')}` : 'the layout has no tags',
      });
    }
    const d = matches[matches.length - 1]!;
    return { mediaType: d.mediaType, digest: d.digest, size: d.size, ...(d.platform ? { platform: d.platform } : {}) };
  }
}

/** The media type of a manifest read without its descriptor: its `mediaType` field, else its shape. */
export function sniffManifestType(bytes: Uint8Array, digest: string): string {
  let m: { mediaType?: unknown; manifests?: unknown; config?: unknown; schemaVersion?: unknown };
  try {
    m = JSON.parse(Buffer.from(bytes).toString('utf8')) as typeof m;
  } catch {
    throw validationError('oci-bad-manifest', `${digest} is not a manifest (not JSON)`);
  }
  if (typeof m.mediaType === 'string' && isManifestOrIndex(m.mediaType)) return m.mediaType;
  if (Array.isArray(m.manifests)) return MediaType.ImageIndex;
  if (m.config && typeof m.config === 'object') return MediaType.ImageManifest;
  throw validationError('oci-bad-manifest', `${digest} is not a manifest or index`);
}
