/**
 * The olmpub operator image, built without a daemon into any Store (an OCI layout, a registry
 * repository) on top of bundle/image's `buildImage`. Three layers, least to most often changed:
 *   1. the Node.js runtime: this machine's node, its shared libraries and loader, and minimal system files
 *      (skipped when a base image already has node; see `nodeRuntime`);
 *   2. the production dependencies: the lockfile closure of package.json's `dependencies`;
 *   3. the app: compiled dist/ of lib, operator, bundle, catalog and cli, bin/olmpub.js, package.json.
 * Reproducible: the same inputs give the same manifest digest (fixed mtimes and owners, sorted entries,
 * deterministic gzip, a fixed creation time).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { environmentError, usageError, validationError } from '../../lib/errors.js';
import { Annotation, type Descriptor, type Platform } from '../oci/content.js';
import { parseReference } from '../oci/reference.js';
import { openStore, readReference } from '../oci/open.js';
import { RemoteRepository, type RemoteOptions } from '../oci/remote.js';
import type { Store } from '../oci/store.js';
import { rfc3339 } from '../oci/helm.js';
import { buildImage, readImage, type BaseImage, type BuiltImage, type ImageConfigSpec } from '../image/build.js';
import { formatPlatform, hostPlatform } from '../image/platform.js';
import { sourceDateEpoch, type LayerEntry } from '../image/tar.js';
import type { LayerSpec } from '../image/layer.js';
import { OPERATOR_NAME, PORTS } from '../manifests/options.js';
import { PROJECT_URL } from '../manifests/metadata.js';
import { APP_ROOT, appEntries } from './app.js';
import { dependencyEntries, productionClosure, type Lockfile, type ResolvedPackage } from './deps.js';
import {
  CA_BUNDLE_PATH,
  DEFAULT_PATH_ENV,
  NODE_PATH,
  NONROOT_GID,
  NONROOT_UID,
  declaredNodeVersion,
  findNode,
  imageTree,
  nodeEntries,
  systemEntries,
  throughBase,
  type ImageTree,
} from './runtime.js';

const run = promisify(execFile);

/** The repository this module was compiled from (dist/bundle/operator-image/ → three levels up). */
export const DEFAULT_REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const DEFAULT_CA_CERTIFICATES = '/etc/ssl/certs/ca-certificates.crt';
export const ENTRYPOINT = [NODE_PATH, `${APP_ROOT}/bin/olmpub.js`] as const;
export const DEFAULT_CMD = ['operator', 'run'] as const;
export const IMAGE_USER = `${NONROOT_UID}:${NONROOT_GID}`;
/** The ports the operator serves: health (8081, HTTP), metrics (8443, HTTPS), webhooks (9443, HTTPS). */
export const EXPOSED_PORTS = [PORTS.health, PORTS.metrics, PORTS.webhook].sort((a, b) => a - b).map((p) => `${p}/tcp`);

/** What the image is built into and from; every option has a default except `store`. */
export interface OperatorImageOptions {
  /** Where the image is written: an `OciLayoutStore`, a `RemoteRepository`, any `Store`. Required. */
  store: Store;
  /** Tag of the manifest in `store`, or a function of the version. @default the package.json version, `+` written `_` (e.g. "0.1.0"); null writes no tag */
  tag?: string | null | ((version: string) => string);
  /** Fail before building unless package.json's version is this one (a release pipeline's version). @default no check */
  expectVersion?: string;
  /** The olmpub checkout: package.json, package-lock.json, bin/olmpub.js and the TypeScript sources. @default the repository this module was compiled from */
  repoRoot?: string;
  /** The compiled output (tsconfig outDir). @default `<repoRoot>/dist` */
  distDir?: string;
  /** Where the locked packages are installed. @default `<repoRoot>/node_modules` */
  nodeModulesDir?: string;
  /**
   * A base image: `{store, reference}`, or a reference string, `oci:PATH:TAG` (an OCI layout) or
   * `host/repository[:tag][@digest]` (a registry, opened with `remote`). Its layers come first, its config
   * (env, labels, history) is extended. @default none: the image starts from scratch
   */
  base?: BaseImage | string;
  /** How a base given as a string is reached (plainHttp, credentials, ...). @default {} (HTTPS, docker config.json) */
  remote?: RemoteOptions;
  /**
   * The Node.js runtime layer. `auto`: added unless the base image has a node executable (PATH, then
   * /usr/local/bin, /usr/bin, /nodejs/bin, /bin; symlinks and whiteouts followed), which is then used
   * through a /usr/local/bin/node symlink when it lives elsewhere. `always`: added even over a base's node.
   * `never`: not added; the base must provide /usr/local/bin/node (not checked). Without a base there is
   * always a runtime layer. @default 'auto'
   */
  nodeRuntime?: 'auto' | 'always' | 'never';
  /** The node executable copied into the runtime layer (its libraries come from `ldd`). @default process.execPath */
  nodeBinary?: string;
  /** CA bundle copied to /etc/ssl/certs/ca-certificates.crt (no base only); false leaves it out. @default '/etc/ssl/certs/ca-certificates.crt' */
  caCertificates?: string | false;
  /** Creation time in seconds since the epoch: config `created`, history, label, file mtimes. @default SOURCE_DATE_EPOCH, else the HEAD commit time, else 0 */
  created?: number;
  /** `org.opencontainers.image.revision`. @default `git rev-parse HEAD` in repoRoot; no label outside a git checkout; null: no label */
  revision?: string | null;
  /** `org.opencontainers.image.source`. @default 'https://github.com/olmpub/olmpub' */
  source?: string;
  /** Extra labels, merged over the defaults. @default {} */
  labels?: Record<string, string>;
  /** Default arguments of the entrypoint. @default ['operator', 'run'] */
  cmd?: string[];
  /** Platform, used to pick a base image from an index. @default the base's, else the host's (linux/amd64 here) */
  platform?: Platform;
  /** Leave type declarations, source maps and Markdown out of node_modules (licenses stay). @default true */
  pruneDependencies?: boolean;
  /** Also copy dist/**\/*.js.map. @default false */
  sourceMaps?: boolean;
  /** gzip level of the layers. @default 6 */
  gzipLevel?: number;
  /** Progress: phases, and bytes as blobs are written to `store`. @default none */
  onProgress?: (event: OperatorImageProgress) => void;
  signal?: AbortSignal;
}

export type OperatorImageProgress =
  | { phase: 'base'; reference: string }
  | { phase: 'layers'; layers: Array<{ role: LayerRole; files: number; bytes: number }> }
  | { phase: 'push'; done: number; total: number };

export type LayerRole = 'base' | 'node-runtime' | 'dependencies' | 'app';

export interface OperatorImageLayer {
  role: LayerRole;
  digest: string;
  mediaType: string;
  /** Compressed size of the blob. */
  size: number;
  /** sha256 of the uncompressed tar (rootfs.diff_ids). */
  diffId: string;
  /** For the layers this build added. */
  uncompressedSize?: number;
  files?: number;
}

export interface OperatorImage {
  /** The image manifest's digest: what the CSV and the chart pin. */
  digest: string;
  mediaType: string;
  /** Size of the manifest in bytes. */
  size: number;
  /** The tag written, if any. */
  tag?: string;
  /** The operator version (package.json). */
  version: string;
  platform: Platform;
  config: Descriptor;
  layers: OperatorImageLayer[];
  /** Manifest + config + every layer blob, compressed: what a pull downloads. */
  totalSize: number;
  /** Sum of the uncompressed sizes of the layers this build added. */
  uncompressedSize: number;
  created: string;
  revision?: string;
  base?: { reference: string; digest: string; node?: string };
  /** Where node comes from: the runtime layer, or the base image (path). */
  node: { from: 'runtime-layer'; version: string } | { from: 'base'; path: string; version?: string };
  dependencies: Array<Pick<ResolvedPackage, 'name' | 'version' | 'location'>>;
  warnings: string[];
  /** Everything buildImage returned (manifest and config JSON and bytes). */
  built: BuiltImage;
}

interface PackageJson {
  name?: string;
  version?: string;
  description?: string;
  license?: string;
  engines?: { node?: string };
}

async function readJson<T>(path: string, what: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw environmentError('operator-image-missing-file', `${what} ${path} is missing`, { place: path, hint: 'build the image from a checkout of olmpub with its package-lock.json', cause: err });
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw validationError('operator-image-bad-json', `${path} is not valid JSON: ${(err as Error).message}`, { place: path });
  }
}

/** HEAD's commit id and commit time, when `dir` is a git checkout. */
export async function gitHead(dir: string): Promise<{ revision: string; time: number } | undefined> {
  try {
    const { stdout } = await run('git', ['log', '-1', '--format=%H %ct'], { cwd: dir, encoding: 'utf8', timeout: 10_000 });
    const m = /^([0-9a-f]{40,64}) (\d+)\s*$/.exec(stdout);
    return m ? { revision: m[1]!, time: Number(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/** The image labels (OCI annotation keys), pure. */
export function operatorImageLabels(info: { version: string; created: string; license?: string; description?: string; source: string; revision?: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    [Annotation.Title]: OPERATOR_NAME,
    ...(info.description ? { [Annotation.Description]: info.description } : {}),
    [Annotation.Version]: info.version,
    [Annotation.Source]: info.source,
    [Annotation.Url]: info.source,
    'org.opencontainers.image.licenses': info.license ?? 'NOASSERTION',
    ...(info.revision ? { [Annotation.Revision]: info.revision } : {}),
    [Annotation.Created]: info.created,
    ...(info.extra ?? {}),
  };
}

/** A view of `store` whose blob uploads report progress; everything else (instanceof included) is the store. */
function withPushProgress(store: Store, onBytes: (digest: string, done: number, total: number) => void): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'pushBlob') {
        return ((desc, source, opts) =>
          target.pushBlob(desc, source, {
            ...(opts ?? {}),
            onProgress: (done, total) => {
              opts?.onProgress?.(done, total);
              onBytes(desc.digest, done, total);
            },
          })) as Store['pushBlob'];
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function resolveBase(base: BaseImage | string, remote: RemoteOptions): { base: BaseImage; name: string; close: () => void } {
  if (typeof base !== 'string') return { base, name: `${base.store.description}:${base.reference}`, close: () => undefined };
  const opened = openStore(base, remote);
  const reference = readReference(opened);
  if (!reference) {
    opened.close();
    throw usageError('operator-image-base-reference', `the base image ${base} names no tag or digest`, { hint: 'write oci:PATH:TAG or oci:PATH@sha256:..., or a registry reference' });
  }
  return { base: { store: opened.store, reference }, name: base, close: () => opened.close() };
}

const samePlatform = (a: Platform, b: Platform) => a.os === b.os && a.architecture === b.architecture && (a.variant ?? '') === (b.variant ?? '');

/** Builds the operator image into `options.store`. */
export async function buildOperatorImage(options: OperatorImageOptions): Promise<OperatorImage> {
  const repoRoot = resolve(options.repoRoot ?? DEFAULT_REPO_ROOT);
  const distDir = resolve(options.distDir ?? join(repoRoot, 'dist'));
  const nodeModulesDir = resolve(options.nodeModulesDir ?? join(repoRoot, 'node_modules'));
  const nodeBinary = options.nodeBinary ?? process.execPath;
  const nodeRuntime = options.nodeRuntime ?? 'auto';
  const { signal } = options;
  const warnings: string[] = [];

  const pkg = await readJson<PackageJson>(join(repoRoot, 'package.json'), 'package.json');
  if (!pkg.version || !semver.valid(pkg.version)) throw validationError('operator-image-bad-version', `package.json version "${pkg.version ?? ''}" is not a semantic version`, { place: join(repoRoot, 'package.json') });
  const version = pkg.version;
  if (options.expectVersion !== undefined && options.expectVersion !== version) {
    throw usageError('operator-image-version-mismatch', `the release is ${options.expectVersion} but this checkout's operator is ${version} (package.json): the image would report ${version}`, {
      place: join(repoRoot, 'package.json'),
      hint: `set "version": "${options.expectVersion}" in package.json and rebuild, or build the release with the version of the checkout`,
    });
  }
  const lock = await readJson<Lockfile>(join(repoRoot, 'package-lock.json'), 'the lockfile');

  const needGit = options.created === undefined || options.revision === undefined;
  const head = needGit ? await gitHead(repoRoot) : undefined;
  const createdSeconds = options.created ?? (process.env.SOURCE_DATE_EPOCH ? sourceDateEpoch() : (head?.time ?? 0));
  if (!Number.isInteger(createdSeconds) || createdSeconds < 0) throw usageError('operator-image-bad-created', `created must be whole seconds since the epoch, got ${createdSeconds}`);
  const created = rfc3339(new Date(createdSeconds * 1000));
  const revision = options.revision === null ? undefined : (options.revision ?? head?.revision);

  // Base image: its config and, unless told to trust it, its filesystem tree.
  const opened = options.base !== undefined ? resolveBase(options.base, options.remote ?? {}) : undefined;
  try {
    let baseInfo: Awaited<ReturnType<typeof readImage>> | undefined;
    let tree: ImageTree | undefined;
    let baseNode: string | undefined;
    if (opened) {
      options.onProgress?.({ phase: 'base', reference: opened.name });
      baseInfo = await readImage(opened.base.store, opened.base.reference, options.platform, signal);
      if (nodeRuntime !== 'never') {
        tree = await imageTree(opened.base.store, baseInfo.manifest, signal);
        baseNode = findNode(tree, baseInfo.config);
      } else {
        baseNode = NODE_PATH;
      }
    } else if (nodeRuntime === 'never') {
      throw usageError('operator-image-no-node', 'nodeRuntime "never" needs a base image that provides node', { hint: 'give a base image, or let the runtime layer be added' });
    }
    const platform: Platform = options.platform ?? (baseInfo ? { os: baseInfo.config.os, architecture: baseInfo.config.architecture, ...(baseInfo.config.variant ? { variant: baseInfo.config.variant } : {}) } : hostPlatform());
    const addRuntime = !opened || nodeRuntime === 'always' || (nodeRuntime === 'auto' && !baseNode);

    let node: OperatorImage['node'];
    const layers: Array<{ role: LayerRole; spec: LayerSpec; files: number; bytes: number }> = [];
    if (addRuntime) {
      if (!samePlatform(platform, hostPlatform())) {
        throw validationError('operator-image-platform', `the image is for ${formatPlatform(platform)} but the node binary of this machine is ${formatPlatform(hostPlatform())}`, {
          hint: 'use a base image that has node for that platform (e.g. node:20-slim), or build on a machine of that platform',
        });
      }
      const { stdout } = await run(nodeBinary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).catch((err: unknown) => {
        throw environmentError('operator-image-node', `cannot run ${nodeBinary} --version: ${(err as Error).message}`, { place: nodeBinary });
      });
      const nodeVersion = stdout.trim().replace(/^v/, '');
      if (pkg.engines?.node && !semver.satisfies(nodeVersion, pkg.engines.node)) {
        throw validationError('operator-image-node-version', `node ${nodeVersion} (${nodeBinary}) does not satisfy engines.node "${pkg.engines.node}"`, { place: 'package.json: engines.node', hint: 'build with a node that satisfies engines.node, or pass nodeBinary' });
      }
      const caCertificates = options.caCertificates ?? DEFAULT_CA_CERTIFICATES;
      const runtime = await nodeEntries(nodeBinary);
      const entries: LayerEntry[] = tree ? throughBase(runtime, tree) : [...runtime, ...systemEntries({ caCertificates })];
      layers.push({
        role: 'node-runtime',
        spec: {
          files: entries,
          createdBy: tree
            ? `olmpub image build: node ${nodeVersion} and its shared libraries from the build host`
            : `olmpub image build: node ${nodeVersion} and its shared libraries from the build host; /etc (passwd, group, nsswitch.conf${caCertificates === false ? '' : ', CA certificates'}), /tmp`,
          comment: 'node runtime',
        },
        files: entries.filter((e) => e.type === 'file').length,
        bytes: 0,
      });
      node = { from: 'runtime-layer', version: nodeVersion };
    } else {
      const declared = baseInfo ? declaredNodeVersion(baseInfo.config) : undefined;
      if (declared && pkg.engines?.node && semver.valid(declared) && !semver.satisfies(declared, pkg.engines.node)) {
        throw validationError('operator-image-base-node-version', `the base image's node ${declared} (NODE_VERSION) does not satisfy engines.node "${pkg.engines.node}"`, {
          place: opened!.name,
          hint: 'use a base image with a newer node, or nodeRuntime "always" to add this machine\'s node',
        });
      }
      if (!declared && nodeRuntime === 'auto') warnings.push(`the base image does not declare NODE_VERSION: cannot check its node against engines.node "${pkg.engines?.node ?? '*'}"`);
      node = { from: 'base', path: baseNode!, ...(declared ? { version: declared } : {}) };
    }

    // Production dependencies, from the lockfile closure.
    const closure = productionClosure(lock, join(repoRoot, 'package-lock.json'));
    const deps = await dependencyEntries(closure.packages, { nodeModulesDir, at: `${APP_ROOT}/node_modules`, prune: options.pruneDependencies ?? true });
    layers.push({
      role: 'dependencies',
      spec: { files: deps.entries, createdBy: `olmpub image build: ${deps.packages.length} production packages from package-lock.json`, comment: 'dependencies' },
      files: deps.files,
      bytes: deps.bytes,
    });

    // The app, plus a /usr/local/bin/node link when the base's node lives elsewhere.
    const app = await appEntries({ repoRoot, distDir, sourceMaps: options.sourceMaps ?? false });
    warnings.push(...app.warnings);
    const appFiles: LayerEntry[] = [...app.entries];
    if (node.from === 'base' && node.path !== NODE_PATH && tree) appFiles.push(...throughBase([{ path: NODE_PATH, type: 'symlink', target: node.path }], tree));
    layers.push({
      role: 'app',
      spec: { files: appFiles, createdBy: `olmpub image build: olmpub ${version} (dist, bin/olmpub.js, package.json)`, comment: 'app' },
      files: app.files,
      bytes: app.bytes,
    });
    if (layers[0]!.role === 'node-runtime') {
      const runtimeFiles = (layers[0]!.spec as { files: LayerEntry[] }).files;
      layers[0]!.bytes = await sizeOf(runtimeFiles);
    }
    options.onProgress?.({ phase: 'layers', layers: layers.map((l) => ({ role: l.role, files: l.files, bytes: l.bytes })) });

    const source = options.source ?? PROJECT_URL;
    const labels = operatorImageLabels({
      version,
      created,
      source,
      ...(pkg.license ? { license: pkg.license } : {}),
      ...(pkg.description ? { description: pkg.description } : {}),
      ...(revision ? { revision } : {}),
      ...(options.labels ? { extra: options.labels } : {}),
    });
    const basePath = (baseInfo?.config.config?.Env ?? []).some((e) => e.startsWith('PATH='));
    const config: ImageConfigSpec = {
      entrypoint: [...ENTRYPOINT],
      cmd: options.cmd ?? [...DEFAULT_CMD],
      user: IMAGE_USER,
      workingDir: APP_ROOT,
      env: {
        ...(basePath ? {} : { PATH: DEFAULT_PATH_ENV }),
        NODE_ENV: 'production',
        ...(addRuntime && !tree && options.caCertificates !== false ? { SSL_CERT_FILE: CA_BUNDLE_PATH } : {}),
      },
      labels,
      exposedPorts: EXPOSED_PORTS,
    };
    const annotations: Record<string, string> = {
      [Annotation.Title]: OPERATOR_NAME,
      [Annotation.Version]: version,
      [Annotation.Source]: source,
      [Annotation.Created]: created,
      ...(revision ? { [Annotation.Revision]: revision } : {}),
      ...(opened && baseInfo ? { 'org.opencontainers.image.base.name': opened.name, 'org.opencontainers.image.base.digest': baseInfo.descriptor.digest } : {}),
    };

    const progress = new Map<string, { done: number; total: number }>();
    const store = options.onProgress
      ? withPushProgress(options.store, (digest, done, total) => {
          progress.set(digest, { done, total });
          let d = 0;
          let t = 0;
          for (const p of progress.values()) {
            d += p.done;
            t += p.total;
          }
          options.onProgress!({ phase: 'push', done: d, total: t });
        })
      : options.store;
    const tag = options.tag === null ? undefined : typeof options.tag === 'function' ? options.tag(version) : (options.tag ?? defaultTag(version));
    const built = await buildImage({
      store,
      ...(opened ? { base: opened.base } : {}),
      layers: layers.map((l) => l.spec),
      config,
      platform,
      created: createdSeconds,
      annotations,
      ...(tag ? { tag } : {}),
      ...(options.gzipLevel !== undefined ? { gzipLevel: options.gzipLevel } : {}),
      ...(signal ? { signal } : {}),
    });

    const baseCount = baseInfo?.manifest.layers.length ?? 0;
    const out: OperatorImageLayer[] = built.manifest.json.layers.map((d, i) => {
      const diffId = built.config.json.rootfs.diff_ids[i]!;
      if (i < baseCount) return { role: 'base', digest: d.digest, mediaType: d.mediaType, size: d.size, diffId };
      const own = built.layers[i - baseCount]!;
      const meta = layers[i - baseCount]!;
      return { role: meta.role, digest: d.digest, mediaType: d.mediaType, size: d.size, diffId, uncompressedSize: own.uncompressedSize, files: meta.files };
    });
    return {
      digest: built.manifest.descriptor.digest,
      mediaType: built.manifest.descriptor.mediaType,
      size: built.manifest.descriptor.size,
      ...(tag ? { tag } : {}),
      version,
      platform,
      config: built.config.descriptor,
      layers: out,
      totalSize: built.manifest.descriptor.size + built.config.descriptor.size + out.reduce((n, l) => n + l.size, 0),
      uncompressedSize: built.layers.reduce((n, l) => n + l.uncompressedSize, 0),
      created,
      ...(revision ? { revision } : {}),
      ...(opened && baseInfo ? { base: { reference: opened.name, digest: baseInfo.descriptor.digest, ...(node.from === 'base' ? { node: node.path } : {}) } } : {}),
      node,
      dependencies: deps.packages.map((p) => ({ name: p.name, version: p.version, location: p.location })),
      warnings,
      built,
    };
  } finally {
    opened?.close();
  }
}

/** The default tag for a version: OCI tags have no `+`, so build metadata is written with `_` (as Helm does). */
export const defaultTag = (version: string): string => version.replace(/\+/g, '_');

async function sizeOf(entries: LayerEntry[]): Promise<number> {
  let n = 0;
  for (const e of entries) {
    if (e.type !== 'file') continue;
    if ('content' in e) n += typeof e.content === 'string' ? Buffer.byteLength(e.content) : e.content.byteLength;
    else n += e.size >= 0 ? e.size : (await stat(e.source)).size;
  }
  return n;
}

export interface PinnedOperatorImage {
  /** `REPOSITORY@sha256:...`: the image reference the CSV, relatedImages and the chart's values pin. */
  image: string;
  digest: string;
  repository: string;
  result: OperatorImage;
}

/**
 * Builds the operator image into `store` and returns the digest reference to pin. `repository` is where the image is (or will be) pulled from, e.g.
 * `ghcr.io/acme/inference-operator`; it defaults to the store's own name when the store is a registry
 * repository, and is required for an OCI layout (which has no pull name). The digest does not depend on
 * the store, so an image built into a layout and copied to the registry later keeps it.
 */
export async function buildPinnedOperatorImage(options: OperatorImageOptions & { repository?: string }): Promise<PinnedOperatorImage> {
  const { repository: given, ...rest } = options;
  const repository = given ?? (options.store instanceof RemoteRepository ? options.store.description : undefined);
  if (!repository) {
    throw usageError('operator-image-repository', `the operator image is written to ${options.store.description}, which has no pull name`, {
      hint: 'pass the repository the image will be pulled from, e.g. ghcr.io/acme/inference-operator',
    });
  }
  const parsed = parseReference(repository);
  if (parsed.tag || parsed.digest) {
    throw usageError('operator-image-repository', `"${repository}" must name a repository, without a tag or digest`, { hint: 'e.g. ghcr.io/acme/inference-operator' });
  }
  const name = `${parsed.registry}/${parsed.repository}`;
  const result = await buildOperatorImage(rest);
  return { image: `${name}@${result.digest}`, digest: result.digest, repository: name, result };
}

