/** Comparing catalogs by content: order, formatting and where the loader found a blob do not matter. */
import { canonicalJSON } from '../../lib/canonical.js';

/** Drops the source positions (`pos`) the loader records on every blob and entry. */
export const withoutPositions = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutPositions)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'pos').map(([k, v]) => [k, withoutPositions(v)]))
      : value;

/** Every blob as canonical JSON without positions, sorted. */
export const blobSet = (cfg: { packages: unknown[]; channels: unknown[]; bundles: unknown[]; deprecations: unknown[] }): string[] =>
  [...cfg.packages, ...cfg.channels, ...cfg.bundles, ...cfg.deprecations].map((b) => canonicalJSON(withoutPositions(b))).sort();
