/**
 * The OCI content model: descriptors, image manifests, image indexes, media types (OCI, Docker and Helm),
 * and what a node of the content graph points at.
 */
import { validationError } from '../../lib/errors.js';

export const MediaType = {
  ImageManifest: 'application/vnd.oci.image.manifest.v1+json',
  ImageIndex: 'application/vnd.oci.image.index.v1+json',
  ImageConfig: 'application/vnd.oci.image.config.v1+json',
  Layer: 'application/vnd.oci.image.layer.v1.tar',
  LayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  LayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  LayerNonDistributable: 'application/vnd.oci.image.layer.nondistributable.v1.tar',
  LayerNonDistributableGzip: 'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
  Empty: 'application/vnd.oci.empty.v1+json',
  DockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  DockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  DockerConfig: 'application/vnd.docker.container.image.v1+json',
  DockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  DockerForeignLayerGzip: 'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
  HelmConfig: 'application/vnd.cncf.helm.config.v1+json',
  HelmChartContent: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
  HelmProvenance: 'application/vnd.cncf.helm.chart.provenance.v1.prov',
  /** Legacy Helm layer type, still accepted on pull. */
  HelmLegacyChart: 'application/tar+gzip',
} as const;

/** The manifest media types a registry is asked for (the Accept header of manifest requests). */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [
  MediaType.ImageManifest,
  MediaType.ImageIndex,
  MediaType.DockerManifest,
  MediaType.DockerManifestList,
];

export const Annotation = {
  RefName: 'org.opencontainers.image.ref.name',
  Title: 'org.opencontainers.image.title',
  Version: 'org.opencontainers.image.version',
  Description: 'org.opencontainers.image.description',
  Url: 'org.opencontainers.image.url',
  Source: 'org.opencontainers.image.source',
  Authors: 'org.opencontainers.image.authors',
  Created: 'org.opencontainers.image.created',
  Revision: 'org.opencontainers.image.revision',
} as const;

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
  'os.version'?: string;
  'os.features'?: string[];
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  urls?: string[];
  annotations?: Record<string, string>;
  data?: string;
  platform?: Platform;
  artifactType?: string;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType?: string;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType?: string;
  artifactType?: string;
  manifests: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

export interface ImageConfig {
  created?: string;
  author?: string;
  architecture: string;
  os: string;
  variant?: string;
  config?: {
    User?: string;
    ExposedPorts?: Record<string, object>;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    Volumes?: Record<string, object>;
    WorkingDir?: string;
    Labels?: Record<string, string>;
    StopSignal?: string;
  };
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: Array<{ created?: string; created_by?: string; author?: string; comment?: string; empty_layer?: boolean }>;
}

export const isManifestType = (mediaType: string): boolean =>
  mediaType === MediaType.ImageManifest || mediaType === MediaType.DockerManifest;
export const isIndexType = (mediaType: string): boolean =>
  mediaType === MediaType.ImageIndex || mediaType === MediaType.DockerManifestList;
/** Whether a descriptor points at a manifest or index (stored under /manifests/ in a registry). */
export const isManifestOrIndex = (mediaType: string): boolean => isManifestType(mediaType) || isIndexType(mediaType);

/** Layers a registry may refuse to store (OCI non-distributable and Docker foreign layers); copy skips them, as oras-go does. */
export const isNonDistributable = (mediaType: string): boolean =>
  mediaType === MediaType.DockerForeignLayerGzip || mediaType.startsWith('application/vnd.oci.image.layer.nondistributable.');

/** The largest manifest read into memory (oras-go's metadata limit). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Parses a manifest or index and checks the fields copy relies on. */
export function parseManifest(bytes: Uint8Array, desc: Pick<Descriptor, 'mediaType' | 'digest'>): ImageManifest | ImageIndex {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw validationError('oci-bad-manifest', `manifest ${desc.digest} is not valid JSON: ${(err as Error).message}`);
  }
  const m = value as Partial<ImageManifest & ImageIndex>;
  if (!m || typeof m !== 'object' || m.schemaVersion !== 2) {
    throw validationError('oci-bad-manifest', `manifest ${desc.digest} has no schemaVersion 2`);
  }
  if (m.mediaType !== undefined && m.mediaType !== desc.mediaType) {
    throw validationError('oci-bad-manifest', `manifest ${desc.digest} says mediaType ${m.mediaType} but its descriptor says ${desc.mediaType}`);
  }
  const checkDesc = (d: unknown, where: string) => {
    const x = d as Descriptor;
    if (!x || typeof x.mediaType !== 'string' || typeof x.digest !== 'string' || typeof x.size !== 'number') {
      throw validationError('oci-bad-manifest', `manifest ${desc.digest}: ${where} is not a descriptor (mediaType, digest, size)`);
    }
  };
  if (isIndexType(desc.mediaType)) {
    if (!Array.isArray(m.manifests)) throw validationError('oci-bad-manifest', `index ${desc.digest} has no manifests array`);
    m.manifests.forEach((d, i) => checkDesc(d, `manifests[${i}]`));
  } else {
    checkDesc(m.config, 'config');
    if (!Array.isArray(m.layers)) throw validationError('oci-bad-manifest', `manifest ${desc.digest} has no layers array`);
    m.layers.forEach((d, i) => checkDesc(d, `layers[${i}]`));
  }
  if (m.subject !== undefined) checkDesc(m.subject, 'subject');
  return m as ImageManifest | ImageIndex;
}

/** What a manifest or index points at (subject, config, layers / manifests); blobs point at nothing. */
export function successors(desc: Descriptor, bytes: Uint8Array | undefined): Descriptor[] {
  if (!isManifestOrIndex(desc.mediaType) || !bytes) return [];
  const m = parseManifest(bytes, desc);
  const out: Descriptor[] = [];
  if (m.subject) out.push(m.subject);
  if ('manifests' in m && Array.isArray(m.manifests)) out.push(...m.manifests);
  else {
    const im = m as ImageManifest;
    out.push(im.config, ...im.layers);
  }
  return out;
}

/**
 * JSON as Go's encoding/json writes it for struct values given in field order: compact, with `<`, `>`,
 * `&`, U+2028 and U+2029 escaped. Used where the bytes must match what Go tools (Helm, oras) produce.
 */
export function goJSON(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
