/** The operator's Helm chart, a view of the install manifests model. */
import { installManifests, type InstallManifests } from '../manifests/index.js';
import type { Declaration } from '../../operator/rbac-declarations.js';
import { CHART_NAME, CRD_RELEASE } from './chart.js';
import { defaultValues, mergeValues, valuesToInstallOptions, type ChartValues, type ReleaseInfo } from './values.js';

export * from './chart.js';
export * from './package.js';
export * from './values.js';
export { objectTemplate } from './template-writer.js';

export interface RenderChartOptions {
  /** The chart's image default (`REPOSITORY@sha256:…`). */
  image: string;
  version: string;
  appVersion?: string;
  /** Values over the defaults, merged as Helm merges them. */
  values?: unknown;
  /** @default inference-operator in inference-operator-system */
  release?: ReleaseInfo;
  permissions?: readonly Declaration[];
}

/**
 * What `helm template --include-crds` renders for these values, computed from the model (not from the
 * templates): the reference the chart's templates are checked against. The CRDs are those of crds/:
 * rendered once, for the default values and CRD_RELEASE.
 */
export function renderChart(options: RenderChartOptions): { values: ChartValues; manifests: InstallManifests } {
  const values = mergeValues(defaultValues(options.image), options.values);
  const release = options.release ?? CRD_RELEASE;
  const identity = { name: CHART_NAME, version: options.version, appVersion: options.appVersion ?? options.version };
  const manifests = installManifests(valuesToInstallOptions(values, release, identity, options.permissions));
  // crds/ is static: the CRDs are the chart's defaults for CRD_RELEASE, whatever the release and values.
  const crds = installManifests(valuesToInstallOptions(defaultValues(options.image), CRD_RELEASE, identity, options.permissions)).crds;
  const swap = <T extends { kind: string; metadata: { name: string } }>(o: T): T => (o.kind === 'CustomResourceDefinition' ? (crds.find((c) => c.metadata.name === o.metadata.name) as unknown as T) : o);
  const entries = manifests.entries.map((e) => ({ role: e.role, object: swap(e.object) }));
  const byRole: InstallManifests['byRole'] = (role) => entries.filter((e) => e.role === role).map((e) => e.object);
  return { values, manifests: { ...manifests, entries, objects: entries.map((e) => e.object), crds, byRole, one: (role) => byRole(role)[0] } };
}
