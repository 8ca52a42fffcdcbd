/** Replica arithmetic shared by the desired state and the GPU quota, so both count the same pods. */

/**
 * How the canary's share of traffic is enforced:
 * - `gateway`: an HTTPRoute splits requests by backendRef weight, so each track is sized on its own;
 * - `replicas`: one Service selects the pods of both tracks, so the share is the share of pods.
 */
export type TrafficMode = 'gateway' | 'replicas';

export interface ScalingBounds {
  minReplicas: number;
  maxReplicas: number;
  replicas: number;
}

/** Replicas wanted while awake: `replicas` clamped to [minReplicas, maxReplicas]. */
export function clampReplicas(b: ScalingBounds): number {
  return Math.min(Math.max(b.replicas, b.minReplicas), Math.max(b.maxReplicas, b.minReplicas));
}

/**
 * Splits `total` replicas between the stable and the canary track for a canary percent.
 * - gateway: stable runs `total`; the canary runs ceil(total × percent / 100), at least 1 when
 *   percent > 0, 0 when percent is 0 (rolled back).
 * - replicas: the pods of both tracks add up to `total` with the canary's share as close to the
 *   percent as whole pods allow; a canary between 0 and 100 % keeps at least one pod on each
 *   track, so with total 1 both tracks run one pod (an even split).
 */
export function splitReplicas(total: number, percent: number | undefined, mode: TrafficMode): { stable: number; canary: number } {
  if (percent === undefined) return { stable: total, canary: 0 };
  if (total <= 0) return { stable: 0, canary: 0 };
  if (mode === 'gateway') return { stable: total, canary: percent > 0 ? Math.max(1, Math.ceil((total * percent) / 100)) : 0 };
  if (percent <= 0) return { stable: total, canary: 0 };
  if (percent >= 100) return { stable: 0, canary: total };
  if (total === 1) return { stable: 1, canary: 1 };
  const canary = Math.min(total - 1, Math.max(1, Math.round((total * percent) / 100)));
  return { stable: total - canary, canary };
}

/** The most pods an InferenceService can run: at maxReplicas, in whichever traffic mode needs more. */
export function peakReplicas(maxReplicas: number, canaryPercent: number | undefined): { stable: number; canary: number } {
  const a = splitReplicas(maxReplicas, canaryPercent, 'gateway');
  const b = splitReplicas(maxReplicas, canaryPercent, 'replicas');
  return a.stable + a.canary >= b.stable + b.canary ? a : b;
}
