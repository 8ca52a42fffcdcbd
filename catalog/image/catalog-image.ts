/**
 * The catalog image: one layer holding `/configs/<package>/catalog.json`, the label catalogd and opm look
 * for, and nothing else (catalogd extracts only the labelled directory, so no opm binary or cache is
 * needed: the same shape operator-controller's own e2e catalogs have). Deterministic: same FBC, same digest.
 */
import { buildImage, type BuiltImage } from '../../bundle/image/index.js';
import type { Store } from '../../bundle/oci/index.js';
import { renderCatalogFiles, type FbcFormat } from '../fbc/write.js';
import type { DeclarativeConfig } from '../fbc/types.js';

export const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
export const CONFIGS_DIR = '/configs';

export interface CatalogImageOptions {
  store: Store;
  /** Tag in `store`, e.g. `inference-operator-catalog:latest` for a layout or `latest` for a repository. */
  tag?: string;
  /** FBC encoding inside the image. Default `json`, as opm writes it. */
  format?: FbcFormat;
  /** Seconds since the epoch for `created` and file mtimes. Default SOURCE_DATE_EPOCH, else 0. */
  created?: number;
  /** Extra image labels (e.g. org.opencontainers.image.source). */
  labels?: Record<string, string>;
}

export async function buildCatalogImage(cfg: DeclarativeConfig, options: CatalogImageOptions): Promise<BuiltImage> {
  const files: Record<string, string> = {};
  for (const [rel, content] of renderCatalogFiles(cfg, options.format ?? 'json')) files[`${CONFIGS_DIR}/${rel}`] = content;
  return buildImage({
    store: options.store,
    layers: [{ files, createdBy: 'olmpub catalog image: FBC under /configs' }],
    config: { labels: { ...(options.labels ?? {}), [CONFIGS_LABEL]: CONFIGS_DIR } },
    ...(options.created !== undefined ? { created: options.created } : {}),
    ...(options.tag ? { tag: options.tag } : {}),
  });
}
