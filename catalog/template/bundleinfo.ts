/**
 * What the catalog needs to know about each bundle, supplied by whoever built it (the bundle layer, a
 * file, or a registry+v1 bundle directory): the CSV name, its version, and the properties and related
 * images `opm render` would derive from it.
 */
import { usageError, validationError } from '../../lib/errors.js';
import { parseStream } from '../fbc/stream.js';
import { getField } from '../fbc/decode.js';
import { sortProperties } from '../fbc/properties.js';
import type { Property, RelatedImage } from '../fbc/types.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');

export interface BundleInfo {
  /** The CSV's metadata.name, which becomes the FBC bundle name, e.g. `inference-operator.v1.2.0`. */
  name: string;
  /** The CSV's spec.version (strict semver). */
  version: string;
  /** The bundle image; when given it must equal the image the template lists for this version. */
  image?: string;
  /**
   * Properties such as `olm.gvk` (one per owned CRD version) and `olm.csv.metadata`. An `olm.package`
   * property may be given; render adds it when absent.
   */
  properties: Property[];
  /** The CSV's spec.relatedImages plus operand/operator images; render adds the bundle image. */
  relatedImages: RelatedImage[];
}

/** A stand-in when no bundle was built (graph previews, promotion checks): name `<package>.v<version>`. */
export function syntheticBundleInfo(pkg: string, version: string): BundleInfo {
  return { name: `${pkg}.v${version}`, version, properties: [], relatedImages: [] };
}

/**
 * Bundle facts from a registry+v1 bundle's files (paths relative to the bundle root), derived as
 * `opm render` derives them. Pure: `olmpub publish` calls it on bundles it has just built in memory.
 */
export function bundleInfoFromFiles(files: readonly { path: string; content: string | Uint8Array }[], where = 'bundle'): BundleInfo {
  const text = (c: string | Uint8Array) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'));
  const manifestFiles = files.filter((f) => /^manifests\/[^/]+$/.test(f.path)).sort((a, b) => (a.path < b.path ? -1 : 1));
  if (!manifestFiles.length) throw usageError('not-a-bundle', `${where} has no manifests/ directory`, { hint: 'point at a registry+v1 bundle directory (manifests/ and metadata/)' });
  const manifests = `${where}/manifests`;
  const objects: { value: Record<string, unknown>; file: string }[] = [];
  for (const f of manifestFiles) {
    const path = `${where}/${f.path}`;
    const parsed = parseStream(text(f.content));
    if (parsed.error) throw validationError('bad-bundle-manifest', `${path}:${parsed.error.line}: ${parsed.error.message}`, {});
    for (const d of parsed.docs) if (d.value && typeof d.value === 'object' && !Array.isArray(d.value)) objects.push({ value: d.value as Record<string, unknown>, file: path });
  }
  const csvs = objects.filter((o) => o.value.kind === 'ClusterServiceVersion');
  if (csvs.length !== 1) throw validationError('bundle-csv-count', `${manifests} holds ${csvs.length} ClusterServiceVersions`, { hint: 'a registry+v1 bundle has exactly one CSV' });
  const csv = csvs[0]!.value;
  const meta = (getField(csv, 'metadata') ?? {}) as Record<string, unknown>;
  const spec = (getField(csv, 'spec') ?? {}) as Record<string, unknown>;
  const name = str(meta.name);
  const version = str(spec.version);
  if (!name || !version) throw validationError('bundle-csv-incomplete', `${csvs[0]!.file}: the CSV needs metadata.name and spec.version`, {});

  const gvk = new Map<string, Property>();
  const addGVK = (type: string, group: string, ver: string, kind: string) => {
    const value = { group, kind, version: ver };
    gvk.set(`${type}/${JSON.stringify(value)}`, { type, value });
  };
  for (const o of objects.filter((x) => x.value.kind === 'CustomResourceDefinition')) {
    const s = (o.value.spec ?? {}) as Record<string, unknown>;
    const kind = str(((s.names ?? {}) as Record<string, unknown>).kind);
    for (const v of (Array.isArray(s.versions) ? s.versions : []) as Record<string, unknown>[]) addGVK('olm.gvk', str(s.group), str(v.name), kind);
    if (typeof s.version === 'string' && s.version) addGVK('olm.gvk', str(s.group), s.version, kind);
  }
  const apis = (spec.apiservicedefinitions ?? {}) as Record<string, unknown>;
  for (const a of (Array.isArray(apis.owned) ? apis.owned : []) as Record<string, unknown>[]) addGVK('olm.gvk', str(a.group), str(a.version), str(a.kind));
  for (const a of (Array.isArray(apis.required) ? apis.required : []) as Record<string, unknown>[]) addGVK('olm.gvk.required', str(a.group), str(a.version), str(a.kind));
  const crds = (spec.customresourcedefinitions ?? {}) as Record<string, unknown>;
  for (const c of (Array.isArray(crds.required) ? crds.required : []) as Record<string, unknown>[]) {
    const [, group] = str(c.name).split(/\.(.*)/s);
    addGVK('olm.gvk.required', group ?? '', str(c.version), str(c.kind));
  }
  const properties: Property[] = [...gvk.values()];
  const extraFile = files.find((f) => f.path === 'metadata/properties.yaml');
  if (extraFile) {
    const extra = parseStream(text(extraFile.content));
    const list = getField(extra.docs[0]?.value, 'properties');
    if (Array.isArray(list)) for (const p of list) properties.push({ type: str(getField(p, 'type')), value: getField(p, 'value') ?? null });
  }
  const csvMetadata: Record<string, unknown> = {};
  const put = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0)) csvMetadata[k] = v;
  };
  put('annotations', meta.annotations);
  put('apiServiceDefinitions', spec.apiservicedefinitions);
  put('crdDescriptions', spec.customresourcedefinitions);
  put('description', spec.description);
  put('displayName', spec.displayName);
  put('installModes', spec.installModes);
  put('keywords', spec.keywords);
  put('labels', meta.labels);
  put('links', spec.links);
  put('maintainers', spec.maintainers);
  put('maturity', spec.maturity);
  put('minKubeVersion', spec.minKubeVersion);
  put('nativeAPIs', spec.nativeAPIs);
  put('provider', spec.provider);
  properties.push({ type: 'olm.csv.metadata', value: csvMetadata });

  const related: RelatedImage[] = [];
  const seen = new Set<string>();
  for (const r of (Array.isArray(spec.relatedImages) ? spec.relatedImages : []) as Record<string, unknown>[]) {
    related.push({ name: str(r.name), image: str(r.image) });
    seen.add(str(r.image));
  }
  const install = (spec.install ?? {}) as Record<string, unknown>;
  if (install.strategy === 'deployment') {
    const deployments = (((install.spec ?? {}) as Record<string, unknown>).deployments ?? []) as Record<string, unknown>[];
    for (const d of Array.isArray(deployments) ? deployments : []) {
      const pod = ((((d.spec ?? {}) as Record<string, unknown>).template ?? {}) as Record<string, unknown>).spec as Record<string, unknown> | undefined;
      for (const c of [...((pod?.containers as unknown[]) ?? []), ...((pod?.initContainers as unknown[]) ?? [])] as Record<string, unknown>[]) {
        const image = str(c.image);
        if (image && !seen.has(image)) {
          related.push({ name: '', image });
          seen.add(image);
        }
      }
    }
  }
  return { name, version, properties: sortProperties(properties), relatedImages: related };
}


