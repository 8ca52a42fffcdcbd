/** `olmpub extension manifests`: what a platform team applies to install the operator with OLM v1. */
import type { Command, CommandContext } from '../command.js';
import { extensionManifests, writeExtensionDir, type ExtensionOptions } from '../../catalog/extension/index.js';
import { loadManifests } from '../../bundle/crddiff/index.js';
import { usageError } from '../../lib/errors.js';
import { color, emit } from '../../lib/output.js';

const str = (ctx: CommandContext, name: string) => ctx.values[name] as string | undefined;

export const extensionManifestsCommand: Command = {
  noun: 'extension',
  verb: 'manifests',
  summary: 'write the Namespace, ClusterCatalog and ClusterExtension (plus RBAC or guardrails) to install with OLM v1',
  description: `
Writes a folder that a platform team applies as it is (kubectl apply -k DIR) or hands to Argo CD or Flux:
  namespace.yaml          the install namespace
  clustercatalog.yaml     the catalog image; by digest it is pinned, by tag it is polled (--poll-interval)
  clusterextension.yaml   the package, channels, version range, upgrade policy and CRD upgrade safety
  installer-rbac.yaml     OLM 1.10 and older: the ServiceAccount spec.serviceAccount names, with the
                          minimal ClusterRole derived from the bundle (the RBAC \`olmpub rbac check\` derives)
  guardrails.yaml         OLM 1.11 and newer (which ignores spec.serviceAccount and installs as
                          cluster-admin): ValidatingAdmissionPolicies that keep this package in its
                          namespace and catalog, forbid SelfCertified upgrades and turning CRD upgrade
                          safety off, and keep the ClusterCatalog on this repository
  kustomization.yaml      lists the files
The folder is replaced atomically.`,
  examples: [
    'olmpub extension manifests --catalog-image quay.io/acme/inference-catalog@sha256:… --channel stable-v1',
    'olmpub extension manifests --catalog-image registry.local/catalog:latest --poll-interval 5 --out gitops/olm',
    'olmpub extension manifests --catalog-image … --olm-version 1.10 --bundle-objects out/bundle/manifests',
  ],
  options: {
    'catalog-image': { type: 'string', value: 'REF', description: 'catalog image reference, by digest (pinned) or by tag (polled)' },
    out: { type: 'string', value: 'DIR', description: 'folder to write', default: 'out/extension' },
    package: { type: 'string', value: 'NAME', description: 'package to install', default: 'inference-operator' },
    'catalog-name': { type: 'string', value: 'NAME', description: 'ClusterCatalog name (default: <package>-catalog)' },
    name: { type: 'string', value: 'NAME', description: 'ClusterExtension name (default: the package name)' },
    namespace: { type: 'string', value: 'NS', description: 'install namespace (default: <package>-system)' },
    channel: { type: 'string', multiple: true, value: 'CHANNEL', description: 'channel to follow, e.g. stable-v1 (default: the package default channel)' },
    version: { type: 'string', value: 'RANGE', description: 'version range, e.g. ">=1.0.0 <2.0.0" (default: latest)' },
    policy: { type: 'string', value: 'POLICY', description: 'upgradeConstraintPolicy: CatalogProvided or SelfCertified', default: 'CatalogProvided' },
    'crd-upgrade-safety': { type: 'string', value: 'MODE', description: 'CRD upgrade safety preflight: Strict or None', default: 'Strict' },
    'poll-interval': { type: 'string', value: 'MINUTES', description: 'poll a tag-referenced catalog this often (default: 10)' },
    priority: { type: 'string', value: 'N', description: 'ClusterCatalog priority when several catalogs offer the package (default: 0)' },
    'olm-version': { type: 'string', value: 'X.Y', description: 'OLM v1 version on the cluster', default: '1.11' },
    'bundle-objects': { type: 'string', value: 'PATH', description: 'manifests the bundle installs (file or folder); needed for OLM 1.10 and older' },
  },
  structuredOutput: true,
  async run(ctx) {
    const catalogImage = str(ctx, 'catalog-image');
    if (!catalogImage) throw usageError('missing-catalog-image', '--catalog-image is required', { hint: 'pass the catalog image that olmpub publish pushed, e.g. --catalog-image HOST/REPO@sha256:…' });
    const policy = str(ctx, 'policy');
    if (policy !== 'CatalogProvided' && policy !== 'SelfCertified') throw usageError('bad-policy', `--policy must be CatalogProvided or SelfCertified, not "${policy}"`);
    const safety = str(ctx, 'crd-upgrade-safety');
    if (safety !== 'Strict' && safety !== 'None') throw usageError('bad-crd-upgrade-safety', `--crd-upgrade-safety must be Strict or None, not "${safety}"`);
    const int = (name: string) => {
      const v = str(ctx, name);
      if (v === undefined) return undefined;
      if (!/^-?\d+$/.test(v)) throw usageError('bad-number', `--${name} must be a whole number, not "${v}"`);
      return Number(v);
    };
    const bundlePath = str(ctx, 'bundle-objects');
    const options: ExtensionOptions = {
      catalogImage,
      packageName: str(ctx, 'package'),
      catalogName: str(ctx, 'catalog-name'),
      extensionName: str(ctx, 'name'),
      namespace: str(ctx, 'namespace'),
      channels: ctx.values.channel as string[] | undefined,
      version: str(ctx, 'version'),
      upgradeConstraintPolicy: policy,
      crdUpgradeSafety: safety,
      pollIntervalMinutes: int('poll-interval'),
      catalogPriority: int('priority'),
      olmVersion: str(ctx, 'olm-version'),
      bundleObjects: bundlePath ? (await loadManifests([bundlePath])).map((l) => l.object) : undefined,
    };
    const manifests = extensionManifests(options);
    const out = str(ctx, 'out')!;
    const written = await writeExtensionDir(out, manifests);
    for (const w of manifests.warnings) ctx.stderr.write(`${color.yellow('warning', ctx.stderr)}: ${w}\n`);
    emit(
      ctx.output,
      { dir: out, files: written, serviceAccountMode: manifests.serviceAccountMode, warnings: manifests.warnings, objects: manifests.files.flatMap((f) => f.objects) },
      () =>
        [
          `wrote ${out}/ for OLM ${options.olmVersion} (${manifests.serviceAccountMode ? 'installer ServiceAccount and RBAC' : 'admission guardrails'}):`,
          ...written.map((f) => `  ${f}`),
          '',
          `apply with: kubectl apply -k ${out}`,
        ].join('\n'),
      ctx.stdout,
    );
  },
};

export const EXTENSION_COMMANDS: Command[] = [extensionManifestsCommand];
