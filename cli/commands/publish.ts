/** `olmpub publish`: the whole chain, from this checkout to an installable catalog. */
import type { Command } from '../command.js';
import { publish, type PublishResult } from '../../catalog/publish.js';
import { color, emit } from '../../lib/output.js';

const short = (ref: string) => ref.replace(/@sha256:([0-9a-f]{12})[0-9a-f]{52}$/, '@sha256:$1…');

/** The upgrade graph in a terminal: per channel, versions in order, the head marked, deprecations struck. */
export function textGraph(r: PublishResult, out: NodeJS.WritableStream): string {
  const deprecated = new Set(r.versions.filter((v) => v.deprecated).map((v) => v.version));
  const width = Math.max(...r.channels.map((c) => c.name.length + (c.name === r.defaultChannel ? 10 : 0)));
  return r.channels
    .map((c) => {
      const label = `${c.name}${c.name === r.defaultChannel ? ' (default)' : ''}`.padEnd(width);
      const chain = c.versions.map((v) => {
        const text = deprecated.has(v) ? `${v} (deprecated)` : v;
        return v === c.head ? color.bold(`[${text}]`, out) : deprecated.has(v) ? color.yellow(text, out) : text;
      });
      return `  ${label}  ${chain.join(' ─▶ ')}${c.deprecated ? color.yellow('  channel deprecated', out) : ''}`;
    })
    .join('\n');
}

function summary(r: PublishResult, out: NodeJS.WritableStream): string {
  const lines = [
    color.green(`published ${r.package}: ${r.versions.length} versions to ${r.store}`, out),
    '',
    `  operator image  ${r.operatorImage || '(none built: every version is pinned)'}`,
    `  catalog image   ${r.catalogImage}`,
    '',
    '  version    source  bundle image',
    ...r.versions.map((v) => `  ${v.version.padEnd(9)}  ${v.source.padEnd(6)}  ${short(v.bundle)}${v.deprecated ? color.yellow('  deprecated', out) : ''}`),
    '',
    'Upgrade graph (each version can also jump to the head through skips and skipRange):',
    textGraph(r, out),
    '',
    'Checked:',
    `  RBAC            ${r.checks.rbac}`,
    `  CRD upgrades    ${r.checks.crdUpgrades.length ? r.checks.crdUpgrades.join(', ') : 'one version, nothing to compare'}`,
    `  catalog         ${r.checks.catalog}`,
    ...r.checks.warnings.map((w) => color.yellow(`  warning: ${w}`, out)),
    '',
    'Wrote:',
    `  ${r.files.catalog}/      File-Based Catalog (opm layout)`,
    `  ${r.files.bundles}/      registry+v1 bundles;  ${r.files.charts}/  Helm charts`,
    `  ${r.files.extension}/    ClusterCatalog + ClusterExtension:  kubectl apply -k ${r.files.extension}`,
    `  ${r.files.graph}  the upgrade graph to open in a browser`,
  ];
  return lines.join('\n');
}

export const publishCommand: Command = {
  noun: 'publish',
  verb: '',
  summary: 'build, validate and publish everything: operator image, charts, bundles, catalog, install manifests',
  description: `
Runs the whole chain for the versions in the catalog template (catalog/template.yaml):
  1. checks the operator's RBAC for least privilege (the model every packaging is a view of);
  2. builds the operator image from this checkout (no Docker);
  3. per version: the Helm chart and the registry+v1 bundle, every OLM v1 limit checked, and their images;
     a version pinned in the template (image: …@sha256:…) is a released bundle and is reused as it is;
  4. checks CRD upgrade safety between each version and its predecessor (OLM v1's crdify rules);
  5. renders the File-Based Catalog and validates it with every opm validate rule, the OLM v1 limits and
     reachability; builds the catalog image (its tag is written last);
  6. writes ClusterCatalog/ClusterExtension manifests and the upgrade graph.

By default the images go to the OCI layout <out>/oci (tags operator-vX, bundle-vX, chart-X,
catalog-latest) and the references inside point at --image-prefix; copy them to a registry later with
"olmpub image copy". With --registry HOST/NAMESPACE they are pushed there instead, to the repositories
<package>, <package>-bundle, <package>-catalog and charts/<package>.

Nothing under <out> changes unless every check passed. Timestamps come from SOURCE_DATE_EPOCH (else 0),
so the same checkout gives the same digests.`,
  examples: [
    'olmpub publish',
    'olmpub publish --out /tmp/release -o json',
    'olmpub publish --registry quay.io/acme',
    'olmpub publish --registry 127.0.0.1:5000/olmpub --plain-http --olm-version 1.10',
  ],
  options: {
    template: { type: 'string', short: 't', value: 'FILE', description: 'catalog template', default: 'catalog/template.yaml' },
    out: { type: 'string', value: 'DIR', description: 'output folder (and the OCI layout <out>/oci)', default: 'out' },
    registry: { type: 'string', value: 'HOST/NS', description: 'push images to this registry namespace instead of the OCI layout' },
    'plain-http': { type: 'boolean', description: 'talk to the registry over plain HTTP (local test registries only)' },
    'image-prefix': { type: 'string', value: 'PREFIX', description: 'repository prefix written into references when publishing to the layout', default: 'ghcr.io/olmpub' },
    'olm-version': { type: 'string', value: 'X.Y', description: 'OLM v1 version the extension manifests target', default: '1.11' },
  },
  structuredOutput: true,
  async run(ctx) {
    const tty = ctx.stderr.isTTY === true;
    const result = await publish({
      template: ctx.values.template as string,
      out: ctx.values.out as string,
      ...(ctx.values.registry ? { registry: ctx.values.registry as string } : {}),
      remote: { plainHttp: ctx.values['plain-http'] === true },
      imagePrefix: ctx.values['image-prefix'] as string,
      olmVersion: ctx.values['olm-version'] as string,
      onStep: (m) => {
        if (ctx.output === 'text' || tty) ctx.stderr.write(`${color.dim(`• ${m}`, ctx.stderr)}\n`);
      },
    });
    emit(ctx.output, result, () => summary(result, ctx.stdout), ctx.stdout);
  },
};

export const PUBLISH_COMMANDS: Command[] = [publishCommand];
