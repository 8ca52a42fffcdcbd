/**
 * The bundle image: one layer holding /manifests and /metadata, the bundle annotations as image config
 * labels (opm reads the labels, OLM v1 reads metadata/annotations.yaml), built with bundle/image into any
 * Store (an OCI layout by default). Deterministic: same bundle and time, same digest.
 */
import type { Platform } from '../oci/content.js';
import type { Store } from '../oci/store.js';
import { buildImage, type BuiltImage } from '../image/build.js';
import type { BundleFile } from './bundle.js';

/** Bundle images hold no binaries; opm and OLM ignore the platform. One fixed value keeps the digest stable across hosts. */
export const BUNDLE_PLATFORM: Platform = { os: 'linux', architecture: 'amd64' };

export interface BundleImageOptions {
  store: Store;
  /** Tag in the store. */
  tag?: string;
  /** Seconds since the epoch for `created` and file mtimes. @default SOURCE_DATE_EPOCH, else 0 */
  created?: number;
  signal?: AbortSignal;
}

export async function writeBundleImage(bundle: { files: BundleFile[]; annotations: Record<string, string> }, options: BundleImageOptions): Promise<BuiltImage> {
  const files: Record<string, { content: string; mode: number }> = {};
  for (const f of bundle.files) files[`/${f.path}`] = { content: f.content, mode: 0o644 };
  return buildImage({
    store: options.store,
    layers: [{ files, createdBy: 'olmpub bundle build (registry+v1 manifests and metadata)' }],
    config: { labels: { ...bundle.annotations } },
    platform: BUNDLE_PLATFORM,
    ...(options.created !== undefined ? { created: options.created } : {}),
    ...(options.tag ? { tag: options.tag } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
