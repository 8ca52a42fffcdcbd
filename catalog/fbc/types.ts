/**
 * The File-Based Catalog wire model (operator-registry `alpha/declcfg`): what the files say, before any
 * validation. Field names and order follow opm's Go structs, so what olmpub writes is what opm writes.
 * Every blob loaded from disk remembers where it came from (`pos`), for error messages.
 */

export const SCHEMA_PACKAGE = 'olm.package';
export const SCHEMA_CHANNEL = 'olm.channel';
export const SCHEMA_BUNDLE = 'olm.bundle';
export const SCHEMA_DEPRECATIONS = 'olm.deprecations';

export const PROPERTY_PACKAGE = 'olm.package';
export const PROPERTY_GVK = 'olm.gvk';
export const PROPERTY_GVK_REQUIRED = 'olm.gvk.required';
export const PROPERTY_PACKAGE_REQUIRED = 'olm.package.required';
export const PROPERTY_CONSTRAINT = 'olm.constraint';
export const PROPERTY_BUNDLE_OBJECT = 'olm.bundle.object';
export const PROPERTY_CSV_METADATA = 'olm.csv.metadata';
export const PROPERTY_CHANNEL = 'olm.channel';

/** Where a blob (or a part of one) was read: a file relative to the catalog root, and a 1-based line. */
export interface Position {
  file: string;
  line: number;
}

export const formatPosition = (p: Position | undefined): string | undefined => (p ? `${p.file}:${p.line}` : undefined);

/** `{type, value}`; `value` is any JSON value, `undefined` when the blob had none. */
export interface Property {
  type: string;
  value: unknown;
  pos?: Position;
}

export interface Icon {
  /** Base64 of the image bytes, as in the file. */
  base64data: string;
  mediatype: string;
}

export interface Package {
  schema: string;
  name: string;
  defaultChannel: string;
  icon?: Icon;
  description?: string;
  properties?: Property[];
  pos?: Position;
}

export interface ChannelEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  pos?: Position;
}

export interface Channel {
  schema: string;
  name: string;
  package: string;
  entries: ChannelEntry[];
  properties?: Property[];
  pos?: Position;
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface Bundle {
  schema: string;
  name: string;
  package: string;
  image: string;
  properties: Property[];
  relatedImages?: RelatedImage[];
  pos?: Position;
}

export interface PackageScopedReference {
  schema: string;
  name?: string;
}

export interface DeprecationEntry {
  reference: PackageScopedReference;
  message: string;
  pos?: Position;
}

export interface Deprecation {
  schema: string;
  package: string;
  entries: DeprecationEntry[];
  pos?: Position;
}

/** A blob of a schema olmpub does not model: kept as is ("others"). */
export interface Meta {
  schema: string;
  package: string;
  name: string;
  blob: Record<string, unknown>;
  pos?: Position;
}

export interface DeclarativeConfig {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  deprecations: Deprecation[];
  others: Meta[];
}

export const emptyConfig = (): DeclarativeConfig => ({ packages: [], channels: [], bundles: [], deprecations: [], others: [] });

/** A problem found while reading files, before the model exists (syntax, missing schema, wrong types). */
export interface LoadProblem {
  code: string;
  message: string;
  pos: Position;
  hint?: string;
}

export interface LoadedCatalog {
  /** The directory that was read (as given). */
  root: string;
  /** Files read, relative to root, in walk order. */
  files: string[];
  config: DeclarativeConfig;
  /** Empty when every file parsed; opm fails on the first of these. */
  problems: LoadProblem[];
}

/** The `olm.package` property value. */
export interface PackageProperty {
  packageName: string;
  version: string;
  release?: string;
}

export interface GVK {
  group: string;
  kind: string;
  version: string;
}
