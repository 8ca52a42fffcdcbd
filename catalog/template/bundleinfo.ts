/**
 * What the catalog needs to know about each bundle, supplied by whoever built it (the bundle layer, a
 * file, or a registry+v1 bundle directory): the CSV name, its version, and the properties and related
 * images `opm render` would derive from it.
 */
import type { Property, RelatedImage } from '../fbc/types.js';

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
