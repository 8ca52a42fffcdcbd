/**
 * A deterministic, valid File-Based Catalog of any size, for benchmarks: P packages, each with B bundles
 * and three channels (stable, fast, candidate) that all hold every bundle, with different edge shapes:
 *
 *   stable     a replaces chain; every minor version's first patch also has skipRange ">=1.<m-1>.0 <1.<m>.0"
 *   fast       entry i replaces i-2 and skips i-1 (two interleaved chains, the skipped one stitched by skips)
 *   candidate  a replaces chain, every entry has skipRange ">=1.0.0 <version"
 *
 * Bundles carry what `opm render` writes for a registry+v1 bundle today: olm.package, two olm.gvk and an
 * olm.csv.metadata (description, install modes with AllNamespaces, owned CRDs, keywords, links, ...),
 * plus relatedImages pinned by digest. Every 10th package has an olm.deprecations blob (candidate channel
 * and the oldest bundle). Files are laid out as opm writes them: <dir>/<package>/catalog.json, one
 * 4-space-indented object after another, in opm's field order.
 *
 * The same sizes always give the same bytes (digests come from sha256 of the names), and the catalog passes
 * both `opm validate` and `olmpub catalog validate` (the benchmark checks it does before timing anything).
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CatalogSize {
  packages: number;
  bundlesPerPackage: number;
}

export interface CatalogStats extends CatalogSize {
  channels: number;
  bundles: number;
  channelEntries: number;
  bytes: number;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const ICON = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="3"/></svg>\n').toString('base64');

/** Version of the i-th bundle: 1.<i/3>.<i%3>, so every minor has three patches. */
const versionOf = (i: number) => `1.${Math.floor(i / 3)}.${i % 3}`;

function description(pkg: string, version: string): string {
  const para = `${pkg} manages widgets and gadgets on Kubernetes: it reconciles Widget objects into Deployments, ` +
    'Services and PodDisruptionBudgets, rolls out new versions with canaries, and reports health in status conditions. ';
  return `# ${pkg} ${version}\n\n${para.repeat(4)}\n\n## Installing\n\nInstall with a ClusterExtension in any namespace.\n`;
}

function bundleBlob(pkg: string, i: number): Record<string, unknown> {
  const version = versionOf(i);
  const name = `${pkg}.v${version}`;
  const group = `${pkg}.bench.example.com`;
  const bundleImage = `quay.io/olmpub-bench/${pkg}-bundle@sha256:${hex(`${name}/bundle`)}`;
  const operatorImage = `quay.io/olmpub-bench/${pkg}@sha256:${hex(`${name}/operator`)}`;
  return {
    schema: 'olm.bundle',
    name,
    package: pkg,
    image: bundleImage,
    properties: [
      { type: 'olm.gvk', value: { group, kind: 'Gadget', version: 'v1alpha1' } },
      { type: 'olm.gvk', value: { group, kind: 'Widget', version: 'v1' } },
      { type: 'olm.package', value: { packageName: pkg, version } },
      {
        type: 'olm.csv.metadata',
        value: {
          annotations: {
            capabilities: 'Seamless Upgrades',
            categories: 'Developer Tools',
            containerImage: operatorImage,
            createdAt: '2026-01-01T00:00:00Z',
            repository: `https://github.com/olmpub-bench/${pkg}`,
            support: 'olmpub-bench',
          },
          apiServiceDefinitions: {},
          crdDescriptions: {
            owned: [
              { description: 'A gadget', displayName: 'Gadget', kind: 'Gadget', name: `gadgets.${group}`, version: 'v1alpha1' },
              { description: 'A widget', displayName: 'Widget', kind: 'Widget', name: `widgets.${group}`, version: 'v1' },
            ],
          },
          description: description(pkg, version),
          displayName: `${pkg} operator`,
          installModes: [
            { supported: true, type: 'OwnNamespace' },
            { supported: true, type: 'SingleNamespace' },
            { supported: false, type: 'MultiNamespace' },
            { supported: true, type: 'AllNamespaces' },
          ],
          keywords: ['widgets', 'gadgets', 'benchmark'],
          links: [{ name: 'Documentation', url: `https://olmpub-bench.example.com/${pkg}` }],
          maintainers: [{ email: 'bench@example.com', name: 'olmpub bench' }],
          maturity: i % 3 === 0 ? 'stable' : 'alpha',
          minKubeVersion: '1.30.0',
          provider: { name: 'olmpub bench' },
        },
      },
    ],
    relatedImages: [
      { name: '', image: bundleImage },
      { name: 'operator', image: operatorImage },
    ],
  };
}

type Entry = { name: string; replaces?: string; skips?: string[]; skipRange?: string };

function channels(pkg: string, b: number): Record<string, unknown>[] {
  const n = (i: number) => `${pkg}.v${versionOf(i)}`;
  const stable: Entry[] = [];
  const fast: Entry[] = [];
  const candidate: Entry[] = [];
  for (let i = 0; i < b; i++) {
    const minor = Math.floor(i / 3);
    const s: Entry = { name: n(i) };
    if (i > 0) s.replaces = n(i - 1);
    if (i % 3 === 0 && minor > 0) s.skipRange = `>=1.${minor - 1}.0 <1.${minor}.0`;
    stable.push(s);

    const f: Entry = { name: n(i) };
    if (i >= 2) f.replaces = n(i - 2);
    if (i >= 1) f.skips = [n(i - 1)];
    fast.push(f);

    const c: Entry = { name: n(i) };
    if (i > 0) {
      c.replaces = n(i - 1);
      c.skipRange = `>=1.0.0 <${versionOf(i)}`;
    }
    candidate.push(c);
  }
  // opm writes channels sorted by name.
  return [
    { schema: 'olm.channel', name: 'candidate', package: pkg, entries: candidate },
    { schema: 'olm.channel', name: 'fast', package: pkg, entries: fast },
    { schema: 'olm.channel', name: 'stable', package: pkg, entries: stable },
  ];
}

/** Writes the catalog under `dir` (which must not hold another catalog) and says what it wrote. */
export async function generateCatalog(dir: string, size: CatalogSize): Promise<CatalogStats> {
  if (size.packages < 1 || size.bundlesPerPackage < 3) throw new Error('a benchmark catalog needs at least 1 package and 3 bundles per package');
  let bytes = 0;
  const width = String(size.packages - 1).length;
  for (let p = 0; p < size.packages; p++) {
    const pkg = `bench-operator-${String(p).padStart(width, '0')}`;
    const blobs: Record<string, unknown>[] = [
      { schema: 'olm.package', name: pkg, defaultChannel: 'stable', icon: { base64data: ICON, mediatype: 'image/svg+xml' }, description: `The ${pkg} operator (benchmark data).` },
      ...channels(pkg, size.bundlesPerPackage),
    ];
    // opm sorts bundles by name (string order).
    const bundles = Array.from({ length: size.bundlesPerPackage }, (_, i) => bundleBlob(pkg, i));
    bundles.sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : 1));
    blobs.push(...bundles);
    if (p % 10 === 0) {
      blobs.push({
        schema: 'olm.deprecations',
        package: pkg,
        entries: [
          { reference: { schema: 'olm.bundle', name: `${pkg}.v${versionOf(0)}` }, message: `${pkg} ${versionOf(0)} has a known bug; upgrade.\n` },
          { reference: { schema: 'olm.channel', name: 'candidate' }, message: 'The candidate channel is no longer updated; use fast.\n' },
        ],
      });
    }
    const text = blobs.map((b) => JSON.stringify(b, null, 4) + '\n').join('');
    await mkdir(join(dir, pkg), { recursive: true });
    await writeFile(join(dir, pkg, 'catalog.json'), text);
    bytes += Buffer.byteLength(text);
  }
  return {
    ...size,
    channels: size.packages * 3,
    bundles: size.packages * size.bundlesPerPackage,
    channelEntries: size.packages * size.bundlesPerPackage * 3,
    bytes,
  };
}
