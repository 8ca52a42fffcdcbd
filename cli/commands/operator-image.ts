/**
 * `olmpub image build`: the operator image, built without Docker into an OCI layout or a registry.
 */
import type { Command } from '../command.js';
import { usageError } from '../../lib/errors.js';
import { Progress, emit, formatBytes, table } from '../../lib/output.js';
import { openStore } from '../../bundle/oci/open.js';
import { formatPlatform } from '../../bundle/image/platform.js';
import { buildOperatorImage, type OperatorImage } from '../../bundle/operator-image/index.js';

/** The layout the image goes to by default, relative to the working directory. */
export const DEFAULT_IMAGE_LAYOUT = 'out/oci';
/** The default tag in that layout: the one `olmpub bundle build` gives the operator image in its layout. */
export const defaultLayoutTag = (version: string): string => `operator-v${version.replace(/\+/g, '_')}`;

const ROLE_NAMES: Record<string, string> = { base: 'base', 'node-runtime': 'node runtime', dependencies: 'dependencies', app: 'app' };

function summary(out: string, r: OperatorImage, seconds: number): string {
  const lines = [
    `built inference-operator ${r.version} (${formatPlatform(r.platform)}) → ${out}`,
    `  digest     ${r.digest}`,
    `  size       ${formatBytes(r.totalSize)} to pull (manifest ${r.size} B, config ${r.config.size} B, ${r.layers.length} layers); ${formatBytes(r.uncompressedSize)} unpacked new layers`,
    `  node       ${r.node.from === 'runtime-layer' ? `${r.node.version} from this machine (runtime layer)` : `${r.node.path} of the base image${r.node.version ? ` (${r.node.version})` : ''}`}`,
    ...(r.base ? [`  base       ${r.base.reference} (${r.base.digest})`] : []),
    `  packages   ${r.dependencies.length} production dependencies`,
    `  created    ${r.created}${r.revision ? `, revision ${r.revision}` : ''}`,
    `  time       ${seconds.toFixed(1)} s`,
    '',
    table(
      ['LAYER', 'DIGEST', 'SIZE', 'UNPACKED', 'FILES'],
      r.layers.map((l) => [ROLE_NAMES[l.role] ?? l.role, l.digest, formatBytes(l.size), l.uncompressedSize !== undefined ? formatBytes(l.uncompressedSize) : '-', l.files !== undefined ? String(l.files) : '-']),
    ),
  ];
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

export const imageBuild: Command = {
  noun: 'image',
  verb: 'build',
  args: '',
  summary: 'build the operator image without Docker (node runtime, production dependencies, app)',
  description: `
Builds the olmpub inference operator image from this checkout, without a container daemon, into an OCI
layout or straight into a registry. Three layers, least to most often changed:
  node runtime   this machine's node, its shared libraries and loader (ldd), /etc/passwd and /etc/group
                 with user 65532 "nonroot", nsswitch.conf, CA certificates, /tmp (1777)
  dependencies   node_modules with the production closure of package-lock.json (no devDependencies),
                 without type declarations, source maps and Markdown
  app            dist/ of lib, operator, bundle, catalog and cli, bin/olmpub.js, package.json
Entrypoint ["/usr/local/bin/node", "/app/bin/olmpub.js"], Cmd ["operator", "run"], User 65532:65532,
WorkingDir /app, ports 8081, 8443, 9443. Nothing is written outside /tmp at run time, so the image runs
with a read-only root filesystem.

With --base the base image's layers come first. The node runtime layer is left out when the base has a
node executable (on its PATH, or at /usr/local/bin, /usr/bin, /nodejs/bin or /bin), and /usr/local/bin/node
then links to it; a base that declares NODE_VERSION must satisfy package.json's engines.node.

The build is reproducible: the same checkout, node binary and creation time give the same digest. The
creation time is SOURCE_DATE_EPOCH, else the time of the HEAD commit.

--out defaults to the OCI layout ${DEFAULT_IMAGE_LAYOUT} under the tag operator-v<version> (the tag olmpub
bundle build gives the operator image; a layout tag cannot hold "inference-operator:<version>" because
tags have no ":"). A registry --out without a tag is tagged <version>.

References: oci:PATH[:TAG] for an OCI layout, HOST[:PORT]/REPOSITORY[:TAG] for a registry (HTTPS unless
--plain-http; credentials from docker config.json).

Exit status: 0 built, 1 invalid input (lockfile, versions, platform), 2 usage error, 3 missing build
(npm ci / npm run build), registry unreachable or authentication failed.`,
  examples: [
    'olmpub image build',
    'olmpub image build --out oci:./out/oci:operator-dev -o json',
    'olmpub image build --out 127.0.0.1:5000/olmpub/inference-operator:0.1.0 --plain-http',
    'olmpub image build --base docker.io/library/node:20-slim --out ghcr.io/acme/inference-operator:0.1.0',
  ],
  options: {
    out: { type: 'string', value: 'REF', description: 'where to write the image: oci:PATH[:TAG] or a registry reference', default: `oci:${DEFAULT_IMAGE_LAYOUT}:operator-v<version>` },
    base: { type: 'string', value: 'REF', description: 'base image: oci:PATH:TAG or a registry reference (default: none, from scratch)' },
    'node-runtime': { type: 'string', value: 'WHEN', description: 'add the node runtime layer: auto (unless the base has node), always, never', default: 'auto' },
    'source-maps': { type: 'boolean', description: 'also copy the .js.map files of dist/' },
    'plain-http': { type: 'boolean', description: 'talk to registries over plain HTTP (test registries only)' },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length) throw usageError('bad-arguments', `unexpected arguments: ${ctx.positionals.join(' ')}`, { hint: 'olmpub image build [--out REF] [--base REF] (see --help)' });
    const nodeRuntime = String(ctx.values['node-runtime'] ?? 'auto');
    if (nodeRuntime !== 'auto' && nodeRuntime !== 'always' && nodeRuntime !== 'never') throw usageError('bad-arguments', `--node-runtime must be auto, always or never, got "${nodeRuntime}"`);
    const plainHttp = ctx.values['plain-http'] === true;
    const outRef = typeof ctx.values.out === 'string' && !ctx.values.out.includes('<version>') ? ctx.values.out : `oci:${DEFAULT_IMAGE_LAYOUT}`;
    const opened = openStore(outRef, { plainHttp });
    try {
      if (opened.parsed.kind === 'registry' ? opened.parsed.digest : opened.reference?.startsWith('sha256:')) {
        throw usageError('bad-arguments', `--out ${outRef} names a digest; a build writes a tag`, { hint: 'write oci:PATH[:TAG] or HOST/REPOSITORY[:TAG]' });
      }
      const layoutDefault = opened.parsed.kind === 'layout' && opened.reference === undefined;
      const progress = new Progress('pushing', ctx.stderr);
      const started = Date.now();
      let result: OperatorImage;
      try {
        result = await buildOperatorImage({
          store: opened.store,
          ...(opened.reference !== undefined ? { tag: opened.reference } : layoutDefault ? { tag: defaultLayoutTag } : {}),
          ...(typeof ctx.values.base === 'string' ? { base: ctx.values.base, remote: { plainHttp } } : {}),
          nodeRuntime,
          sourceMaps: ctx.values['source-maps'] === true,
          onProgress: (e) => {
            if (e.phase === 'push') progress.update(e.done, e.total);
            else if (ctx.stderr.isTTY && !process.env.CI) {
              if (e.phase === 'base') ctx.stderr.write(`reading the base image ${e.reference}\n`);
              else ctx.stderr.write(`building ${e.layers.map((l) => `${ROLE_NAMES[l.role]} (${l.files} files, ${formatBytes(l.bytes)})`).join(', ')}\n`);
            }
          },
        });
      } finally {
        progress.finish();
      }
      const seconds = (Date.now() - started) / 1000;
      const where = opened.parsed.kind === 'layout' ? `oci:${opened.parsed.path}:${result.tag}` : `${opened.store.description}:${result.tag}`;
      const { built: _built, ...data } = result;
      emit(ctx.output, { reference: where, ...data, seconds: Number(seconds.toFixed(3)) }, () => summary(where, result, seconds), ctx.stdout);
    } finally {
      opened.close();
    }
  },
};

export const OPERATOR_IMAGE_COMMANDS: Command[] = [imageBuild];

// `olmpub bundle build` builds the operator image itself (into its layout, pinned by digest) from now on.
