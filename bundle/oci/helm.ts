/**
 * Helm charts as OCI artifacts, as `helm push` writes them (helm pkg/registry): config
 * `application/vnd.cncf.helm.config.v1+json` holding Chart.yaml's metadata as JSON (Go field order,
 * empty fields omitted), the .tgz unchanged as `application/vnd.cncf.helm.chart.content.v1.tar+gzip`
 * (plus the provenance file when given), an image manifest without `mediaType`, annotations from the
 * chart (title, version, description, url, source, authors, created, and Chart.yaml's own annotations),
 * tag = version with `+` → `_`.
 */
import YAML from 'yaml';
import { validationError } from '../../lib/errors.js';
import { readTar, type TarEntry } from '../image/tar.js';
import { Annotation, MediaType, goJSON, type Descriptor, type ImageManifest } from './content.js';
import { sha256 } from './digest.js';
import { helmTag } from './reference.js';
import { bufferSource, type Store } from './store.js';

export interface ChartMetadata {
  name: string;
  version: string;
  apiVersion: string;
  home?: string;
  sources?: string[];
  description?: string;
  keywords?: string[];
  maintainers?: Array<{ name?: string; email?: string; url?: string }>;
  icon?: string;
  condition?: string;
  tags?: string;
  appVersion?: string;
  deprecated?: boolean;
  annotations?: Record<string, string>;
  kubeVersion?: string;
  dependencies?: Array<Record<string, unknown>>;
  type?: string;
}

export interface HelmArtifact {
  metadata: ChartMetadata;
  tag: string;
  config: { descriptor: Descriptor; bytes: Buffer };
  layers: Array<{ descriptor: Descriptor; bytes: Buffer }>;
  manifest: { descriptor: Descriptor; bytes: Buffer; json: ImageManifest };
}

/** Helm's sanitizeString: whitespace becomes a space, non-printable characters go. */
const sanitize = (s: string): string => s.replace(/\s/gu, ' ').replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/gu, '');

/** Helm escapes non-ASCII characters in annotation values as \uXXXX (UTF-16). */
export function escapeNonASCII(value: string): string {
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) {
      out += ch;
      continue;
    }
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** Reads Chart.yaml (the top-level chart's, `<name>/Chart.yaml`) and its mtime out of a chart archive. */
export async function readChartYaml(tgz: Uint8Array): Promise<{ metadata: ChartMetadata; mtime: Date }> {
  let entries: TarEntry[];
  try {
    entries = await readTar(tgz, { gzip: true });
  } catch (err) {
    throw validationError('helm-bad-archive', `the chart archive cannot be read: ${(err as Error).message}`);
  }
  const chartYaml = entries.find((e) => {
    const parts = e.name.replace(/^\.\//, '').split('/');
    return parts.length === 2 && parts[1] === 'Chart.yaml';
  });
  if (!chartYaml) throw validationError('helm-bad-archive', 'the chart archive has no <name>/Chart.yaml');
  const raw = YAML.parse(chartYaml.content.toString('utf8')) as Record<string, unknown> | null;
  if (!raw || typeof raw !== 'object') throw validationError('helm-bad-chart', 'Chart.yaml is not a mapping');
  for (const key of ['apiVersion', 'name', 'version'] as const) {
    if (typeof raw[key] !== 'string' || !raw[key]) throw validationError('helm-bad-chart', `Chart.yaml: ${key} is required`, { place: `Chart.yaml:${key}` });
  }
  return { metadata: raw as unknown as ChartMetadata, mtime: new Date(chartYaml.mtime * 1000) };
}

/** Chart metadata as Helm's `json.Marshal(chart.Metadata)`: Go field order, omitempty, sanitised strings. */
export function helmConfigJSON(m: ChartMetadata): string {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? sanitize(v) : undefined);
  const list = (v: unknown) => (Array.isArray(v) && v.length ? v.map((x) => sanitize(String(x))) : undefined);
  const ordered: Record<string, unknown> = {
    name: str(m.name),
    home: str(m.home),
    sources: list(m.sources),
    version: str(m.version),
    description: str(m.description),
    keywords: list(m.keywords),
    maintainers: Array.isArray(m.maintainers) && m.maintainers.length
      ? m.maintainers.map((x) => ({ name: str(x?.name), email: str(x?.email), url: str(x?.url) }))
      : undefined,
    icon: str(m.icon),
    apiVersion: str(m.apiVersion),
    condition: str(m.condition),
    tags: str(m.tags),
    appVersion: m.appVersion !== undefined && m.appVersion !== '' ? sanitize(String(m.appVersion)) : undefined,
    deprecated: m.deprecated ? true : undefined,
    annotations: m.annotations && Object.keys(m.annotations).length
      ? Object.fromEntries(Object.keys(m.annotations).sort().map((k) => [k, String(m.annotations![k])]))
      : undefined,
    kubeVersion: str(m.kubeVersion),
    dependencies: Array.isArray(m.dependencies) && m.dependencies.length
      ? m.dependencies.map((d) => ({
          name: d.name ?? '',
          version: d.version || undefined,
          repository: d.repository ?? '',
          condition: d.condition || undefined,
          tags: Array.isArray(d.tags) && d.tags.length ? d.tags : undefined,
          enabled: d.enabled ? true : undefined,
          'import-values': Array.isArray(d['import-values']) && d['import-values'].length ? d['import-values'] : undefined,
          alias: d.alias || undefined,
        }))
      : undefined,
    type: str(m.type),
  };
  return goJSON(ordered);
}

/** Go's time.RFC3339 in UTC: `2006-01-02T15:04:05Z`. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The OCI annotations `helm push` sets. */
export function helmAnnotations(m: ChartMetadata, created: string): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (k: string, v: string | undefined) => {
    if (v !== undefined && v.trim() !== '') out[k] = escapeNonASCII(v);
  };
  add(Annotation.Description, m.description);
  add(Annotation.Title, m.name);
  add(Annotation.Version, m.version);
  add(Annotation.Url, m.home);
  add(Annotation.Created, created);
  if (m.sources?.length) add(Annotation.Source, m.sources[0]);
  if (m.maintainers?.length) {
    add(
      Annotation.Authors,
      m.maintainers.map((x) => `${x?.name ?? ''}${x?.email ? ` (${x.email})` : ''}`).join(', '),
    );
  }
  for (const [k, v] of Object.entries(m.annotations ?? {})) {
    if (k === Annotation.Title || k === Annotation.Version) continue;
    out[k] = escapeNonASCII(String(v));
  }
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]!]));
}

/**
 * Builds the artifact `helm push` would push for a chart archive. `created` defaults to the mtime of
 * Chart.yaml inside the archive (deterministic for a deterministic archive); Helm uses the file's mtime.
 */
export async function helmChartArtifact(tgz: Uint8Array, options: { provenance?: Uint8Array; created?: Date } = {}): Promise<HelmArtifact> {
  const { metadata, mtime } = await readChartYaml(tgz);
  const configBytes = Buffer.from(helmConfigJSON(metadata));
  const config = { descriptor: { mediaType: MediaType.HelmConfig, digest: sha256(configBytes), size: configBytes.length }, bytes: configBytes };
  const chart = Buffer.from(tgz);
  const layers: Array<{ descriptor: Descriptor; bytes: Buffer }> = [{ descriptor: { mediaType: MediaType.HelmChartContent, digest: sha256(chart), size: chart.length }, bytes: chart }];
  if (options.provenance) {
    const prov = Buffer.from(options.provenance);
    layers.push({ descriptor: { mediaType: MediaType.HelmProvenance, digest: sha256(prov), size: prov.length }, bytes: prov });
    layers.sort((a, b) => (a.descriptor.digest < b.descriptor.digest ? -1 : 1));
  }
  const created = rfc3339(options.created ?? mtime);
  const json: ImageManifest = {
    schemaVersion: 2,
    config: config.descriptor,
    layers: layers.map((l) => l.descriptor),
    annotations: helmAnnotations(metadata, created),
  };
  // Go struct order of ocispec.Manifest: schemaVersion, config, layers, annotations (no mediaType, as Helm).
  const manifestBytes = Buffer.from(
    goJSON({
      schemaVersion: 2,
      config: { mediaType: config.descriptor.mediaType, digest: config.descriptor.digest, size: config.descriptor.size },
      layers: json.layers.map((d) => ({ mediaType: d.mediaType, digest: d.digest, size: d.size })),
      annotations: json.annotations,
    }),
  );
  return {
    metadata,
    tag: helmTag(metadata.version),
    config,
    layers,
    manifest: { descriptor: { mediaType: MediaType.ImageManifest, digest: sha256(manifestBytes), size: manifestBytes.length }, bytes: manifestBytes, json },
  };
}

/** The repository `helm push CHART oci://REGISTRY/NAMESPACE` writes to: `NAMESPACE/<chart name>`. */
export const helmRepository = (namespace: string, chartName: string): string => (namespace ? `${namespace.replace(/\/+$/, '')}/${chartName}` : chartName);

/**
 * Pushes a chart archive into a store (a repository named after the chart): blobs, then the manifest
 * under `tag` (default: the version tag, as `helm push`).
 */
export async function pushHelmChart(
  tgz: Uint8Array,
  store: Store,
  options: { provenance?: Uint8Array; created?: Date; tag?: string; signal?: AbortSignal } = {},
): Promise<HelmArtifact> {
  const artifact = await helmChartArtifact(tgz, options);
  const signal = options.signal ? { signal: options.signal } : {};
  for (const blob of [artifact.config, ...artifact.layers]) {
    if (!(await store.exists(blob.descriptor, options.signal))) await store.pushBlob(blob.descriptor, bufferSource(blob.bytes), signal);
  }
  await store.pushManifest(artifact.manifest.descriptor, artifact.manifest.bytes, { tag: options.tag ?? artifact.tag, ...signal });
  return artifact;
}
