import assert from 'node:assert/strict';
import type { V1Deployment } from '@kubernetes/client-node';
import { desiredState, type DesiredContext } from '../../../operator/controller/desired.js';
import { computeStatus, scalingEvents, setCondition, statusChanged, statusEvents } from '../../../operator/controller/status.js';
import type { InferenceService, InferenceServiceStatus } from '../../../operator/api/index.js';
import { sampleV1 } from './fixtures.js';

const T1 = new Date('2026-08-02T12:00:00Z');
const T2 = new Date('2026-08-02T12:05:00Z');
const ctx = (now: Date, over: Partial<DesiredContext> = {}): DesiredContext => ({ now, gatewayAPI: false, ...over });

/** A Deployment as the apiserver reports it. */
function deployment(
  name: string,
  o: { want: number; replicas?: number; ready?: number; updated?: number; generation?: number; observed?: number; progressing?: [string, string, string?]; failure?: string },
): V1Deployment {
  const conditions = [];
  if (o.progressing) conditions.push({ type: 'Progressing', status: o.progressing[0], reason: o.progressing[1], message: o.progressing[2] ?? '' });
  if (o.failure) conditions.push({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: o.failure });
  return {
    metadata: { name, generation: o.generation ?? 2 },
    spec: { replicas: o.want, selector: {}, template: {} },
    status: {
      observedGeneration: o.observed ?? o.generation ?? 2,
      replicas: o.replicas ?? o.want,
      readyReplicas: o.ready ?? 0,
      updatedReplicas: o.updated ?? o.replicas ?? o.want,
      conditions: conditions as never,
    },
  };
}

const condition = (s: InferenceServiceStatus, type: string) => s.conditions!.find((c) => c.type === type)!;
const brief = (s: InferenceServiceStatus) => s.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`);

function status(isvc: InferenceService, observed: { stable?: V1Deployment; canary?: V1Deployment }, now = T1, over: Partial<DesiredContext> = {}) {
  return computeStatus(isvc, desiredState(isvc, ctx(now, over)), observed, now);
}

describe('operator/controller status', () => {
  const isvc = sampleV1({ spec: { scaling: { minReplicas: 2, maxReplicas: 2 } } });

  it('reports Creating before the Deployment exists', () => {
    const s = status(isvc, {});
    assert.deepEqual(brief(s), ['Ready=False/Creating', 'Progressing=True/Creating', 'Degraded=False/AsExpected']);
    assert.equal(s.observedGeneration, 3);
    assert.equal(s.replicas, 0);
    assert.equal(s.url, 'http://llama.team-a.svc.cluster.local');
    assert.equal(s.selector, 'inference.olmpub.dev/inferenceservice=llama');
    for (const c of s.conditions!) {
      assert.equal(c.observedGeneration, 3);
      assert.equal(c.lastTransitionTime, '2026-08-02T12:00:00Z');
      assert.match(c.reason, /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
    }
  });

  it('is not Ready while pods run but no runtime reports the model loaded', () => {
    const s = status(isvc, { stable: deployment('llama', { want: 2, ready: 0, progressing: ['True', 'ReplicaSetUpdated'] }) });
    assert.deepEqual(brief(s), ['Ready=False/ModelLoading', 'Progressing=True/ModelLoading', 'Degraded=False/AsExpected']);
    assert.equal(s.replicas, 2);
    assert.equal(s.readyReplicas, 0);
    assert.match(condition(s, 'Ready').message, /readiness probe on \/health/);
  });

  it('is Ready once a replica passes the readiness probe, and complete when all do', () => {
    const one = status(isvc, { stable: deployment('llama', { want: 2, ready: 1, progressing: ['True', 'ReplicaSetUpdated'] }) });
    assert.deepEqual(brief(one), ['Ready=True/ModelLoaded', 'Progressing=True/ModelLoading', 'Degraded=False/AsExpected']);
    const all = status(isvc, { stable: deployment('llama', { want: 2, ready: 2, progressing: ['True', 'NewReplicaSetAvailable'] }) });
    assert.deepEqual(brief(all), ['Ready=True/ModelLoaded', 'Progressing=False/RolloutComplete', 'Degraded=False/AsExpected']);
    assert.equal(all.readyReplicas, 2);
  });

  it('keeps lastTransitionTime while a status holds, and writes nothing new when nothing changed', () => {
    const observed = { stable: deployment('llama', { want: 2, ready: 0, progressing: ['True', 'ReplicaSetUpdated'] as [string, string] }) };
    const first = status(isvc, observed, T1);
    const again = status({ ...isvc, status: first }, observed, T2);
    assert.deepEqual(again, first);
    assert.equal(statusChanged(first, again), false);
    // The model loads: Ready flips (new time), Progressing stays True (old time) though its reason changed.
    const loaded = status({ ...isvc, status: first }, { stable: deployment('llama', { want: 2, ready: 1, progressing: ['True', 'ReplicaSetUpdated'] }) }, T2);
    assert.equal(condition(loaded, 'Ready').lastTransitionTime, '2026-08-02T12:05:00Z');
    assert.equal(condition(loaded, 'Progressing').lastTransitionTime, '2026-08-02T12:00:00Z');
    assert.equal(statusChanged(first, loaded), true);
  });

  it('sees a rollout in progress while the Deployment has not caught up with its spec', () => {
    const s = status(isvc, { stable: deployment('llama', { want: 2, ready: 2, generation: 5, observed: 4, progressing: ['True', 'NewReplicaSetAvailable'] }) });
    assert.deepEqual(brief(s), ['Ready=True/ModelLoaded', 'Progressing=True/RolloutInProgress', 'Degraded=False/AsExpected']);
    const old = status(isvc, { stable: deployment('llama', { want: 2, replicas: 3, updated: 1, ready: 2, progressing: ['True', 'ReplicaSetUpdated'] }) });
    assert.equal(condition(old, 'Progressing').reason, 'RolloutInProgress');
  });

  it('is Degraded when a rollout exceeds its deadline or pods cannot be created', () => {
    const stuck = status(isvc, { stable: deployment('llama', { want: 2, ready: 0, progressing: ['False', 'ProgressDeadlineExceeded', 'ReplicaSet "llama-5f" has timed out progressing.'] }) });
    assert.deepEqual(brief(stuck), ['Ready=False/ModelLoadFailed', 'Progressing=False/ProgressDeadlineExceeded', 'Degraded=True/ProgressDeadlineExceeded']);
    assert.match(condition(stuck, 'Degraded').message, /Deployment llama: ReplicaSet "llama-5f" has timed out/);
    const quota = status(isvc, { stable: deployment('llama', { want: 2, replicas: 1, ready: 1, failure: 'exceeded quota: gpu' }) });
    assert.deepEqual(condition(quota, 'Degraded'), { ...condition(quota, 'Degraded'), status: 'True', reason: 'ReplicaFailure' });
    assert.match(condition(quota, 'Degraded').message, /exceeded quota: gpu/);
    assert.equal(condition(quota, 'Ready').status, 'True');
  });

  it('is Degraded when pods lose readiness after the rollout completed', () => {
    const s = status(isvc, { stable: deployment('llama', { want: 2, ready: 1, progressing: ['True', 'NewReplicaSetAvailable'] }) });
    assert.deepEqual(brief(s), ['Ready=True/ModelLoaded', 'Progressing=False/RolloutComplete', 'Degraded=True/ReplicasUnavailable']);
  });

  it('reports scale to zero: not Ready, with scaledToZero, ScalingDown until the pods are gone', () => {
    const idle = sampleV1({ metadata: { creationTimestamp: '2026-08-02T10:00:00Z' }, spec: { scaling: { minReplicas: 0, maxReplicas: 1 } } });
    const going = status(idle, { stable: deployment('llama', { want: 0, replicas: 1, ready: 1 }) });
    assert.deepEqual(brief(going), ['Ready=False/ScaledToZero', 'Progressing=True/ScalingDown', 'Degraded=False/AsExpected']);
    assert.deepEqual(going.scaledToZero, { reason: 'IdleTimeout', since: '2026-08-02T10:15:00Z', lastActivityTime: '2026-08-02T10:00:00Z' });
    assert.match(condition(going, 'Ready').message, /inference\.olmpub\.dev\/activate/);
    const gone = status(idle, { stable: deployment('llama', { want: 0, replicas: 0 }) });
    assert.deepEqual(brief(gone), ['Ready=False/ScaledToZero', 'Progressing=False/ScaledToZero', 'Degraded=False/AsExpected']);
  });

  describe('canary', () => {
    const canary = sampleV1({ spec: { scaling: { minReplicas: 4, maxReplicas: 4 }, canary: { trafficPercent: 25, runtime: { image: 'vllm:2' } } } });

    it('replica split: the canary share is its share of ready pods', () => {
      const s = status(canary, {
        stable: deployment('llama', { want: 3, ready: 3, progressing: ['True', 'NewReplicaSetAvailable'] }),
        canary: deployment('llama-canary', { want: 1, ready: 1, progressing: ['True', 'NewReplicaSetAvailable'] }),
      });
      assert.deepEqual(s.canary, { trafficPercent: 25, replicas: 1, readyReplicas: 1 });
      assert.equal(s.readyReplicas, 4);
      assert.deepEqual(brief(s), ['Ready=True/ModelLoaded', 'Progressing=False/RolloutComplete', 'Degraded=False/AsExpected']);
      const loading = status(canary, {
        stable: deployment('llama', { want: 3, ready: 3, progressing: ['True', 'NewReplicaSetAvailable'] }),
        canary: deployment('llama-canary', { want: 1, ready: 0, progressing: ['True', 'ReplicaSetUpdated'] }),
      });
      assert.deepEqual(loading.canary, { trafficPercent: 0, replicas: 1, readyReplicas: 0 });
      assert.match(condition(loading, 'Progressing').message, /canary Deployment llama-canary: 0\/1/);
    });

    it('gateway: the canary share is its route weight', () => {
      const gw = { gatewayAPI: true, gateway: { name: 'gw' }, canaryReadyReplicas: 1 };
      const s = status(canary, { stable: deployment('llama', { want: 4, ready: 4 }), canary: deployment('llama-canary', { want: 1, ready: 1 }) }, T1, gw);
      assert.equal(s.canary!.trafficPercent, 25);
    });

    it('a stuck canary degrades the service but leaves it Ready', () => {
      const s = status(canary, {
        stable: deployment('llama', { want: 3, ready: 3, progressing: ['True', 'NewReplicaSetAvailable'] }),
        canary: deployment('llama-canary', { want: 1, ready: 0, progressing: ['False', 'ProgressDeadlineExceeded', 'timed out'] }),
      });
      assert.equal(condition(s, 'Ready').status, 'True');
      assert.equal(condition(s, 'Degraded').reason, 'ProgressDeadlineExceeded');
      assert.match(condition(s, 'Degraded').message, /^canary Deployment llama-canary: timed out/);
    });
  });

  it('setCondition changes lastTransitionTime only on a status flip', () => {
    const prev = [{ type: 'Ready', status: 'True' as const, lastTransitionTime: 'then', reason: 'A', message: '' }];
    assert.equal(setCondition(prev, { type: 'Ready', status: 'True', reason: 'B', message: 'x' }, T2).lastTransitionTime, 'then');
    assert.equal(setCondition(prev, { type: 'Ready', status: 'False', reason: 'B', message: 'x' }, T2).lastTransitionTime, '2026-08-02T12:05:00Z');
    assert.equal(setCondition(undefined, { type: 'Ready', status: 'Unknown', reason: 'B', message: '' }, T1).lastTransitionTime, '2026-08-02T12:00:00Z');
  });

  describe('events', () => {
    const at = '2026-08-02T12:00:00Z';
    const st = (ready: 'True' | 'False', reason: string, extra: Partial<InferenceServiceStatus> = {}): InferenceServiceStatus => ({
      conditions: [
        { type: 'Ready', status: ready, lastTransitionTime: at, reason, message: reason },
        { type: 'Degraded', status: 'False', lastTransitionTime: at, reason: 'AsExpected', message: '' },
      ],
      ...extra,
    });

    it('records readiness, scale to zero, wake-up and canary changes', () => {
      assert.deepEqual(statusEvents(st('False', 'ModelLoading'), st('True', 'ModelLoaded')), [{ type: 'Normal', reason: 'ModelLoaded', message: 'ModelLoaded' }]);
      assert.deepEqual(statusEvents(st('True', 'ModelLoaded'), st('False', 'ModelLoading')), [{ type: 'Warning', reason: 'ModelLoading', message: 'ModelLoading' }]);
      const zero = st('False', 'ScaledToZero', { scaledToZero: { reason: 'IdleTimeout', since: at } });
      assert.deepEqual(statusEvents(st('True', 'ModelLoaded'), zero).map((e) => e.reason), ['ScaledToZero']);
      assert.deepEqual(statusEvents(zero, st('False', 'ModelLoading')).map((e) => e.reason), ['Activated']);
      const c = (p: number) => st('True', 'ModelLoaded', { canary: { trafficPercent: p, replicas: 1, readyReplicas: 1 } });
      assert.deepEqual(statusEvents(c(0), c(25)), [{ type: 'Normal', reason: 'CanaryTrafficShifted', message: 'canary receives 25% of requests' }]);
      assert.deepEqual(statusEvents(c(25), c(0)).map((e) => e.reason), ['CanaryRolledBack']);
      assert.deepEqual(statusEvents(c(25), st('True', 'ModelLoaded')).map((e) => e.reason), ['CanaryRemoved']);
      assert.deepEqual(statusEvents(c(25), c(25)), []);
    });

    it('records scaling of each Deployment before it is applied', () => {
      const isvc2 = sampleV1({ spec: { scaling: { minReplicas: 3, maxReplicas: 3 } } });
      const d = desiredState(isvc2, ctx(T1));
      assert.deepEqual(scalingEvents({ stable: deployment('llama', { want: 1 }) }, d), [{ type: 'Normal', reason: 'Scaled', message: 'Deployment llama: 1 → 3 replica(s)' }]);
      assert.deepEqual(scalingEvents({ stable: deployment('llama', { want: 3 }) }, d), []);
    });
  });
});
