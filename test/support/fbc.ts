/** Comparing catalogs by content (order, formatting and where the loader found a blob do not matter), and the catalog corpus. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { canonicalJSON } from '../../lib/canonical.js';
import { REPO_ROOT } from './env.js';

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

/** What `expect.yaml` of a corpus catalog says (test/fixtures/catalogs/README.md). */
export interface CorpusExpectation {
  description: string;
  opm: 'pass' | 'fail';
  olmv1?: 'pass' | 'fail';
  message?: string;
  opmMessage?: string;
  code?: string;
}

export const CATALOG_FIXTURES = join(REPO_ROOT, 'test/fixtures/catalogs');

/** The valid and invalid catalogs of the corpus, sorted; `dir` is the catalog directory itself. */
export const catalogCorpus = (): { kind: string; name: string; dir: string; expect: CorpusExpectation }[] =>
  ['valid', 'invalid'].flatMap((kind) =>
    readdirSync(join(CATALOG_FIXTURES, kind))
      .sort()
      .map((name) => ({
        kind,
        name,
        dir: join(CATALOG_FIXTURES, kind, name, 'catalog'),
        expect: YAML.parse(readFileSync(join(CATALOG_FIXTURES, kind, name, 'expect.yaml'), 'utf8')) as CorpusExpectation,
      })),
  );
