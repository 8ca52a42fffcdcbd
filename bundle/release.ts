/**
 * One release of the operator, from the install manifests model: the Helm chart, the registry+v1 bundle,
 * and their images. `buildReleaseArtifacts` renders and checks everything and writes the images into any
 * Store (an OCI layout or a registry repository); `buildRelease` is the `olmpub bundle build` folder
 * around it. Deterministic: same inputs, same bytes and digests.
 */
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { canonicalJSON } from '../lib/canonical.js';
import { usageError } from '../lib/errors.js';
import { exists, replaceDirAtomic } from '../lib/fsx.js';
import { declaredPermissions, type Declaration } from '../operator/rbac-declarations.js';
import { buildChart, chartArchive } from './chart/index.js';
import { buildRegistryV1Bundle, checkRegistryV1, writeBundleImage, type RegistryV1Bundle } from './registryv1/index.js';
import { sourceDateEpoch } from './image/tar.js';
import { OciLayoutStore } from './oci/layout.js';
import { pushHelmChart } from './oci/helm.js';
import { sha256 } from './oci/digest.js';
import type { Store } from './oci/store.js';
import { helmTag } from './oci/reference.js';
import { checkInstallOptions, managerRules, resolveInstallOptions } from './manifests/index.js';
import { buildOperatorImage } from './operator-image/index.js';

/** Where the operator image is published by default; the chart and CSV reference `<repository>@<digest>`. */
export const DEFAULT_IMAGE_REPOSITORY = 'ghcr.io/olmpub/inference-operator';

/** Image tags of one release inside a single store (an OCI layout holds every image under one index). */
export const releaseTags = (version: string) => ({
  operator: `operator-v${helmTag(version)}`,
  bundle: `bundle-v${helmTag(version)}`,
  chart: `chart-${helmTag(version)}`,
});

export interface ReleaseArtifactsOptions {
  version: string;
  /** The operator image pinned by digest, `REPOSITORY@sha256:…`. */
  image: string;
  /** Bundle annotation channels. @default ['stable'] */
  channels?: string[];
  defaultChannel?: string;
  replaces?: string;
  /** olm.skipRange; null leaves it out. @default `<VERSION` */
  skipRange?: string | null;
  serviceMonitor?: boolean;
  /** Seconds since the epoch for mtimes, createdAt and image `created`. @default SOURCE_DATE_EPOCH, else 0 */
  created?: number;
  /** @default declaredPermissions() */
  permissions?: readonly Declaration[];
}

export interface ReleaseArtifacts {
  version: string;
  image: string;
  chart: { archiveName: string; tgz: Buffer; sha256: string };
  bundle: RegistryV1Bundle & { gzipBytes: number };
  warnings: string[];
}

/** Renders the chart and the bundle for one version and checks every OLM v1 limit. Pure but for gzip. */
export async function renderReleaseArtifacts(o: ReleaseArtifactsOptions): Promise<ReleaseArtifacts> {
  const created = o.created ?? sourceDateEpoch();
  const permissions = o.permissions ?? declaredPermissions();
  const problems = checkInstallOptions({ image: o.image });
  if (problems.length) throw usageError('bundle-bad-image', problems[0]!.message, { hint: problems[0]!.hint });
  const warnings: string[] = [];
  if (managerRules(resolveInstallOptions({ image: o.image, permissions })).cluster.length === 0) {
    warnings.push('the operator declares no cluster permissions (operator/rbac-declarations.ts): the manager ClusterRole grants nothing');
  }
  const chart = buildChart({ version: o.version, image: o.image, permissions });
  const tgz = await chartArchive(chart, { mtime: created });
  const bundle = buildRegistryV1Bundle({
    version: o.version,
    image: o.image,
    permissions,
    created: new Date(created * 1000),
    ...(o.channels ? { channels: o.channels } : {}),
    ...(o.defaultChannel ? { defaultChannel: o.defaultChannel } : {}),
    ...(o.replaces ? { replaces: o.replaces } : {}),
    ...(o.skipRange !== undefined ? { skipRange: o.skipRange } : {}),
    ...(o.serviceMonitor ? { serviceMonitor: true } : {}),
  });
  const { gzipBytes } = await checkRegistryV1(bundle.files);
  return { version: o.version, image: o.image, chart: { archiveName: chart.archiveName, tgz, sha256: sha256(tgz) }, bundle: { ...bundle, gzipBytes }, warnings };
}

export interface PushedRelease {
  bundle: { tag: string; digest: string };
  chart: { tag: string; digest: string };
}

/**
 * Writes the bundle image and the chart (as Helm pushes it) into stores: blobs first, manifests next,
 * tags last. `chartStore` defaults to `store` (an OCI layout keeps both; a registry wants two repositories).
 */
export async function pushReleaseArtifacts(
  a: ReleaseArtifacts,
  store: Store,
  options: { chartStore?: Store; created?: number; tags?: { bundle: string; chart: string } } = {},
): Promise<PushedRelease> {
  const tags = options.tags ?? releaseTags(a.version);
  const created = options.created ?? sourceDateEpoch();
  const bundleImage = await writeBundleImage(a.bundle, { store, tag: tags.bundle, created });
  const artifact = await pushHelmChart(a.chart.tgz, options.chartStore ?? store, { tag: tags.chart });
  return { bundle: { tag: tags.bundle, digest: bundleImage.manifest.descriptor.digest }, chart: { tag: tags.chart, digest: artifact.manifest.descriptor.digest } };
}

/** The marker `bundle build` leaves, so it only ever replaces a directory it wrote. */
export const BUILD_MARKER = '.olmpub-build.json';

export interface ReleaseBuildOptions extends Omit<ReleaseArtifactsOptions, 'image'> {
  out: string;
  /** `REPOSITORY@sha256:…`; without it the operator image is built from this checkout into the layout. */
  image?: string;
  /** Where the built operator image is published. @default DEFAULT_IMAGE_REPOSITORY */
  imageRepository?: string;
}

export interface ReleaseBuildResult {
  out: string;
  version: string;
  image: string;
  chart: { path: string; bytes: number; sha256: string };
  bundle: { dir: string; files: string[]; csv: string; gzipBytes: number };
  images: {
    layout: string;
    bundle: { tag: string; digest: string };
    chart: { tag: string; digest: string };
    operator?: { tag: string; digest: string };
  };
  warnings: string[];
}

async function isOurDirectory(dir: string): Promise<boolean> {
  if (!(await exists(dir))) return true;
  const entries = await readdir(dir);
  return entries.length === 0 || entries.includes(BUILD_MARKER);
}

/**
 * `olmpub bundle build`: the chart, the bundle directory and the images (an OCI layout) in `out`,
 * replaced atomically. Without `image`, the operator image is built from this checkout (whose version
 * must then be the release's, so the image's `--version` matches the CSV).
 */
export async function buildRelease(o: ReleaseBuildOptions): Promise<ReleaseBuildResult> {
  const created = o.created ?? sourceDateEpoch();
  if (!(await isOurDirectory(o.out))) {
    throw usageError('bundle-out-not-ours', `${o.out} exists and was not written by olmpub bundle build`, { hint: `pick an empty or new directory (bundle build replaces --out entirely and looks for ${BUILD_MARKER})` });
  }
  const tags = releaseTags(o.version);
  // Checked before the (slow) operator image build, with a stand-in digest.
  if (!o.image) {
    const problems = checkInstallOptions({ image: `${o.imageRepository ?? DEFAULT_IMAGE_REPOSITORY}@sha256:${'0'.repeat(64)}` });
    if (problems.length) throw usageError('bundle-bad-image', problems[0]!.message, { hint: problems[0]!.hint });
  }
  let result: ReleaseBuildResult | undefined;
  await replaceDirAtomic(o.out, async (tmp) => {
    const store = new OciLayoutStore(join(tmp, 'oci'));
    let image = o.image;
    let operator: ReleaseBuildResult['images']['operator'];
    if (!image) {
      const built = await buildOperatorImage({ store, tag: tags.operator, created, expectVersion: o.version });
      image = `${o.imageRepository ?? DEFAULT_IMAGE_REPOSITORY}@${built.digest}`;
      operator = { tag: tags.operator, digest: built.digest };
    }
    const artifacts = await renderReleaseArtifacts({ ...o, image, created });
    const put = async (path: string, data: string | Uint8Array) => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, data);
    };
    await put(join(tmp, 'chart', artifacts.chart.archiveName), artifacts.chart.tgz);
    for (const f of artifacts.bundle.files) await put(join(tmp, 'bundle', f.path), f.content);
    const pushed = await pushReleaseArtifacts(artifacts, store, { created, tags });

    result = {
      out: o.out,
      version: o.version,
      image,
      chart: { path: join(o.out, 'chart', artifacts.chart.archiveName), bytes: artifacts.chart.tgz.length, sha256: artifacts.chart.sha256 },
      bundle: { dir: join(o.out, 'bundle'), files: artifacts.bundle.files.map((f) => f.path), csv: artifacts.bundle.csv.metadata.name, gzipBytes: artifacts.bundle.gzipBytes },
      images: { layout: join(o.out, 'oci'), ...pushed, ...(operator ? { operator } : {}) },
      warnings: artifacts.warnings,
    };
    const marker = { ...result, out: '.', chart: { ...result.chart, path: relative(o.out, result.chart.path) }, bundle: { ...result.bundle, dir: 'bundle' }, images: { ...result.images, layout: 'oci' } };
    await put(join(tmp, BUILD_MARKER), canonicalJSON(marker, 2) + '\n');
  });
  return result!;
}

/** Every file under a bundle directory, with paths relative to it (forward slashes). */
export async function readBundleDir(dir: string): Promise<{ path: string; content: Buffer }[]> {
  const out: { path: string; content: Buffer }[] = [];
  const walk = async (d: string) => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else out.push({ path: relative(dir, full).split(sep).join('/'), content: await readFile(full) });
    }
  };
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw usageError('path-not-found', `${dir} is not a directory`, { hint: 'pass a registry+v1 bundle directory (manifests/ and metadata/)' });
  }
  await walk(dir);
  return out;
}
