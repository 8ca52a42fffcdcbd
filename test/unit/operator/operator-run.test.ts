/**
 * Pure parts of the operator process and the reconciler: flag/environment parsing of `olmpub
 * operator run`, the child comparison that makes a steady state write nothing, adoption rules,
 * invalid-spec status, promotion detection, and the RBAC the code declares.
 */
import assert from 'node:assert/strict';
import type { V1Deployment } from '@kubernetes/client-node';
import { OlmpubError } from '../../../lib/errors.js';
import { CLEANUP_FINALIZER, LABEL_ISVC, LABEL_MANAGED_BY, MANAGED_BY, type InferenceService } from '../../../operator/api/index.js';
import { DESIRED_HASH_ANNOTATION, desiredState } from '../../../operator/controller/desired.js';
import {
  RECONCILER_RBAC,
  controlledBy,
  invalidSpecStatus,
  isPromotion,
  mayAdopt,
  needsApply,
  specProblems,
  withDegraded,
} from '../../../operator/controller/reconciler.js';
import { computeStatus } from '../../../operator/controller/status.js';
import { OPERATOR_RBAC, parseGoDuration, parseOperatorConfig } from '../../../operator/main.js';
import { ServedResources } from '../../../operator/controller/discovery.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import { KubeApiError } from '../../../operator/runtime/kube/errors.js';
import { FakeClock } from '../../../operator/runtime/testing.js';
import { collectDeclarations, type PermissionDeclaration } from '../../../operator/rbac-declarations.js';

const isvc = (spec: Partial<InferenceService['spec']> = {}, meta: Record<string, unknown> = {}): InferenceService =>
  ({
    apiVersion: 'inference.olmpub.dev/v1',
    kind: 'InferenceService',
    metadata: { name: 'llama', namespace: 'ml', uid: 'uid-1', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z', ...meta },
    spec: { model: { name: 'llama', storageUri: 'hf://meta/llama' }, runtime: { image: 'vllm:1' }, resources: { gpu: { count: 0 } }, ...spec },
  }) as InferenceService;

const now = new Date('2026-01-01T00:01:00Z');

describe('operator run: flags and environment', () => {
  it('has controller-runtime defaults', () => {
    const c = parseOperatorConfig({}, {});
    assert.equal(c.leaderElect, false);
    assert.equal(c.leaderElectionID, 'inference-operator.olmpub.dev');
    assert.equal(c.leaderElectionNamespace, undefined);
    assert.deepEqual([c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs], [15_000, 10_000, 2_000]);
    assert.deepEqual([c.healthProbeBindAddress, c.metricsBindAddress, c.webhookBindAddress], [':8081', ':8443', ':9443']);
    assert.equal(c.webhookCertDir, undefined);
    assert.equal(c.maxConcurrentReconciles, 1);
    assert.equal(c.logLevel, 'info');
    assert.deepEqual(c.namespaces, []);
    assert.equal(c.syncPeriodMs, 36_000_000);
    assert.equal(c.gracefulShutdownTimeoutMs, 30_000);
    assert.equal(c.clusterDomain, 'cluster.local');
    assert.equal(c.gateway, undefined);
  });

  it('reads the environment when a flag is absent, and a flag wins over the environment', () => {
    const env = {
      LEADER_ELECT: 'true',
      LEADER_ELECTION_ID: 'from-env',
      LEADER_ELECTION_NAMESPACE: 'ops',
      HEALTH_PROBE_BIND_ADDRESS: ':9081',
      METRICS_BIND_ADDRESS: '0',
      WEBHOOK_BIND_ADDRESS: '127.0.0.1:9444',
      WEBHOOK_CERT_DIR: '/certs',
      MAX_CONCURRENT_RECONCILES: '4',
      LOG_LEVEL: 'debug',
      WATCH_NAMESPACE: 'team-b, team-a,team-b',
      SYNC_PERIOD: '1h30m',
      GATEWAY: 'gw-system/public',
      INGRESS_DOMAIN: 'models.example.com',
    };
    const fromEnv = parseOperatorConfig({}, env);
    assert.equal(fromEnv.leaderElect, true);
    assert.equal(fromEnv.leaderElectionID, 'from-env');
    assert.equal(fromEnv.leaderElectionNamespace, 'ops');
    assert.deepEqual([fromEnv.healthProbeBindAddress, fromEnv.metricsBindAddress, fromEnv.webhookBindAddress], [':9081', '0', '127.0.0.1:9444']);
    assert.equal(fromEnv.webhookCertDir, '/certs');
    assert.equal(fromEnv.maxConcurrentReconciles, 4);
    assert.equal(fromEnv.logLevel, 'debug');
    assert.deepEqual(fromEnv.namespaces, ['team-a', 'team-b']);
    assert.equal(fromEnv.syncPeriodMs, 5_400_000);
    assert.deepEqual(fromEnv.gateway, { name: 'public', namespace: 'gw-system' });
    assert.equal(fromEnv.ingressDomain, 'models.example.com');

    const flags = parseOperatorConfig({ 'leader-election-id': 'from-flag', 'max-concurrent-reconciles': '2', 'watch-namespace': 'only', 'metrics-bind-address': ':8443' }, env);
    assert.equal(flags.leaderElectionID, 'from-flag');
    assert.equal(flags.maxConcurrentReconciles, 2);
    assert.deepEqual(flags.namespaces, ['only']);
    assert.equal(flags.metricsBindAddress, ':8443');
    assert.equal(flags.leaderElect, true, 'still from the environment');
  });

  it('WATCH_NAMESPACE empty means all namespaces', () => {
    assert.deepEqual(parseOperatorConfig({}, { WATCH_NAMESPACE: '' }).namespaces, []);
    assert.deepEqual(parseOperatorConfig({ 'watch-namespace': 'a' }, {}).namespaces, ['a']);
  });

  it('only an explicit --kubeconfig is a path; KUBECONFIG is left to the client (a list, merged)', () => {
    assert.equal(parseOperatorConfig({}, { KUBECONFIG: '/a:/b' }).kubeconfig, undefined);
    assert.equal(parseOperatorConfig({ kubeconfig: '/k' }, {}).kubeconfig, '/k');
  });

  it('rejects bad values as usage errors naming the flag or the variable', () => {
    const usage = (fn: () => unknown, re: RegExp) =>
      assert.throws(fn, (err: unknown) => err instanceof OlmpubError && err.exitCode === 2 && re.test(err.message));
    usage(() => parseOperatorConfig({ 'max-concurrent-reconciles': '0' }, {}), /--max-concurrent-reconciles="0" is not a positive integer/);
    usage(() => parseOperatorConfig({}, { MAX_CONCURRENT_RECONCILES: 'many' }), /MAX_CONCURRENT_RECONCILES="many"/);
    usage(() => parseOperatorConfig({ 'metrics-bind-address': '8443' }, {}), /--metrics-bind-address="8443" is not host:port/);
    usage(() => parseOperatorConfig({}, { LEADER_ELECT: 'maybe' }), /LEADER_ELECT="maybe" is not true or false/);
    usage(() => parseOperatorConfig({ 'sync-period': '10 hours' }, {}), /--sync-period/);
    usage(() => parseOperatorConfig({ 'log-level': 'loud' }, {}), /--log-level/);
    usage(() => parseOperatorConfig({ gateway: 'a/b/c' }, {}), /--gateway/);
    usage(() => parseOperatorConfig({ 'leader-elect-renew-deadline': '20s' }, {}), /lease duration > renew deadline > retry period/);
  });

  it('parses Go-style durations', () => {
    assert.equal(parseGoDuration('15s'), 15_000);
    assert.equal(parseGoDuration('1.5s'), 1_500);
    assert.equal(parseGoDuration('500ms'), 500);
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('10'), undefined);
    assert.equal(parseGoDuration(''), undefined);
  });
});

describe('reconciler: pure decisions', () => {
  const desired = desiredState(isvc({ scaling: { minReplicas: 1, maxReplicas: 3, replicas: 2 } }), { now, gatewayAPI: false });
  const asCached = <T extends object>(o: T, extra: Record<string, unknown> = {}) => ({ ...structuredClone(o), ...extra });

  it('applies only what differs from the cache: the desired-hash annotation, and the replica count of Deployments', () => {
    assert.equal(needsApply(desired.stable, undefined), true, 'missing');
    const cached = asCached(desired.stable, { status: { readyReplicas: 2 } }) as V1Deployment;
    cached.spec!.template!.spec!.containers[0]!.terminationMessagePath = '/dev/termination-log'; // server defaults do not matter
    assert.equal(needsApply(desired.stable, cached), false, 'same hash: no write');
    const scaled = asCached(desired.stable) as V1Deployment;
    scaled.spec!.replicas = 1;
    assert.equal(needsApply(desired.stable, scaled), true, 'kubectl scale is undone');
    const edited = asCached(desired.service);
    edited.metadata!.annotations = { [DESIRED_HASH_ANNOTATION]: 'old' };
    assert.equal(needsApply(desired.service, edited), true, 'a new desired state is applied');
  });

  it('writes only children it controls, or orphans that carry its labels', () => {
    const ours = { metadata: { ownerReferences: [{ apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService', name: 'llama', uid: 'uid-1', controller: true }] } };
    const theirs = { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Foo', name: 'x', uid: 'other', controller: true }], labels: { [LABEL_ISVC]: 'llama', [LABEL_MANAGED_BY]: MANAGED_BY } } };
    const orphan = { metadata: { labels: { [LABEL_ISVC]: 'llama', [LABEL_MANAGED_BY]: MANAGED_BY } } };
    const stranger = { metadata: { labels: { app: 'llama' } } };
    assert.equal(controlledBy(ours, 'uid-1'), true);
    assert.equal(controlledBy(ours, 'uid-2'), false, 'an earlier InferenceService of the same name');
    assert.equal(mayAdopt(ours, 'llama', 'uid-1'), true);
    assert.equal(mayAdopt(theirs, 'llama', 'uid-1'), false);
    assert.equal(mayAdopt(orphan, 'llama', 'uid-1'), true);
    assert.equal(mayAdopt(orphan, 'other', 'uid-1'), false);
    assert.equal(mayAdopt(stranger, 'llama', 'uid-1'), false);
  });

  it('an invalid spec is Degraded and not Progressing; Ready and replica counts stay as they were', () => {
    const running = isvc();
    running.status = computeStatus(running, desiredState(running, { now, gatewayAPI: false }), {
      stable: { metadata: { name: 'llama', generation: 1 }, spec: { replicas: 1 } as V1Deployment['spec'], status: { observedGeneration: 1, replicas: 1, readyReplicas: 1, updatedReplicas: 1 } },
    }, now);
    const later = new Date('2026-01-01T00:05:00Z');
    const s = invalidSpecStatus({ ...running, metadata: { ...running.metadata, generation: 4 } }, 'nodeSelector is invalid', later);
    const by = (t: string) => s.conditions!.find((c) => c.type === t)!;
    assert.equal(by('Degraded').status, 'True');
    assert.equal(by('Degraded').reason, 'InvalidSpec');
    assert.equal(by('Degraded').observedGeneration, 4);
    assert.equal(by('Degraded').lastTransitionTime, '2026-01-01T00:05:00Z');
    assert.equal(by('Progressing').reason, 'InvalidSpec');
    assert.equal(by('Ready').status, 'True', 'the previous version still serves');
    assert.equal(s.readyReplicas, 1);
    assert.equal(s.observedGeneration, 4);
    const fresh = invalidSpecStatus(isvc(), 'bad', later);
    assert.equal(fresh.conditions!.find((c) => c.type === 'Ready')!.reason, 'InvalidSpec');
  });

  it('withDegraded replaces only the Degraded condition', () => {
    const status = computeStatus(isvc(), desired, {}, now);
    const out = withDegraded(status, undefined, 'ChildConflict', 'Deployment ml/llama is not ours', now, 3);
    assert.deepEqual(out.conditions!.map((c) => [c.type, c.status, c.reason]), [
      ['Ready', 'False', 'Creating'],
      ['Progressing', 'True', 'Creating'],
      ['Degraded', 'True', 'ChildConflict'],
    ]);
  });

  it('DRA devices on a cluster without DRA are an invalid spec', () => {
    const withDevices = isvc({ resources: undefined, devices: [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 1 }] } as Partial<InferenceService['spec']>);
    assert.equal(specProblems(withDevices, { dra: true }).length, 0);
    assert.match(specProblems(withDevices, { dra: false })[0]!, /resource\.k8s\.io\/v1/);
    assert.deepEqual(specProblems(isvc(), { dra: false }), []);
  });

  it('tells a promotion (the stable track takes the canary version) from dropping the canary', () => {
    const withCanary = isvc({ canary: { trafficPercent: 20, runtime: { image: 'vllm:2' } } });
    const canary = desiredState(withCanary, { now, gatewayAPI: false }).canary!;
    const promoted = desiredState(isvc({ runtime: { image: 'vllm:2' } }), { now, gatewayAPI: false }).stable;
    const dropped = desiredState(isvc(), { now, gatewayAPI: false }).stable;
    assert.equal(isPromotion(promoted, canary), true);
    assert.equal(isPromotion(dropped, canary), false);
    assert.equal(isPromotion(promoted, undefined), false);
  });
});

describe('operator RBAC declarations', () => {
  const decls = collectDeclarations(RECONCILER_RBAC, OPERATOR_RBAC) as PermissionDeclaration[];
  const find = (group: string, resource: string, subresource?: string) => decls.find((d) => d.group === group && d.resource === resource && d.subresource === subresource);

  it('declares what the reconciler and the process use, each with a reason and where it is declared', () => {
    assert.deepEqual([...find('inference.olmpub.dev', 'inferenceservices', 'finalizers')!.verbs], ['update']);
    assert.deepEqual([...find('inference.olmpub.dev', 'inferenceservices', 'status')!.verbs], ['patch']);
    assert.deepEqual([...find('inference.olmpub.dev', 'inferenceservices')!.verbs].sort(), ['list', 'patch', 'watch']);
    for (const [g, r] of [['apps', 'deployments'], ['', 'services'], ['gateway.networking.k8s.io', 'httproutes'], ['resource.k8s.io', 'resourceclaimtemplates']] as const)
      assert.deepEqual([...find(g, r)!.verbs].sort(), ['create', 'delete', 'get', 'list', 'patch', 'watch'], r);
    assert.deepEqual([...find('events.k8s.io', 'events')!.verbs].sort(), ['create', 'patch']);
    assert.equal(find('coordination.k8s.io', 'leases')!.scope, 'namespace');
    assert.deepEqual([...find('authentication.k8s.io', 'tokenreviews')!.verbs], ['create']);
    assert.deepEqual([...find('authorization.k8s.io', 'subjectaccessreviews')!.verbs], ['create']);
    assert.deepEqual([...find('', 'namespaces')!.verbs].sort(), ['get', 'list', 'watch']);
    for (const d of decls) {
      assert.ok(d.reason, `${d.resource} has a reason`);
      assert.match(d.declaredBy ?? '', /operator\/(controller\/reconciler|main)\.(ts|js)/);
    }
  });

  it('never needs secrets or wildcards', () => {
    assert.equal(decls.some((d) => d.resource === 'secrets'), false);
    assert.equal(decls.some((d) => [d.group, d.resource, ...d.verbs].some((v) => v.includes('*'))), false);
  });

  it('the finalizer name is the documented one', () => {
    assert.equal(CLEANUP_FINALIZER, 'inference.olmpub.dev/cleanup');
  });
});

describe('optional APIs: discovery with refresh', () => {
  const gvr = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'httproutes' };
  function fake(answers: (() => unknown)[]) {
    const paths: string[] = [];
    const client = {
      requestJSON: async ({ path }: { path: string }) => {
        paths.push(path);
        const next = answers.shift();
        if (!next) throw new Error('unexpected request');
        return next();
      },
    } as unknown as KubeClient;
    return { client, paths };
  }
  const notFound = () => {
    throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', 'GET', '/apis/gateway.networking.k8s.io/v1');
  };
  const served = () => ({ resources: [{ name: 'httproutes' }, { name: 'httproutes/status' }] });

  it('asks discovery once per refresh interval and notices an API that appears', async () => {
    const clock = new FakeClock(0);
    const { client, paths } = fake([notFound, served]);
    const d = new ServedResources(client, { refreshMs: 60_000, clock });
    assert.equal(await d.served(gvr), false);
    assert.equal(await d.served(gvr), false, 'cached');
    assert.deepEqual(paths, ['/apis/gateway.networking.k8s.io/v1']);
    await clock.advance(60_000);
    assert.equal(await d.served(gvr), true);
    assert.equal(paths.length, 2);
  });

  it('keeps the last answer when discovery fails, and asks again next time', async () => {
    const clock = new FakeClock(0);
    const { client, paths } = fake([served, () => { throw new Error('connection refused'); }, served]);
    const d = new ServedResources(client, { refreshMs: 1_000, clock });
    assert.equal(await d.served(gvr), true);
    await clock.advance(1_000);
    assert.equal(await d.served(gvr), true, 'a transient failure does not turn the API off');
    assert.equal(await d.served(gvr), true);
    assert.equal(paths.length, 3, 'the failed answer was not cached');
  });

  it('a group-version without the resource is not served', async () => {
    const { client } = fake([() => ({ resources: [{ name: 'gateways' }] })]);
    assert.equal(await new ServedResources(client).served(gvr), false);
  });
});
