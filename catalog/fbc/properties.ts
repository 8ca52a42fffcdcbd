/**
 * Bundle properties as opm parses them (`alpha/property.Parse`): known types must decode into their Go
 * structs, any other type just needs a JSON value. Plus small readers the rest of olmpub uses.
 */
import { canonicalJSON } from '../../lib/canonical.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA, PROPERTY_PACKAGE, type Bundle, type GVK, type PackageProperty, type Property } from './types.js';
import { getField, jsonType } from './decode.js';
import { parseStream } from './stream.js';

type Shape = 'string' | 'bool' | 'int' | 'bytes' | 'stringMap' | 'stringList' | { object: Record<string, Shape> } | { list: Shape };

const GVK_SHAPE: Shape = { object: { group: 'string', kind: 'string', version: 'string' } };
const APP_LINK: Shape = { object: { name: 'string', url: 'string' } };
const CRD_DESC: Shape = { object: { name: 'string', version: 'string', kind: 'string', displayName: 'string', description: 'string' } };
const API_DESC: Shape = { object: { group: 'string', version: 'string', kind: 'string', name: 'string', deploymentName: 'string', containerPort: 'int', displayName: 'string', description: 'string' } };

const SHAPES: Record<string, { goType: string; shape: Shape }> = {
  'olm.package': { goType: 'property.Package', shape: { object: { packageName: 'string', version: 'string', release: 'string' } } },
  'olm.package.required': { goType: 'property.PackageRequired', shape: { object: { packageName: 'string', versionRange: 'string' } } },
  'olm.gvk': { goType: 'property.GVK', shape: GVK_SHAPE },
  'olm.gvk.required': { goType: 'property.GVKRequired', shape: GVK_SHAPE },
  'olm.bundle.object': { goType: 'property.BundleObject', shape: { object: { data: 'bytes' } } },
  'olm.channel': { goType: 'property.Channel', shape: { object: { channelName: 'string', priority: 'int' } } },
  'olm.csv.metadata': {
    goType: 'property.CSVMetadata',
    shape: {
      object: {
        annotations: 'stringMap',
        apiServiceDefinitions: { object: { owned: { list: API_DESC }, required: { list: API_DESC } } },
        crdDescriptions: { object: { owned: { list: CRD_DESC }, required: { list: CRD_DESC } } },
        description: 'string',
        displayName: 'string',
        installModes: { list: { object: { type: 'string', supported: 'bool' } } },
        keywords: 'stringList',
        labels: 'stringMap',
        links: { list: APP_LINK },
        maintainers: { list: { object: { name: 'string', email: 'string' } } },
        maturity: 'string',
        minKubeVersion: 'string',
        nativeAPIs: { list: GVK_SHAPE },
        provider: APP_LINK,
      },
    },
  },
};

function check(v: unknown, shape: Shape, path: string, goType: string): string | undefined {
  if (v === null || v === undefined) return undefined;
  const bad = (want: string) => `json: cannot unmarshal ${jsonType(v)} into Go ${path ? `struct field ${path}` : 'value'} of type ${want}`;
  if (shape === 'string') return typeof v === 'string' ? undefined : bad('string');
  if (shape === 'bool') return typeof v === 'boolean' ? undefined : bad('bool');
  if (shape === 'int') return typeof v === 'number' && Number.isInteger(v) ? undefined : bad('int');
  if (shape === 'bytes') {
    if (typeof v !== 'string') return bad('[]uint8');
    return v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? undefined : 'illegal base64 data at input byte 0';
  }
  if (shape === 'stringList') {
    if (!Array.isArray(v)) return bad('[]string');
    for (const x of v) if (x !== null && typeof x !== 'string') return `json: cannot unmarshal ${jsonType(x)} into Go struct field ${path} of type string`;
    return undefined;
  }
  if (shape === 'stringMap') {
    if (typeof v !== 'object' || Array.isArray(v)) return bad('map[string]string');
    for (const x of Object.values(v)) if (x !== null && typeof x !== 'string') return `json: cannot unmarshal ${jsonType(x)} into Go struct field ${path} of type string`;
    return undefined;
  }
  if ('list' in shape) {
    if (!Array.isArray(v)) return bad('[]' + goType);
    for (const x of v) {
      const e = check(x, shape.list, path, goType);
      if (e) return e;
    }
    return undefined;
  }
  if (typeof v !== 'object' || Array.isArray(v)) return bad(goType);
  for (const [name, sub] of Object.entries(shape.object)) {
    const e = check(getField(v, name), sub, path ? `${path}.${name}` : `${goType.split('.').pop()}.${name}`, goType);
    if (e) return e;
  }
  return undefined;
}

/** opm's property.Parse error for one property, or undefined when it parses. */
export function propertyParseError(p: Property, index: number): string | undefined {
  let err: string | undefined;
  if (p.value === undefined) err = 'unexpected end of JSON input';
  else {
    const known = SHAPES[p.type];
    if (known) err = check(p.value, known.shape, '', known.goType);
  }
  return err ? `parse property[${index}] of type ${JSON.stringify(p.type)}: ${err}` : undefined;
}

const asString = (v: unknown) => (typeof v === 'string' ? v : '');

/** All `olm.package` properties of a bundle, read as opm reads them. */
export function packageProperties(b: Pick<Bundle, 'properties'>): PackageProperty[] {
  return b.properties
    .filter((p) => p.type === PROPERTY_PACKAGE && p.value !== undefined)
    .map((p) => {
      const release = asString(getField(p.value, 'release'));
      return { packageName: asString(getField(p.value, 'packageName')), version: asString(getField(p.value, 'version')), ...(release ? { release } : {}) };
    });
}

export function gvks(b: Pick<Bundle, 'properties'>, type = 'olm.gvk'): GVK[] {
  return b.properties
    .filter((p) => p.type === type)
    .map((p) => ({ group: asString(getField(p.value, 'group')), kind: asString(getField(p.value, 'kind')), version: asString(getField(p.value, 'version')) }));
}

export interface CsvFacts {
  /** Where the facts come from: the olm.csv.metadata property, or a CSV in an olm.bundle.object. */
  source: 'olm.csv.metadata' | 'olm.bundle.object';
  installModes?: { type: string; supported: boolean }[];
  ownedAPIServices: number;
}

/** What OLM v1 checks of a bundle's CSV, from csv.metadata or from an embedded CSV object. */
export function csvFacts(b: Pick<Bundle, 'properties'>): CsvFacts[] {
  const out: CsvFacts[] = [];
  const modes = (v: unknown) =>
    Array.isArray(v) ? v.map((m) => ({ type: asString(getField(m, 'type')), supported: getField(m, 'supported') === true })) : undefined;
  const owned = (v: unknown) => {
    const o = getField(v, 'owned');
    return Array.isArray(o) ? o.length : 0;
  };
  for (const p of b.properties) {
    if (p.type === PROPERTY_CSV_METADATA && p.value && typeof p.value === 'object') {
      const installModes = modes(getField(p.value, 'installModes'));
      out.push({ source: 'olm.csv.metadata', ...(installModes ? { installModes } : {}), ownedAPIServices: owned(getField(p.value, 'apiServiceDefinitions')) });
    }
    if (p.type === PROPERTY_BUNDLE_OBJECT) {
      const data = getField(p.value, 'data');
      if (typeof data !== 'string') continue;
      const parsed = parseStream(Buffer.from(data, 'base64').toString('utf8'));
      const obj = parsed.docs[0]?.value;
      if (getField(obj, 'kind') !== 'ClusterServiceVersion') continue;
      const spec = getField(obj, 'spec');
      const installModes = modes(getField(spec, 'installModes'));
      out.push({ source: 'olm.bundle.object', ...(installModes ? { installModes } : {}), ownedAPIServices: owned(getField(spec, 'apiservicedefinitions')) });
    }
  }
  return out;
}

/** Properties sorted as `opm render` sorts them: by type, then by value; olm.bundle.object and olm.csv.metadata last. */
export function sortProperties(props: Property[]): Property[] {
  const key = (p: Property) => canonicalJSON(p.value);
  const cmp = (a: Property, b: Property) => (a.type !== b.type ? (a.type < b.type ? -1 : 1) : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const last = (p: Property) => p.type === PROPERTY_BUNDLE_OBJECT || p.type === PROPERTY_CSV_METADATA;
  return [...props.filter((p) => !last(p)).sort(cmp), ...props.filter(last).sort(cmp)];
}
