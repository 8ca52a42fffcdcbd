/**
 * The per-namespace GPU quota, checked by the validating admission webhook.
 *
 * Where it lives: the annotation `inference.olmpub.dev/gpu-quota` on the Namespace, a non-negative
 * integer. Namespaces are cluster-scoped, so a tenant with edit rights in the namespace cannot
 * raise its own quota; a platform admin sets it (`kubectl annotate namespace team-a
 * inference.olmpub.dev/gpu-quota=8`). No annotation means no quota.
 *
 * What counts: every InferenceService in the namespace claims its GPUs per replica (resources.gpu.count,
 * or the sum of its DRA device request counts) times the most pods it may run (maxReplicas, plus the
 * canary's pods at maxReplicas). Objects already being deleted still count until they are gone.
 */
import { GPU_QUOTA_ANNOTATION } from './meta.js';
import { peakReplicas } from './scaling.js';
import { withDefaults, type DefaultedSpec, type InferenceService } from './v1.js';

export interface GpuDemand {
  /** GPUs (or DRA devices) one pod claims. */
  perReplica: number;
  /** Most stable pods. */
  stableReplicas: number;
  /** Most canary pods. */
  canaryReplicas: number;
  /** perReplica × (stableReplicas + canaryReplicas). */
  total: number;
}

/** GPUs (or DRA devices) one pod claims: resources.gpu.count plus the counts of the DRA device requests. */
export function gpusPerReplica(spec: DefaultedSpec): number {
  return (spec.resources?.gpu?.count ?? 0) + (spec.devices ?? []).reduce((sum, d) => sum + d.count, 0);
}

/** The most GPUs an InferenceService can hold at once. */
export function gpuDemand(isvc: InferenceService): GpuDemand {
  const spec = withDefaults(isvc).spec;
  const perReplica = gpusPerReplica(spec);
  const peak = peakReplicas(spec.scaling.maxReplicas, spec.canary?.trafficPercent);
  return { perReplica, stableReplicas: peak.stable, canaryReplicas: peak.canary, total: perReplica * (peak.stable + peak.canary) };
}

export type QuotaValue = { ok: true; quota: number | undefined } | { ok: false; message: string };

/** Reads the annotation value: undefined → no quota; anything but a non-negative integer is an error. */
export function parseGpuQuota(value: string | undefined): QuotaValue {
  if (value === undefined) return { ok: true, quota: undefined };
  const text = value.trim();
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text)))
    return { ok: false, message: `annotation ${GPU_QUOTA_ANNOTATION}=${JSON.stringify(value)} is not a non-negative integer` };
  return { ok: true, quota: Number(text) };
}

export interface QuotaInput {
  namespace: string;
  /** The Namespace's annotations (the quota is one of them). */
  namespaceAnnotations: Record<string, string> | undefined;
  /** The InferenceServices in the namespace now (the object itself may be among them on update). */
  existing: InferenceService[];
  /** The object being created or updated. */
  object: InferenceService;
  /** On update, the object before the change. */
  oldObject?: InferenceService;
}

export type QuotaDecision =
  | { allowed: true; warnings: string[]; demand: number; used: number; quota: number | undefined }
  | { allowed: false; message: string };

/**
 * Decides whether the object fits the namespace's GPU quota. An update that does not raise the
 * object's own demand is always allowed (with a warning when the namespace is over quota), so
 * lowering a quota never blocks unrelated edits or scale-downs.
 */
export function checkGpuQuota(input: QuotaInput): QuotaDecision {
  const { namespace, object } = input;
  const name = object.metadata?.name ?? '';
  const parsed = parseGpuQuota(input.namespaceAnnotations?.[GPU_QUOTA_ANNOTATION]);
  if (!parsed.ok)
    return {
      allowed: false,
      message: `namespace "${namespace}" has an invalid GPU quota: ${parsed.message}; ask a cluster admin to fix it (for example: kubectl annotate namespace ${namespace} ${GPU_QUOTA_ANNOTATION}=8 --overwrite)`,
    };
  const demand = gpuDemand(object);
  const others = input.existing.filter((o) => o.metadata?.name !== name && (o.metadata?.namespace === undefined || o.metadata.namespace === namespace));
  const used = others.reduce((sum, o) => sum + gpuDemand(o).total, 0);
  const quota = parsed.quota;
  if (quota === undefined || used + demand.total <= quota) return { allowed: true, warnings: [], demand: demand.total, used, quota };
  if (input.oldObject && demand.total <= gpuDemand(input.oldObject).total)
    return {
      allowed: true,
      warnings: [`namespace "${namespace}" is over its GPU quota (${used + demand.total} of ${quota}); this change does not add GPUs, so it is allowed`],
      demand: demand.total,
      used,
      quota,
    };
  const shape =
    `${demand.perReplica} per replica × ${demand.stableReplicas} replica${demand.stableReplicas === 1 ? '' : 's'} at spec.scaling.maxReplicas` +
    (demand.canaryReplicas ? ` + ${demand.canaryReplicas} canary replica${demand.canaryReplicas === 1 ? '' : 's'}` : '');
  const holders = others
    .map((o) => [o.metadata?.name ?? '?', gpuDemand(o).total] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([n, g]) => `${n}: ${g}`);
  return {
    allowed: false,
    message:
      `InferenceService "${namespace}/${name}" needs ${demand.total} GPUs (${shape}), but namespace "${namespace}" has a GPU quota of ${quota} ` +
      `(annotation ${GPU_QUOTA_ANNOTATION}) and ${used} are already claimed${holders.length ? ` (${holders.join(', ')})` : ''}; ` +
      `${Math.max(0, quota - used)} are free. Lower spec.scaling.maxReplicas or the GPUs per replica, or ask a cluster admin to raise the quota.`,
  };
}
