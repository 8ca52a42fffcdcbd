/**
 * The operator runs as a ServiceAccount holding exactly the permissions its code declares
 * (`requires(...)` in operator/controller/reconciler.ts and operator/main.ts, turned into a ClusterRole
 * and a Role by bundle/rbac's rulesFromDeclarations), on the test apiserver that enforces
 * OwnerReferencesPermissionEnforcement: the whole lifecycle works, no request is refused, and every
 * API call it made is covered by a declaration (declared ⊇ used, as `olmpub rbac check --used` checks).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { compareDeclaredWithUsed, describeCall, requestToAttributes, rulesFromDeclarations, type ApiCall, type ScopedRule } from '../../../bundle/rbac/index.js';
import type { InferenceService } from '../../../operator/api/index.js';
import { LABEL_ISVC } from '../../../operator/api/meta.js';
import { ISVC, RECONCILER_RBAC } from '../../../operator/controller/reconciler.js';
import { OPERATOR_RBAC } from '../../../operator/main.js';
import { collectDeclarations } from '../../../operator/rbac-declarations.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { resourcePath } from '../../../operator/runtime/kube/resources.js';
import { eventually, testenv } from '../../support/env.js';
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  DEPLOYMENT,
  SA,
  condition,
  createNamespace,
  deleteNamespace,
  ensureCRD,
  httpsGet,
  inferenceService,
  kube,
  removeCRD,
  serviceAccountToken,
  startInProcess,
  suffix,
  webhookCertDir,
  type InProcessOperator,
} from './support.js';

const ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' } as const;
const ROLE_BINDING = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' } as const;

describe('operator/rbac: the operator with exactly its declared permissions (real RBAC, OwnerReferencesPermissionEnforcement)', function () {
  this.timeout(300_000);
  let c: KubeClient;
  let ns: string;
  let createdCRD = false;
  let op: InProcessOperator | undefined;
  let dir: string;
  let certs: { dir: string; caBundle: string };
  const id = suffix();
  const roleName = `op-rbac-${id}`;
  const calls: { method: string; url: string; code: string }[] = [];

  before(async () => {
    c = kube();
    createdCRD = await ensureCRD(c);
    ns = await createNamespace(c, 'op-rbac');
    const rules = rulesFromDeclarations(collectDeclarations(RECONCILER_RBAC, OPERATOR_RBAC));
    await c.create({ ...SA, metadata: { name: 'inference-operator', namespace: ns } });
    const subjects = [{ kind: 'ServiceAccount', name: 'inference-operator', namespace: ns }];
    await c.create({ ...CLUSTER_ROLE, metadata: { name: roleName }, rules: rules.cluster } as KubeObject);
    await c.create({ ...CLUSTER_ROLE_BINDING, metadata: { name: roleName }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects } as KubeObject);
    await c.create({ ...ROLE, metadata: { name: 'leader-election', namespace: ns }, rules: rules.namespaced } as KubeObject);
    await c.create({ ...ROLE_BINDING, metadata: { name: 'leader-election', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leader-election' }, subjects } as KubeObject);

    // A kubeconfig holding only the ServiceAccount's token.
    const admin = new KubeConfig();
    admin.loadFromFile(testenv('KUBECONFIG'));
    const cluster = admin.getCurrentCluster()!;
    const token = await serviceAccountToken(c, ns, 'inference-operator');
    dir = mkdtempSync(join(tmpdir(), 'olmpub-operator-rbac-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster: { server: cluster.server, ...(cluster.caData ? { 'certificate-authority-data': cluster.caData } : { 'certificate-authority': cluster.caFile }) } }],
        users: [{ name: 'operator', user: { token } }],
        contexts: [{ name: 'operator', context: { cluster: 'test', user: 'operator', namespace: ns } }],
        'current-context': 'operator',
      }),
    );
    certs = webhookCertDir();
    op = await startInProcess(
      {
        'watch-namespace': ns,
        'leader-elect': true,
        'leader-election-id': `op-rbac-${id}`,
        'leader-election-namespace': ns,
        'metrics-bind-address': '127.0.0.1:0',
        'webhook-bind-address': '127.0.0.1:0',
        'webhook-cert-dir': certs.dir,
      },
      kubeconfig,
      (client) => {
        // Every request with its query (a watch is a GET with ?watch=1), and its answer.
        const pendingWatches: string[] = [];
        const watch = client.watch.bind(client);
        client.watch = (async (ref, opts, onEvent) => {
          pendingWatches.push(resourcePath(await client.resource(ref), opts.namespace));
          return watch(ref, opts, onEvent);
        }) as typeof client.watch;
        client.addResponseListener((r) => {
          const i = r.method === 'GET' ? pendingWatches.indexOf(r.path) : -1;
          if (i >= 0) pendingWatches.splice(i, 1);
          calls.push({ method: r.method, url: `${r.path}${i >= 0 ? '?watch=1' : ''}`, code: r.code });
        });
      },
    );
  });

  after(async function () {
    this.timeout(120_000);
    await op?.stop();
    await c.delete(CLUSTER_ROLE_BINDING, roleName, undefined, { ignoreNotFound: true });
    await c.delete(CLUSTER_ROLE, roleName, undefined, { ignoreNotFound: true });
    if (ns) await deleteNamespace(c, ns);
    await removeCRD(c, createdCRD);
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
    await c?.close();
  });

  it('reconciles, records events, removes a canary, serves the metrics auth and cleans up with nothing refused', async () => {
    await c.create(inferenceService('guarded', ns, { scaling: { minReplicas: 1, maxReplicas: 2, replicas: 2 }, canary: { trafficPercent: 50, runtime: { image: 'registry.example/vllm:2' } } }));
    await eventually('Ready with the canary', async () => {
      const o = await c.tryGet<InferenceService>(ISVC, 'guarded', ns);
      return condition(o, 'Ready')?.status === 'True' && o?.status?.canary?.readyReplicas === 1;
    }, 120_000, 250);
    // blockOwnerDeletion on the children needs update on inferenceservices/finalizers: the Deployments exist.
    assert.equal((await c.list(DEPLOYMENT, { namespace: ns, labelSelector: `${LABEL_ISVC}=guarded` })).items.length, 2);
    await c.patch(ISVC, 'guarded', ns, { spec: { canary: null } }, 'merge');
    await eventually('the canary Deployment removed', async () => !(await c.tryGet(DEPLOYMENT, 'guarded-canary', ns)), 60_000, 250);
    // The metrics endpoint asks the apiserver (TokenReview, SubjectAccessReview) with the operator's identity.
    const token = await serviceAccountToken(c, ns, 'inference-operator');
    assert.equal((await httpsGet(op!.operator.manager.metricsServer.port!, '/metrics', token)).status, 403);
    await c.delete(ISVC, 'guarded', ns);
    await eventually('deleted through the finalizer', async () => !(await c.tryGet(ISVC, 'guarded', ns)), 60_000, 250);
    await op!.operator.manager.eventRecorder('x').flush();

    const refused = calls.filter((x) => x.code === '403' || x.code === '401');
    assert.deepEqual(refused, [], 'no request of the operator was refused');
    const decls = collectDeclarations(RECONCILER_RBAC, OPERATOR_RBAC);
    const rules = rulesFromDeclarations(decls);
    const scoped: ScopedRule[] = [...rules.cluster.map((rule) => ({ rule })), ...rules.namespaced.map((rule) => ({ rule, namespace: ns }))];
    // Discovery (/api, /apis/...) is granted to every authenticated user (system:discovery).
    const used: ApiCall[] = calls.map((x) => requestToAttributes(x.method, x.url)).filter((a) => !('path' in a && /^\/apis?(\/|$)/.test(a.path)));
    const report = compareDeclaredWithUsed(scoped, used);
    assert.deepEqual(report.undeclared.map(describeCall), [], 'every call is declared');
    const kinds = new Set(used.map((u) => ('resource' in u ? `${u.verb} ${u.resource}${u.subresource ? `/${u.subresource}` : ''}` : u.path)));
    for (const expected of ['watch inferenceservices', 'patch inferenceservices', 'patch inferenceservices/status', 'patch deployments', 'delete deployments', 'create events', 'update leases', 'create tokenreviews', 'create subjectaccessreviews', 'watch namespaces'])
      assert.ok(kinds.has(expected), `the run exercised ${expected} (${[...kinds].sort().join(', ')})`);
    console.log(`      ${used.length} calls, all declared; declared but not called here: ${report.unused.map((u) => `${(u.rule.verbs ?? []).join(',')} ${(u.rule.resources ?? u.rule.nonResourceURLs ?? []).join(',')}`).join('; ')}`);
  });
});
