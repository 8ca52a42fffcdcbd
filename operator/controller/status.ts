/**
 * The status of an InferenceService, as a pure function of the object, its desired state and the
 * Deployments observed. Ready means the runtime reports the model loaded: a pod is ready only when
 * its readiness probe on runtime.healthPath answers 200, which model servers do once weights are
 * loaded. Conditions keep their lastTransitionTime while their status does not flip, and nothing
 * time-dependent goes into messages, so an unchanged world gives an identical status (no write).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { canonicalJSON } from '../../lib/canonical.js';
import { rfc3339, type Condition } from '../api/meta.js';
import { withDefaults, type InferenceService, type InferenceServiceStatus } from '../api/v1.js';
import type { DesiredState, Track } from './desired.js';

export interface ObservedChildren {
  stable?: V1Deployment;
  canary?: V1Deployment;
}

export type ConditionType = 'Ready' | 'Progressing' | 'Degraded';

/** What one track's Deployment says, against the replicas it should run. */
export interface TrackObservation {
  track: Track;
  name: string;
  exists: boolean;
  want: number;
  replicas: number;
  ready: number;
  updated: number;
  /** The Deployment controller has not caught up with the last spec change (or ours is not applied yet). */
  stale: boolean;
  /** ReplicaFailure=True (pods cannot be created: quota, admission). */
  failure?: string;
  /** Progressing=False/ProgressDeadlineExceeded: the rollout stopped making progress. */
  stalled?: string;
  /** Progressing=True/NewReplicaSetAvailable: the last rollout finished (it stays so when pods fail later). */
  complete: boolean;
}

export function observeTrack(track: Track, name: string, d: V1Deployment | undefined, want: number): TrackObservation {
  if (!d) return { track, name, exists: false, want, replicas: 0, ready: 0, updated: 0, stale: true, complete: false };
  const st = d.status ?? {};
  const cond = (type: string) => st.conditions?.find((c) => c.type === type);
  const failure = cond('ReplicaFailure');
  const progressing = cond('Progressing');
  return {
    track,
    name,
    exists: true,
    want,
    replicas: st.replicas ?? 0,
    ready: st.readyReplicas ?? 0,
    updated: st.updatedReplicas ?? 0,
    stale: (st.observedGeneration ?? 0) < (d.metadata?.generation ?? 0) || (d.spec?.replicas ?? 1) !== want,
    complete: progressing?.status === 'True' && progressing.reason === 'NewReplicaSetAvailable',
    ...(failure?.status === 'True' ? { failure: failure.message || failure.reason || 'pods cannot be created' } : {}),
    ...(progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded'
      ? { stalled: progressing.message || 'the rollout exceeded its progress deadline' }
      : {}),
  };
}

/** Sets a condition: lastTransitionTime changes only when the status flips. */
export function setCondition(previous: Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition {
  const old = previous?.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : rfc3339(now);
  return { type: next.type, status: next.status, ...(next.observedGeneration !== undefined ? { observedGeneration: next.observedGeneration } : {}), lastTransitionTime, reason: next.reason, message: next.message };
}

/** The status to write. Pure. */
export function computeStatus(isvc: InferenceService, desired: DesiredState, observed: ObservedChildren, now: Date): InferenceServiceStatus {
  const generation = isvc.metadata?.generation;
  const spec = withDefaults(isvc).spec;
  const modelName = spec.model.name;
  const tracks = [observeTrack('stable', desired.stable.metadata!.name!, observed.stable, desired.replicas.stable)];
  if (desired.canary) tracks.push(observeTrack('canary', desired.canary.metadata!.name!, observed.canary, desired.replicas.canary));
  const canary = tracks[1];
  const replicas = tracks.reduce((n, t) => n + t.replicas, 0);
  const ready = tracks.reduce((n, t) => n + t.ready, 0);
  const want = desired.replicas.total;
  const label = (t: TrackObservation) => (t.track === 'canary' ? `canary Deployment ${t.name}` : `Deployment ${t.name}`);

  type C = { status: Condition['status']; reason: string; message: string };
  let readyC: C, progressingC: C, degradedC: C;
  const failed = tracks.find((t) => t.failure);
  const stalled = tracks.find((t) => t.stalled);

  if (desired.scaledToZero) {
    const why =
      desired.scaledToZero.reason === 'IdleTimeout'
        ? `no traffic signal for spec.scaling.idleTimeout (${spec.scaling.idleTimeout})`
        : 'spec.scaling.replicas is 0';
    readyC = { status: 'False', reason: 'ScaledToZero', message: `scaled to zero: ${why}; set annotation inference.olmpub.dev/activate to wake it` };
    progressingC = replicas > 0
      ? { status: 'True', reason: 'ScalingDown', message: `scaling to zero: ${replicas} pod(s) still running` }
      : { status: 'False', reason: 'ScaledToZero', message: 'no replicas are running' };
    degradedC = { status: 'False', reason: 'AsExpected', message: 'scaled to zero as configured' };
  } else {
    const missing = tracks.find((t) => !t.exists);
    const rolling = tracks.find((t) => t.exists && (t.stale || t.updated < t.want || t.replicas > t.updated));
    const scalingDown = tracks.find((t) => t.exists && t.replicas > t.want);
    // Fewer ready pods than wanted: loading during a rollout or scale-up, lost after it completed.
    const loading = tracks.find((t) => t.exists && t.ready < t.want && !t.complete);
    const unavailable = tracks.find((t) => t.exists && t.ready < t.want && t.complete);

    if (ready > 0) readyC = { status: 'True', reason: 'ModelLoaded', message: `${ready}/${want} replica(s) loaded model ${modelName} and pass the readiness probe` };
    else if (failed || stalled) readyC = { status: 'False', reason: 'ModelLoadFailed', message: `no replica loaded model ${modelName}: ${(failed?.failure ?? stalled?.stalled)!}` };
    else if (missing && tracks.every((t) => !t.exists)) readyC = { status: 'False', reason: 'Creating', message: `creating ${label(missing)}` };
    else readyC = { status: 'False', reason: 'ModelLoading', message: `waiting for a replica to load model ${modelName} (readiness probe on ${spec.runtime.healthPath})` };

    if (missing) progressingC = { status: 'True', reason: 'Creating', message: `creating ${label(missing)}` };
    else if (stalled) progressingC = { status: 'False', reason: 'ProgressDeadlineExceeded', message: `${label(stalled)}: ${stalled.stalled!}` };
    else if (rolling) progressingC = { status: 'True', reason: 'RolloutInProgress', message: `${label(rolling)}: ${rolling.updated}/${rolling.want} replica(s) updated` };
    else if (scalingDown) progressingC = { status: 'True', reason: 'ScalingDown', message: `${label(scalingDown)}: scaling down from ${scalingDown.replicas} to ${scalingDown.want}` };
    else if (loading) progressingC = { status: 'True', reason: 'ModelLoading', message: `${label(loading)}: ${loading.ready}/${loading.want} replica(s) loaded the model` };
    else progressingC = { status: 'False', reason: 'RolloutComplete', message: `${want} replica(s) serve model ${modelName}` };

    if (failed) degradedC = { status: 'True', reason: 'ReplicaFailure', message: `${label(failed)}: ${failed.failure!}` };
    else if (stalled) degradedC = { status: 'True', reason: 'ProgressDeadlineExceeded', message: `${label(stalled)}: ${stalled.stalled!}` };
    else if (progressingC.status === 'False' && unavailable)
      degradedC = {
        status: 'True',
        reason: 'ReplicasUnavailable',
        message: `${label(unavailable)}: ${unavailable.ready}/${unavailable.want} replica(s) pass the readiness probe after the rollout completed`,
      };
    else degradedC = { status: 'False', reason: 'AsExpected', message: 'no problems found' };
  }

  const previous = isvc.status?.conditions;
  const conditions = (
    [
      ['Ready', readyC],
      ['Progressing', progressingC],
      ['Degraded', degradedC],
    ] as const
  ).map(([type, c]) => setCondition(previous, { type, ...c, ...(generation !== undefined ? { observedGeneration: generation } : {}) }, now));

  let canaryStatus: InferenceServiceStatus['canary'];
  if (canary) {
    const trafficPercent =
      desired.trafficMode === 'gateway' ? (desired.canaryTrafficPercent ?? 0) : ready > 0 ? Math.round((100 * canary.ready) / ready) : 0;
    canaryStatus = { trafficPercent, replicas: canary.replicas, readyReplicas: canary.ready };
  }
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions,
    replicas,
    readyReplicas: ready,
    selector: desired.selector,
    url: desired.url,
    ...(canaryStatus ? { canary: canaryStatus } : {}),
    ...(desired.scaledToZero ? { scaledToZero: { ...desired.scaledToZero } } : {}),
  };
}

/** Whether writing `next` would change anything (compared canonically). */
export function statusChanged(previous: InferenceServiceStatus | undefined, next: InferenceServiceStatus): boolean {
  return canonicalJSON(previous ?? {}) !== canonicalJSON(next);
}

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * Events worth recording when the status moves from `previous` to `next`: the model became ready
 * or stopped being ready, a rollout finished, the service scaled to or woke from zero, the
 * canary's traffic changed or the canary went away, a degradation started or ended.
 */
export function statusEvents(previous: InferenceServiceStatus | undefined, next: InferenceServiceStatus): StatusEvent[] {
  const events: StatusEvent[] = [];
  const cond = (s: InferenceServiceStatus | undefined, type: ConditionType) => s?.conditions?.find((c) => c.type === type);
  const flipped = (type: ConditionType) => {
    const a = cond(previous, type);
    const b = cond(next, type);
    return b && (!a || a.status !== b.status) ? b : undefined;
  };
  if (next.scaledToZero && !previous?.scaledToZero) events.push({ type: 'Normal', reason: 'ScaledToZero', message: cond(next, 'Ready')?.message ?? 'scaled to zero' });
  if (!next.scaledToZero && previous?.scaledToZero) events.push({ type: 'Normal', reason: 'Activated', message: 'waking up from zero replicas' });
  const readyFlip = flipped('Ready');
  if (readyFlip?.status === 'True') events.push({ type: 'Normal', reason: 'ModelLoaded', message: readyFlip.message });
  else if (readyFlip && cond(previous, 'Ready')?.status === 'True' && !next.scaledToZero)
    events.push({ type: 'Warning', reason: readyFlip.reason, message: readyFlip.message });
  const degraded = flipped('Degraded');
  if (degraded?.status === 'True') events.push({ type: 'Warning', reason: degraded.reason, message: degraded.message });
  else if (degraded?.status === 'False' && previous) events.push({ type: 'Normal', reason: 'Recovered', message: 'no longer degraded' });
  const progressing = flipped('Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'RolloutComplete' && previous)
    events.push({ type: 'Normal', reason: 'RolloutComplete', message: progressing.message });
  if (previous?.canary && !next.canary) events.push({ type: 'Normal', reason: 'CanaryRemoved', message: 'spec.canary was removed (promoted or abandoned); only the stable track runs' });
  else if (next.canary && previous?.canary?.trafficPercent !== next.canary.trafficPercent)
    events.push({
      type: 'Normal',
      reason: next.canary.trafficPercent === 0 && previous?.canary ? 'CanaryRolledBack' : 'CanaryTrafficShifted',
      message: `canary receives ${next.canary.trafficPercent}% of requests`,
    });
  return events;
}

/** A `Scaled` event per Deployment whose replica count the desired state changes (before applying it). */
export function scalingEvents(observed: ObservedChildren, desired: DesiredState): StatusEvent[] {
  const events: StatusEvent[] = [];
  const check = (d: V1Deployment | undefined, want: number) => {
    const have = d?.spec?.replicas;
    if (d && have !== undefined && have !== want)
      events.push({
        type: 'Normal',
        reason: 'Scaled',
        message: `Deployment ${d.metadata?.name ?? '?'}: ${have} → ${want} replica(s)${want === 0 && desired.scaledToZero ? ` (scaled to zero: ${desired.scaledToZero.reason})` : ''}`,
      });
  };
  check(observed.stable, desired.replicas.stable);
  if (desired.canary) check(observed.canary, desired.replicas.canary);
  return events;
}
