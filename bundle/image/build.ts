/**
 * Builds an OCI image without a daemon: new deterministic layers on top of an optional base image read
 * from any Store, an image config (platform, entrypoint, cmd, env, user, working dir, labels, diff_ids,
 * history), an OCI manifest and optionally an index, all written into a Store: blobs first, then the
 * manifest, the tag last. Same inputs, same digests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJSON } from '../../lib/canonical.js';
import { validationError } from '../../lib/errors.js';
import {
  MediaType,
  isIndexType,
  isManifestType,
  parseManifest,
  type Descriptor,
  type ImageConfig,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from '../oci/content.js';
import { copyGraph } from '../oci/copy.js';
import { sha256, verifyBytes } from '../oci/digest.js';
import { rfc3339 } from '../oci/helm.js';
import { bufferSource, fileSource, readAll, type Store } from '../oci/store.js';
import { buildLayer, type BuiltLayer, type LayerSpec } from './layer.js';
import { hostPlatform, selectPlatform } from './platform.js';
import { sourceDateEpoch } from './tar.js';

export interface ImageConfigSpec {
  entrypoint?: string[];
  /** Default arguments; when `entrypoint` is set and `cmd` is not, the base image's Cmd is dropped (as Docker does). */
  cmd?: string[];
  /** Environment; merged over the base image's by variable name. */
  env?: Record<string, string> | string[];
  /** `uid[:gid]` or a name. */
  user?: string;
  workingDir?: string;
  /** Merged over the base image's labels. */
  labels?: Record<string, string>;
  /** e.g. `["8080/tcp"]`. */
  exposedPorts?: string[];
  stopSignal?: string;
}

export interface BaseImage {
  store: Store;
  /** A tag or digest in `store`. */
  reference: string;
}

export interface BuildImageOptions {
  /** Where the image is written. */
  store: Store;
  base?: BaseImage;
  layers: LayerSpec[];
  config?: ImageConfigSpec;
  /** Default: the base image's, else the host's (linux/amd64 here). */
  platform?: Platform;
  /** Seconds since the epoch for `created`, history and file mtimes (default SOURCE_DATE_EPOCH, else 0). */
  created?: number;
  /** Manifest annotations. */
  annotations?: Record<string, string>;
  /** Tag for the root (the index when `index` is set, else the manifest). */
  tag?: string;
  /** Also write an OCI index naming the manifest with its platform. */
  index?: boolean | { annotations?: Record<string, string> };
  compression?: 'gzip' | 'none';
  gzipLevel?: number;
  /** Temporary directory for layer blobs (default: a new one under the OS temp dir, removed afterwards). */
  workDir?: string;
  signal?: AbortSignal;
}

export interface BuiltImage {
  /** What to pull: the index when one was written, else the manifest. */
  root: Descriptor;
  manifest: { descriptor: Descriptor; json: ImageManifest; bytes: Buffer };
  config: { descriptor: Descriptor; json: ImageConfig; bytes: Buffer };
  index?: { descriptor: Descriptor; json: ImageIndex; bytes: Buffer };
  /** Every layer blob of the image, base layers first. */
  blobs: Descriptor[];
  /** The layers this build added. */
  layers: Array<{ descriptor: Descriptor; diffId: string; uncompressedSize: number }>;
}

/** The base image's manifest and config, for the platform wanted. */
export async function readImage(
  store: Store,
  reference: string,
  platform?: Platform,
  signal?: AbortSignal,
): Promise<{ descriptor: Descriptor; manifest: ImageManifest; config: ImageConfig; configDescriptor: Descriptor }> {
  let desc = await store.resolve(reference, signal);
  if (isIndexType(desc.mediaType)) {
    const index = parseManifest(await store.fetchManifest(desc, signal), desc) as ImageIndex;
    desc = selectPlatform(index, platform ?? hostPlatform(), `${store.description}:${reference}`);
  }
  if (!isManifestType(desc.mediaType)) {
    throw validationError('image-not-an-image', `${store.description}:${reference} is ${desc.mediaType}, not an image manifest`);
  }
  const manifest = parseManifest(await store.fetchManifest(desc, signal), desc) as ImageManifest;
  const cfgDesc = manifest.config;
  if (cfgDesc.mediaType !== MediaType.ImageConfig && cfgDesc.mediaType !== MediaType.DockerConfig) {
    throw validationError('image-not-an-image', `${store.description}:${reference} is an artifact (config ${cfgDesc.mediaType}), not a container image`);
  }
  const bytes = await readAll(await store.fetchBlob(cfgDesc, signal ? { signal } : {}), 16 * 1024 * 1024);
  verifyBytes(bytes, cfgDesc, `${store.description}: image config`);
  const config = JSON.parse(bytes.toString('utf8')) as ImageConfig;
  if (!config.rootfs || !Array.isArray(config.rootfs.diff_ids) || config.rootfs.diff_ids.length !== manifest.layers.length) {
    throw validationError('image-bad-config', `${store.description}:${reference}: rootfs.diff_ids does not match the ${manifest.layers.length} layers`);
  }
  return { descriptor: desc, manifest, config, configDescriptor: cfgDesc };
}

function envList(env: Record<string, string> | string[] | undefined): string[] {
  if (!env) return [];
  return Array.isArray(env) ? env : Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** Merges `KEY=VALUE` lists by key; later wins, first position kept. */
export function mergeEnv(base: string[], over: string[]): string[] {
  const out = new Map<string, string>();
  for (const e of [...base, ...over]) {
    const eq = e.indexOf('=');
    const key = eq < 0 ? e : e.slice(0, eq);
    out.set(key, e);
  }
  return [...out.values()];
}

/** The image config for new layers on top of a base config (pure). */
export function imageConfig(
  base: ImageConfig | undefined,
  spec: ImageConfigSpec,
  layers: Array<{ diffId: string; createdBy?: string; comment?: string }>,
  platform: Platform,
  created: string,
): ImageConfig {
  const prev = base?.config ?? {};
  const c: NonNullable<ImageConfig['config']> = { ...prev };
  const env = mergeEnv(prev.Env ?? [], envList(spec.env));
  if (env.length) c.Env = env;
  if (spec.entrypoint) {
    c.Entrypoint = spec.entrypoint;
    if (!spec.cmd) delete c.Cmd;
  }
  if (spec.cmd) c.Cmd = spec.cmd;
  if (spec.user !== undefined) c.User = spec.user;
  if (spec.workingDir !== undefined) c.WorkingDir = spec.workingDir;
  if (spec.labels) c.Labels = { ...(prev.Labels ?? {}), ...spec.labels };
  if (spec.exposedPorts) c.ExposedPorts = { ...(prev.ExposedPorts ?? {}), ...Object.fromEntries(spec.exposedPorts.map((p) => [p.includes('/') ? p : `${p}/tcp`, {}])) };
  if (spec.stopSignal) c.StopSignal = spec.stopSignal;
  const history = [...(base?.history ?? [])];
  for (const l of layers) history.push({ created, created_by: l.createdBy ?? 'olmpub image build', ...(l.comment ? { comment: l.comment } : {}) });
  return {
    created,
    architecture: platform.architecture,
    os: platform.os,
    ...(platform.variant ? { variant: platform.variant } : {}),
    config: c,
    rootfs: { type: 'layers', diff_ids: [...(base?.rootfs.diff_ids ?? []), ...layers.map((l) => l.diffId)] },
    history,
  };
}

/** Builds the image and writes it into `options.store`. */
export async function buildImage(options: BuildImageOptions): Promise<BuiltImage> {
  const { store, signal } = options;
  const created = rfc3339(new Date((options.created ?? sourceDateEpoch()) * 1000));
  const base = options.base ? await readImage(options.base.store, options.base.reference, options.platform, signal) : undefined;
  const platform: Platform = options.platform ?? (base ? { os: base.config.os, architecture: base.config.architecture, ...(base.config.variant ? { variant: base.config.variant } : {}) } : hostPlatform());
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'olmpub-image-')));
  const built: BuiltLayer[] = [];
  try {
    for (const spec of options.layers) {
      built.push(
        await buildLayer(spec, {
          workDir,
          mtime: options.created ?? sourceDateEpoch(),
          ...(options.compression ? { compression: options.compression } : {}),
          ...(options.gzipLevel !== undefined ? { gzipLevel: options.gzipLevel } : {}),
        }),
      );
    }
    const config = imageConfig(
      base?.config,
      options.config ?? {},
      built.map((b, i) => ({ diffId: b.diffId, ...(options.layers[i]!.createdBy ? { createdBy: options.layers[i]!.createdBy } : {}), ...(options.layers[i]!.comment ? { comment: options.layers[i]!.comment } : {}) })),
      platform,
      created,
    );
    const configBytes = Buffer.from(canonicalJSON(config));
    const configDesc: Descriptor = { mediaType: MediaType.ImageConfig, digest: sha256(configBytes), size: configBytes.length };
    const baseLayers = (base?.manifest.layers ?? []).map((d) => ({
      ...d,
      // Docker media types become their OCI equivalents in an OCI manifest.
      mediaType: d.mediaType === MediaType.DockerLayerGzip ? MediaType.LayerGzip : d.mediaType,
    }));
    const manifest: ImageManifest = {
      schemaVersion: 2,
      mediaType: MediaType.ImageManifest,
      config: configDesc,
      layers: [...baseLayers, ...built.map((b) => b.descriptor)],
      ...(options.annotations && Object.keys(options.annotations).length ? { annotations: options.annotations } : {}),
    };
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    const manifestDesc: Descriptor = { mediaType: MediaType.ImageManifest, digest: sha256(manifestBytes), size: manifestBytes.length };

    // Blobs first: base layers (copied, or mounted on the same registry), new layers, config.
    if (base && options.base) {
      for (const layer of base.manifest.layers) await copyGraph(options.base.store, store, layer, signal ? { signal } : {});
    }
    for (const b of built) {
      if (!(await store.exists(b.descriptor, signal))) await store.pushBlob(b.descriptor, fileSource(b.path), signal ? { signal } : {});
    }
    if (!(await store.exists(configDesc, signal))) await store.pushBlob(configDesc, bufferSource(configBytes), signal ? { signal } : {});

    let index: BuiltImage['index'];
    if (options.index) {
      const annotations = typeof options.index === 'object' ? options.index.annotations : undefined;
      const json: ImageIndex = {
        schemaVersion: 2,
        mediaType: MediaType.ImageIndex,
        manifests: [{ ...manifestDesc, platform }],
        ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
      };
      const bytes = Buffer.from(JSON.stringify(json));
      index = { descriptor: { mediaType: MediaType.ImageIndex, digest: sha256(bytes), size: bytes.length }, json, bytes };
      await store.pushManifest(manifestDesc, manifestBytes, signal ? { signal } : {});
      await store.pushManifest(index.descriptor, bytes, { ...(options.tag ? { tag: options.tag } : {}), ...(signal ? { signal } : {}) });
      if (!options.tag) await store.tag(index.descriptor, index.descriptor.digest, signal);
    } else {
      await store.pushManifest(manifestDesc, manifestBytes, { ...(options.tag ? { tag: options.tag } : {}), ...(signal ? { signal } : {}) });
      if (!options.tag) await store.tag(manifestDesc, manifestDesc.digest, signal);
    }
    return {
      root: index?.descriptor ?? manifestDesc,
      manifest: { descriptor: manifestDesc, json: manifest, bytes: manifestBytes },
      config: { descriptor: configDesc, json: config, bytes: configBytes },
      ...(index ? { index } : {}),
      blobs: manifest.layers,
      layers: built.map((b) => ({ descriptor: b.descriptor, diffId: b.diffId, uncompressedSize: b.uncompressedSize })),
    };
  } finally {
    if (!options.workDir) await rm(workDir, { recursive: true, force: true });
    else await Promise.all(built.map((b) => rm(b.path, { force: true })));
  }
}
