/**
 * `olmpub bundle build`: the release deliverables from the install manifests model (the Helm chart .tgz,
 * the registry+v1 bundle directory, and the images as an OCI layout), deterministically and atomically.
 * `olmpub bundle validate DIR`: OLM v1's limits on a registry+v1 bundle directory.
 * `olmpub chart render`: the manifests the chart renders for a set of values, computed from the model.
 */
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Command } from '../command.js';
import { canonicalJSON, yamlStream } from '../../lib/canonical.js';
import { usageError } from '../../lib/errors.js';
import { exists, replaceDirAtomic } from '../../lib/fsx.js';
import { color, emit, formatBytes } from '../../lib/output.js';
import { declaredPermissions, type Declaration } from '../../operator/rbac-declarations.js';
import { buildChart, chartArchive, mergeValues, parseSet, renderChart, CRD_RELEASE } from '../../bundle/chart/index.js';
import { buildRegistryV1Bundle, checkRegistryV1, writeBundleImage } from '../../bundle/registryv1/index.js';
import { sourceDateEpoch } from '../../bundle/image/tar.js';
import { OciLayoutStore } from '../../bundle/oci/layout.js';
import { helmChartArtifact } from '../../bundle/oci/helm.js';
import { bufferSource, type Store } from '../../bundle/oci/store.js';
import { helmTag } from '../../bundle/oci/reference.js';
import { checkInstallOptions, managerRules, resolveInstallOptions, DEFAULT_NAMESPACE } from '../../bundle/manifests/index.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * OPERATOR IMAGE HOOK. The operator image build (bundle/operator-image, `olmpub image build`) registers a
 * builder here (cli/commands/operator-image.ts); without --image, `bundle build` then builds the operator
 * image into the same OCI layout (tag operator-vVERSION) and pins the chart and the CSV to its digest
 * under `repository`. With no builder registered, --image is required: the build never invents a digest.
 */
export interface OperatorImageBuilder {
  /** Builds the operator image into `store` under `tag`; returns its digest (`sha256:…`). */
  (args: { store: Store; tag: string; version: string; created: number }): Promise<{ digest: string }>;
}
export const OPERATOR_IMAGE_HOOK: { build?: OperatorImageBuilder; repository: string } = {
  build: undefined,
  /** Where the operator image is published; the chart and CSV reference `<repository>@<digest>`. */
  repository: 'ghcr.io/olmpub/inference-operator',
};

/** The marker `bundle build` leaves, so it only ever replaces a directory it wrote. */
export const BUILD_MARKER = '.olmpub-build.json';

export interface ReleaseBuildOptions {
  out: string;
  version: string;
  /** `REPOSITORY@sha256:…`; without it the OPERATOR_IMAGE_HOOK builds the image. */
  image?: string;
  /** Where the image the hook builds is published. @default OPERATOR_IMAGE_HOOK.repository */
  imageRepository?: string;
  channels?: string[];
  defaultChannel?: string;
  replaces?: string;
  skipRange?: string | null;
  serviceMonitor?: boolean;
  /** Seconds since the epoch for mtimes, createdAt and image `created`. @default SOURCE_DATE_EPOCH, else 0 */
  created?: number;
  permissions?: readonly Declaration[];
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

/** Builds the chart, the bundle and the images into `out`, replacing it atomically. Same inputs, same bytes. */
export async function buildRelease(o: ReleaseBuildOptions): Promise<ReleaseBuildResult> {
  const created = o.created ?? sourceDateEpoch();
  const permissions = o.permissions ?? declaredPermissions();
  if (!(await isOurDirectory(o.out))) {
    throw usageError('bundle-out-not-ours', `${o.out} exists and was not written by olmpub bundle build`, { hint: `pick an empty or new directory (bundle build replaces --out entirely and looks for ${BUILD_MARKER})` });
  }
  const warnings: string[] = [];
  if (!o.image && !OPERATOR_IMAGE_HOOK.build) {
    throw usageError('bundle-no-operator-image', 'no operator image: pass --image REPOSITORY@sha256:<digest>', {
      hint: 'the operator image build is not wired into bundle build yet (OPERATOR_IMAGE_HOOK in cli/commands/bundle.ts); build and push it, then pass its digest',
    });
  }
  const problems = checkInstallOptions({ image: o.image ?? `${o.imageRepository ?? OPERATOR_IMAGE_HOOK.repository}@sha256:${'0'.repeat(64)}` });
  if (problems.length) throw usageError('bundle-bad-image', problems[0]!.message, { hint: problems[0]!.hint });
  if (managerRules(resolveInstallOptions({ image: o.image ?? `${OPERATOR_IMAGE_HOOK.repository}@sha256:${'0'.repeat(64)}`, permissions })).cluster.length === 0) {
    warnings.push('the operator declares no cluster permissions (operator/rbac-declarations.ts): the manager ClusterRole grants nothing');
  }
  let result: ReleaseBuildResult | undefined;
  await replaceDirAtomic(o.out, async (tmp) => {
    const layoutDir = join(tmp, 'oci');
    const store = new OciLayoutStore(layoutDir);
    let image = o.image;
    let operator: ReleaseBuildResult['images']['operator'];
    if (!image) {
      const tag = `operator-v${helmTag(o.version)}`;
      const built = await OPERATOR_IMAGE_HOOK.build!({ store, tag, version: o.version, created });
      image = `${o.imageRepository ?? OPERATOR_IMAGE_HOOK.repository}@${built.digest}`;
      operator = { tag, digest: built.digest };
    }
    // Everything is rendered and checked before the first file is written.
    const chart = buildChart({ version: o.version, image, permissions });
    const tgz = await chartArchive(chart, { mtime: created });
    const bundle = buildRegistryV1Bundle({
      version: o.version,
      image,
      permissions,
      created: new Date(created * 1000),
      ...(o.channels ? { channels: o.channels } : {}),
      ...(o.defaultChannel ? { defaultChannel: o.defaultChannel } : {}),
      ...(o.replaces ? { replaces: o.replaces } : {}),
      ...(o.skipRange !== undefined ? { skipRange: o.skipRange } : {}),
      ...(o.serviceMonitor ? { serviceMonitor: true } : {}),
    });
    const { gzipBytes } = await checkRegistryV1(bundle.files);

    const put = async (path: string, data: string | Uint8Array) => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, data);
    };
    const chartPath = join(tmp, 'chart', chart.archiveName);
    await put(chartPath, tgz);
    for (const f of bundle.files) await put(join(tmp, 'bundle', f.path), f.content);

    const bundleTag = `bundle-v${helmTag(o.version)}`;
    const bundleImage = await writeBundleImage(bundle, { store, tag: bundleTag, created });
    const artifact = await helmChartArtifact(tgz);
    for (const blob of [artifact.config, ...artifact.layers]) if (!(await store.exists(blob.descriptor))) await store.pushBlob(blob.descriptor, bufferSource(blob.bytes));
    const chartTag = `chart-${artifact.tag}`;
    await store.pushManifest(artifact.manifest.descriptor, artifact.manifest.bytes, { tag: chartTag });

    result = {
      out: o.out,
      version: o.version,
      image,
      chart: { path: join(o.out, 'chart', chart.archiveName), bytes: tgz.length, sha256: artifact.layers[0]!.descriptor.digest },
      bundle: { dir: join(o.out, 'bundle'), files: bundle.files.map((f) => f.path), csv: bundle.csv.metadata.name, gzipBytes },
      images: {
        layout: join(o.out, 'oci'),
        bundle: { tag: bundleTag, digest: bundleImage.manifest.descriptor.digest },
        chart: { tag: chartTag, digest: artifact.manifest.descriptor.digest },
        ...(operator ? { operator } : {}),
      },
      warnings,
    };
    const marker = { ...result, out: '.', chart: { ...result.chart, path: relative(o.out, result.chart.path) }, bundle: { ...result.bundle, dir: 'bundle' }, images: { ...result.images, layout: 'oci' } };
    await put(join(tmp, BUILD_MARKER), canonicalJSON(marker, 2) + '\n');
  });
  return result!;
}

function summary(r: ReleaseBuildResult, out: NodeJS.WritableStream): string {
  const lines = [
    color.green(`built inference-operator ${r.version} into ${r.out}`, out),
    `  operator image  ${r.image}`,
    `  chart           ${r.chart.path} (${formatBytes(r.chart.bytes)}, ${r.chart.sha256})`,
    `  bundle          ${r.bundle.dir}/ (${r.bundle.csv}, ${r.bundle.files.length} files, ${formatBytes(r.bundle.gzipBytes)} gzipped)`,
    `  OCI layout      ${r.images.layout}`,
    `    ${r.images.bundle.tag.padEnd(22)} ${r.images.bundle.digest}  registry+v1 bundle image`,
    `    ${r.images.chart.tag.padEnd(22)} ${r.images.chart.digest}  Helm chart (OCI artifact)`,
  ];
  if (r.images.operator) lines.push(`    ${r.images.operator.tag.padEnd(22)} ${r.images.operator.digest}  operator image`);
  else lines.push(`    (operator image not built here: ${r.image})`);
  for (const w of r.warnings) lines.push(color.yellow(`  warning: ${w}`, out));
  lines.push('', `Push: olmpub image copy oci:${r.images.layout}:${r.images.bundle.tag} REGISTRY/REPO:v${r.version}`);
  return lines.join('\n');
}

const SEMVER_HINT = 'use MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] without a leading v';

export const bundleBuild: Command = {
  noun: 'bundle',
  verb: 'build',
  summary: 'build the Helm chart, the registry+v1 bundle and their images from the install manifests model',
  description: `
Renders the operator's install manifests model (bundle/manifests) into its two packagings and writes, under
--out (replaced atomically: a failed build leaves the previous output untouched):

  chart/inference-operator-VERSION.tgz   the Helm chart, laid out as "helm package" writes it
  bundle/manifests/, bundle/metadata/    the registry+v1 bundle (CSV, CRDs, Service, NetworkPolicy, PDB, ...)
  oci/                                   an OCI image layout: tag bundle-vVERSION (the bundle image, bundle
                                         annotations as labels) and chart-VERSION (the chart as Helm pushes it)

Every OLM v1 limit on the bundle is checked before anything is written (AllNamespaces, no APIService,
webhook definitions, flat manifests/, one CSV, allowed kinds, owned CRDs, least-privilege RBAC, 1 MiB
gzipped); a violation fails with exit 1 and a tree of problems.

The build is deterministic: the same inputs give byte-identical files and digests. Timestamps (archive
mtimes, the CSV's createdAt, image "created") come from SOURCE_DATE_EPOCH, else the epoch.

Without --image, the operator image is built too (as "olmpub image build" builds it; the release version
must then be the checkout's) into the layout under operator-vVERSION, and the chart and the CSV pin
--image-repository@<its digest>. With --image, the manifests pin that image and none is built.`,
  examples: [
    'olmpub bundle build --out ./out --image-repository ghcr.io/acme/inference-operator',
    'olmpub bundle build --out ./out --version 0.2.0 --image ghcr.io/acme/inference-operator@sha256:...',
    'SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) olmpub bundle build --out ./out --image REF -o json',
    'olmpub bundle build --out ./out --image REF --channels candidate,fast --replaces inference-operator.v0.1.0',
  ],
  options: {
    out: { type: 'string', value: 'DIR', description: 'output directory (created, or replaced when an earlier build wrote it)' },
    version: { type: 'string', value: 'V', description: 'release version, strict semver', default: pkg.version },
    image: { type: 'string', value: 'REF', description: 'operator image pinned by digest: REPOSITORY@sha256:<64 hex> (default: build it)' },
    'image-repository': { type: 'string', value: 'REPO', description: 'where the built operator image is published', default: OPERATOR_IMAGE_HOOK.repository },
    channels: { type: 'string', value: 'LIST', description: 'bundle channels, comma separated', default: 'stable' },
    'default-channel': { type: 'string', value: 'NAME', description: 'default channel (default: the first channel)' },
    replaces: { type: 'string', value: 'CSV', description: 'the CSV this release replaces, e.g. inference-operator.v0.1.0' },
    'skip-range': { type: 'string', value: 'RANGE', description: 'olm.skipRange (default: <VERSION); "none" leaves it out' },
    'service-monitor': { type: 'boolean', description: 'ship a ServiceMonitor in the bundle (needs prometheus-operator CRDs)' },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length) throw usageError('bad-arguments', 'bundle build takes no positional arguments', { hint: 'olmpub bundle build --out DIR --image REF' });
    const out = ctx.values.out as string | undefined;
    if (!out) throw usageError('bad-arguments', '--out DIR is required', { hint: 'olmpub bundle build --out ./out --image REF' });
    const version = String(ctx.values.version);
    if (!/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version)) throw usageError('bad-arguments', `--version "${version}" is not semver`, { hint: SEMVER_HINT });
    const skip = ctx.values['skip-range'] as string | undefined;
    const result = await buildRelease({
      out,
      version,
      ...(ctx.values.image ? { image: String(ctx.values.image) } : {}),
      imageRepository: String(ctx.values['image-repository']),
      channels: String(ctx.values.channels).split(',').map((c) => c.trim()).filter(Boolean),
      ...(ctx.values['default-channel'] ? { defaultChannel: String(ctx.values['default-channel']) } : {}),
      ...(ctx.values.replaces ? { replaces: String(ctx.values.replaces) } : {}),
      ...(skip !== undefined ? { skipRange: skip === 'none' ? null : skip } : {}),
      ...(ctx.values['service-monitor'] === true ? { serviceMonitor: true } : {}),
    });
    emit(ctx.output, result, () => summary(result, ctx.stdout), ctx.stdout);
  },
};

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

export const bundleValidate: Command = {
  noun: 'bundle',
  verb: 'validate',
  args: 'DIR',
  summary: "check a registry+v1 bundle directory against OLM v1's limits",
  description: `
Applies the checks "bundle build" runs before writing to any registry+v1 bundle directory: flat manifests/,
exactly one CSV, allowed kinds, bundle annotations, AllNamespaces supported (and the only mode with a
conversion webhook), no APIService, no dependencies, valid webhook definitions, owned CRDs shipped and
shipped CRDs owned, digest-pinned images, alm-examples of owned APIs, least-privilege RBAC, 1 MiB gzipped.

Exit status: 0 valid, 1 a limit is broken, 2 usage.`,
  examples: ['olmpub bundle validate ./out/bundle', 'olmpub bundle validate ./bundle -o json'],
  structuredOutput: true,
  async run(ctx) {
    const [dir, ...extra] = ctx.positionals;
    if (!dir || extra.length) throw usageError('bad-arguments', 'bundle validate takes one DIR', { hint: 'olmpub bundle validate ./out/bundle' });
    const files = await readBundleDir(dir);
    const { gzipBytes } = await checkRegistryV1(files);
    emit(ctx.output, { passed: true, dir, files: files.length, gzipBytes }, () => color.green(`✓ ${dir}: a valid registry+v1 bundle for OLM v1 (${files.length} files, ${formatBytes(gzipBytes)} gzipped)`, ctx.stdout), ctx.stdout);
  },
};

export const chartRender: Command = {
  noun: 'chart',
  verb: 'render',
  summary: 'print the manifests the Helm chart renders for a set of values, computed from the model',
  description: `
Prints what "helm template" of the inference-operator chart renders (CRDs included), computed directly
from the install manifests model for the chart's values with --set applied: the reference the chart's
templates are tested against. Useful to review a change of values without Helm.

--set follows Helm's syntax for the common cases: a.b=c, true/false/null, integers, {x,y} lists.`,
  examples: [
    'olmpub chart render --image ghcr.io/acme/inference-operator@sha256:... --set webhook.enabled=false',
    'olmpub chart render --image REF --set replicas=3 --set watchNamespaces={team-a,team-b} -o json',
  ],
  options: {
    image: { type: 'string', value: 'REF', description: 'operator image pinned by digest: REPOSITORY@sha256:<64 hex>' },
    version: { type: 'string', value: 'V', description: 'chart version', default: pkg.version },
    set: { type: 'string', value: 'KEY=VALUE', multiple: true, description: 'override a chart value' },
    namespace: { type: 'string', short: 'n', value: 'NS', description: 'release namespace', default: DEFAULT_NAMESPACE },
    release: { type: 'string', value: 'NAME', description: 'release name', default: CRD_RELEASE.name },
  },
  structuredOutput: true,
  async run(ctx) {
    const image = ctx.values.image as string | undefined;
    if (!image) throw usageError('bad-arguments', '--image REPOSITORY@sha256:<digest> is required', { hint: 'the chart pins the operator image by digest' });
    const problems = checkInstallOptions({ image });
    if (problems.length) throw usageError('bundle-bad-image', problems[0]!.message, { hint: problems[0]!.hint });
    let values: unknown = {};
    for (const s of (ctx.values.set as string[] | undefined) ?? []) values = mergeValues(values, parseSet(s));
    const { manifests } = renderChart({
      image,
      version: String(ctx.values.version),
      values,
      release: { name: String(ctx.values.release), namespace: String(ctx.values.namespace) },
    });
    if (ctx.output === 'text') ctx.stdout.write(yamlStream(manifests.objects, false));
    else emit(ctx.output, { apiVersion: 'v1', kind: 'List', items: manifests.objects }, () => '', ctx.stdout);
  },
};

export const BUNDLE_COMMANDS: Command[] = [bundleBuild, bundleValidate, chartRender];
