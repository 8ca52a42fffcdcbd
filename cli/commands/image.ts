/** `olmpub image copy SRC DST` and `olmpub image inspect REF`: images between OCI layouts and registries. */
import type { Command, CommandContext } from '../command.js';
import { usageError } from '../../lib/errors.js';
import { Progress, emit, formatBytes, table } from '../../lib/output.js';
import {
  MediaType,
  copy,
  isIndexType,
  isManifestType,
  openStore,
  parseManifest,
  readAll,
  readReference,
  verifyBytes,
  type Descriptor,
  type ImageConfig,
  type ImageIndex,
  type ImageManifest,
  type OpenedStore,
} from '../../bundle/oci/index.js';
import { formatPlatform } from '../../bundle/image/platform.js';

const REFERENCE_HELP = `
References:
  oci:PATH[:TAG|@DIGEST]               an OCI image layout directory (created on copy when missing)
  HOST[:PORT]/REPOSITORY[:TAG][@DIGEST] a registry; without a host, Docker Hub (docker.io/library/...)

Registries are spoken to over HTTPS unless --plain-http is given. Credentials come from docker config.json
($DOCKER_CONFIG/config.json or ~/.docker/config.json: auths, credHelpers, credsStore), as oras and docker
write it; Bearer token and Basic authentication are both supported.`;

const plainHttp = { type: 'boolean' as const, description: 'talk to registries over plain HTTP (test registries only)' };

function open(ref: string, ctx: CommandContext): OpenedStore {
  return openStore(ref, { plainHttp: ctx.values['plain-http'] === true });
}

export const imageCopy: Command = {
  noun: 'image',
  verb: 'copy',
  args: 'SRC DST',
  summary: 'copy an image, index or artifact between OCI layouts and registries',
  description: `
Copies everything SRC points at (an image, an index with its images, a Helm chart or any artifact) to DST,
as oras copy does: blobs already in DST are skipped (checked with HEAD first), blobs are mounted across
repositories of the same registry, children are written before the manifests that name them, and DST's tag
is written last, so a failed copy never leaves a tag on an incomplete image. Up to 3 transfers run at once;
transient failures (5xx, 429, timeouts, dropped connections) are retried with backoff, and chunked uploads
resume where they stopped. DST without a tag takes SRC's tag.
${REFERENCE_HELP}

Exit status: 0 copied, 2 usage error, 3 registry or layout unreachable, missing, or authentication failed.`,
  examples: [
    'olmpub image copy oci:./out/image:1.0.0 127.0.0.1:5000/olmpub/operator:1.0.0 --plain-http',
    'olmpub image copy 127.0.0.1:5000/olmpub/operator:1.0.0 oci:./mirror',
    'olmpub image copy registry.example.com/team/op@sha256:... registry.example.com/team/op:stable',
  ],
  options: {
    'plain-http': plainHttp,
    chunked: { type: 'boolean', description: 'upload blobs in chunks (PATCH) even when small' },
    concurrency: { type: 'string', value: 'N', description: 'transfers at once', default: '3' },
  },
  structuredOutput: true,
  async run(ctx) {
    const [srcRef, dstRef, ...extra] = ctx.positionals;
    if (!srcRef || !dstRef || extra.length) throw usageError('bad-arguments', 'image copy takes SRC and DST', { hint: 'olmpub image copy SRC DST (see --help)' });
    const concurrency = Number(ctx.values.concurrency ?? 3);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw usageError('bad-arguments', '--concurrency must be a whole number from 1 to 32');
    const src = open(srcRef, ctx);
    const dst = open(dstRef, ctx);
    try {
      const from = readReference(src);
      if (!from) throw usageError('bad-arguments', `${srcRef} names no tag or digest`, { hint: 'write oci:PATH:TAG or oci:PATH@sha256:...' });
      const progress = new Progress('copying', ctx.stderr);
      const sizes = new Map<string, { done: number; total: number }>();
      const draw = () => {
        let done = 0;
        let total = 0;
        for (const s of sizes.values()) {
          done += s.done;
          total += s.total;
        }
        progress.update(done, total);
      };
      let result;
      try {
        result = await copy(src.store, from, dst.store, dst.reference ?? (from.startsWith('sha256:') ? undefined : from), {
          concurrency,
          ...(ctx.values.chunked === true ? { chunked: true } : {}),
          onProgress: (desc, done, total) => {
            sizes.set(desc.digest, { done, total });
            draw();
          },
        });
      } finally {
        progress.finish();
      }
      const tag = dst.reference && !dst.reference.startsWith('sha256:') ? dst.reference : from.startsWith('sha256:') ? undefined : from;
      const data = {
        source: srcRef,
        destination: dstRef,
        ...(tag ? { tag } : {}),
        digest: result.root.digest,
        mediaType: result.root.mediaType,
        copied: result.copied,
        skipped: result.skipped,
        mounted: result.mounted,
      };
      emit(ctx.output, data, () =>
        [
          `copied ${srcRef} → ${dstRef}${tag && !dst.reference ? ` (tag ${tag})` : ''}`,
          `  digest   ${result.root.digest}`,
          `  nodes    ${result.copied} copied, ${result.mounted} mounted, ${result.skipped} already present`,
        ].join('\n'),
      ctx.stdout);
    } finally {
      src.close();
      dst.close();
    }
  },
};

interface InspectData {
  reference: string;
  descriptor: Descriptor;
  manifest: ImageManifest | ImageIndex;
  config?: unknown;
}

function describeManifest(data: InspectData): string {
  const lines = [`${data.reference}`, `  digest     ${data.descriptor.digest}`, `  mediaType  ${data.descriptor.mediaType}`, `  size       ${data.descriptor.size} B`];
  if ('manifests' in data.manifest) {
    lines.push('', table(['PLATFORM', 'MEDIA TYPE', 'DIGEST', 'SIZE'], data.manifest.manifests.map((d) => [d.platform ? formatPlatform(d.platform) : '-', d.mediaType, d.digest, formatBytes(d.size)])));
    return lines.join('\n');
  }
  const m = data.manifest as ImageManifest;
  if (m.artifactType) lines.push(`  artifact   ${m.artifactType}`);
  lines.push(`  config     ${m.config.mediaType} ${m.config.digest}`);
  if (m.config.mediaType === MediaType.ImageConfig || m.config.mediaType === MediaType.DockerConfig) {
    const c = data.config as ImageConfig;
    const cc = c.config ?? {};
    lines.push(`  platform   ${formatPlatform(c)}`);
    if (c.created) lines.push(`  created    ${c.created}`);
    if (cc.Entrypoint) lines.push(`  entrypoint ${JSON.stringify(cc.Entrypoint)}`);
    if (cc.Cmd) lines.push(`  cmd        ${JSON.stringify(cc.Cmd)}`);
    if (cc.User) lines.push(`  user       ${cc.User}`);
    if (cc.WorkingDir) lines.push(`  workdir    ${cc.WorkingDir}`);
    for (const e of cc.Env ?? []) lines.push(`  env        ${e}`);
    for (const [k, v] of Object.entries(cc.Labels ?? {}).sort()) lines.push(`  label      ${k}=${v}`);
  } else if (m.config.mediaType === MediaType.HelmConfig) {
    const c = data.config as { name?: string; version?: string; appVersion?: string; description?: string };
    lines.push(`  chart      ${c.name ?? '?'} ${c.version ?? '?'}${c.appVersion ? ` (app ${c.appVersion})` : ''}`);
    if (c.description) lines.push(`  about      ${c.description}`);
  }
  for (const [k, v] of Object.entries(m.annotations ?? {}).sort()) lines.push(`  annotation ${k}=${v}`);
  lines.push('', table(['LAYER', 'MEDIA TYPE', 'SIZE'], m.layers.map((d) => [d.digest, d.mediaType, formatBytes(d.size)])));
  return lines.join('\n');
}

export const imageInspect: Command = {
  noun: 'image',
  verb: 'inspect',
  args: 'REF',
  summary: 'show the manifest, index or config of an image or artifact',
  description: `
Resolves REF and prints its manifest: for an index, the platforms it lists; for an image, platform,
entrypoint, cmd, user, environment, labels and layers; for a Helm chart, the chart name and version.
-o json|yaml prints the descriptor, the manifest and the config as they are stored.
${REFERENCE_HELP}`,
  examples: ['olmpub image inspect oci:./out/image:1.0.0', 'olmpub image inspect 127.0.0.1:5000/olmpub/operator:1.0.0 --plain-http -o json'],
  options: { 'plain-http': plainHttp },
  structuredOutput: true,
  async run(ctx) {
    const [ref, ...extra] = ctx.positionals;
    if (!ref || extra.length) throw usageError('bad-arguments', 'image inspect takes one REF', { hint: 'olmpub image inspect REF (see --help)' });
    const opened = open(ref, ctx);
    try {
      const reference = readReference(opened);
      if (!reference) throw usageError('bad-arguments', `${ref} names no tag or digest`, { hint: 'write oci:PATH:TAG or oci:PATH@sha256:...' });
      const descriptor = await opened.store.resolve(reference);
      if (!isManifestType(descriptor.mediaType) && !isIndexType(descriptor.mediaType)) {
        throw usageError('oci-not-a-manifest', `${ref} is ${descriptor.mediaType}, not a manifest or index`);
      }
      const manifest = parseManifest(await opened.store.fetchManifest(descriptor), descriptor);
      const data: InspectData = { reference: ref, descriptor, manifest };
      if (!('manifests' in manifest)) {
        const cfg = (manifest as ImageManifest).config;
        if (cfg.size <= 4 * 1024 * 1024 && /json/.test(cfg.mediaType)) {
          const bytes = await readAll(await opened.store.fetchBlob(cfg), 4 * 1024 * 1024);
          verifyBytes(bytes, cfg, `${ref}: config`);
          try {
            data.config = JSON.parse(bytes.toString('utf8'));
          } catch {
            data.config = undefined;
          }
        }
      }
      emit(ctx.output, data, () => describeManifest(data), ctx.stdout);
    } finally {
      opened.close();
    }
  },
};

export const IMAGE_COMMANDS: Command[] = [imageCopy, imageInspect];
