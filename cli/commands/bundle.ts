/**
 * `olmpub bundle build`: the release deliverables from the install manifests model (the Helm chart .tgz,
 * the registry+v1 bundle directory, and the images as an OCI layout), deterministically and atomically.
 * `olmpub bundle validate DIR`: OLM v1's limits on a registry+v1 bundle directory.
 * `olmpub chart render`: the manifests the chart renders for a set of values, computed from the model.
 */
import { readFileSync } from 'node:fs';
import type { Command } from '../command.js';
import { yamlStream } from '../../lib/canonical.js';
import { usageError } from '../../lib/errors.js';
import { color, emit, formatBytes } from '../../lib/output.js';
import { mergeValues, parseSet, renderChart, CRD_RELEASE } from '../../bundle/chart/index.js';
import { checkRegistryV1 } from '../../bundle/registryv1/index.js';
import { checkInstallOptions, DEFAULT_NAMESPACE } from '../../bundle/manifests/index.js';
import { buildRelease, readBundleDir, DEFAULT_IMAGE_REPOSITORY, type ReleaseBuildResult } from '../../bundle/release.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

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
    'image-repository': { type: 'string', value: 'REPO', description: 'where the built operator image is published', default: DEFAULT_IMAGE_REPOSITORY },
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
