/**
 * Least privilege of a ClusterServiceVersion's `permissions` and `clusterPermissions`, with findings that
 * name the CSV file, the permission set and the rule index. OLM v1 installs AllNamespaces bundles, so
 * `permissions` become ClusterRoles bound cluster-wide (render.ts): their rules are linted as such. Pure.
 */
import { lintRules, type KubeObject, type LintFinding } from '../rbac/index.js';
import type { BundleManifest } from './render.js';

export type PermissionField = 'permissions' | 'clusterPermissions';

export interface CSVRuleFinding extends LintFinding {
  field: PermissionField;
  /** Index of the permission set in the field. */
  set: number;
  /** Index of the rule in the set. */
  index: number;
  serviceAccountName: string;
}

/**
 * Lints every rule of the CSV's permission sets. `placeOf` gives `file:line` of a field of the CSV (for
 * example from bundle/crddiff `loadManifests`); without it the place is the CSV's file.
 */
export function lintCSVPermissions(csv: BundleManifest, placeOf?: (path: (string | number)[]) => string): CSVRuleFinding[] {
  const spec = (csv.object.spec ?? {}) as { installModes?: { type?: string; supported?: boolean }[]; install?: { spec?: Record<string, unknown> } };
  const allNamespaces = (spec.installModes ?? []).some((m) => m.type === 'AllNamespaces' && m.supported);
  const name = String(csv.object.metadata?.name ?? '');
  const out: CSVRuleFinding[] = [];
  for (const field of ['permissions', 'clusterPermissions'] as const) {
    const sets = spec.install?.spec?.[field];
    (Array.isArray(sets) ? sets : []).forEach((raw, set) => {
      const p = (raw ?? {}) as { serviceAccountName?: string; rules?: unknown[] };
      const rules = Array.isArray(p.rules) ? p.rules : [];
      const role: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: field === 'clusterPermissions' || allNamespaces ? 'ClusterRole' : 'Role',
        metadata: { name: `${field}[${set}]` },
        rules,
      };
      for (const f of lintRules([{ object: role }])) {
        const index = Number(/rules\[(\d+)\]$/.exec(f.place)?.[1] ?? -1);
        const fieldPath = ['spec', 'install', 'spec', field, set, 'rules', index];
        const where = placeOf ? placeOf(fieldPath) : csv.path;
        const sa = p.serviceAccountName || 'default';
        out.push({
          ...f,
          field,
          set,
          index,
          serviceAccountName: sa,
          place: `${where} ClusterServiceVersion ${name} spec.install.spec.${field}[${set}].rules[${index}] (ServiceAccount ${sa})`,
          message: f.message.replace(`ClusterRole ${field}[${set}]`, `${field}[${set}] (ServiceAccount ${sa})`),
        });
      }
    });
  }
  return out;
}
