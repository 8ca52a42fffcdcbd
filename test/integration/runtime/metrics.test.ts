import assert from 'node:assert/strict';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { MetricsServer } from '../../../operator/runtime/metrics/server.js';
import { client, createNamespace, deleteNamespace } from './support.js';

const SA = { apiVersion: 'v1', kind: 'ServiceAccount' } as const;
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } as const;
const CLUSTER_ROLE_BINDING = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' } as const;

function get(port: number, path: string, ca: string, token?: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method, ca, servername: 'localhost', headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function token(c: KubeClient, ns: string, sa: string): Promise<string> {
  const out = await c.requestJSON<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return out.status.token;
}

describe('runtime/metrics: /metrics over HTTPS behind TokenReview + SubjectAccessReview (real apiserver)', function () {
  this.timeout(120_000);
  let c: KubeClient;
  let ns: string;
  let server: MetricsServer;
  let readerToken: string;
  let strangerToken: string;
  const suffix = randomBytes(3).toString('hex');
  const role = `rt-metrics-reader-${suffix}`;

  before(async () => {
    c = client();
    ns = await createNamespace(c, 'rt-metrics');
    await c.create({ ...SA, metadata: { name: 'prometheus', namespace: ns } });
    await c.create({ ...SA, metadata: { name: 'stranger', namespace: ns } });
    await c.create({ ...CLUSTER_ROLE, metadata: { name: role }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } as KubeObject);
    await c.create({
      ...CLUSTER_ROLE_BINDING,
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }],
    } as KubeObject);
    readerToken = await token(c, ns, 'prometheus');
    strangerToken = await token(c, ns, 'stranger');

    const metrics = new RuntimeMetrics();
    metrics.initController('inferenceservice', 1);
    server = new MetricsServer(metrics, { bindAddress: '127.0.0.1:0', client: c });
    await server.start();
  });
  after(async () => {
    await server?.stop();
    await c.delete(CLUSTER_ROLE_BINDING, role, undefined, { ignoreNotFound: true });
    await c.delete(CLUSTER_ROLE, role, undefined, { ignoreNotFound: true });
    await deleteNamespace(c, ns);
    await c.close();
  });

  it('refuses a request without a token with 401', async () => {
    const r = await get(server.port!, '/metrics', server.certificate!);
    assert.equal(r.status, 401);
    assert.equal(r.body, 'Unauthorized\n');
  });

  it('refuses a token the apiserver does not know with 401', async () => {
    const r = await get(server.port!, '/metrics', server.certificate!, 'not-a-real-token');
    assert.equal(r.status, 401);
  });

  it('refuses an authenticated but unauthorised ServiceAccount with 403', async () => {
    const r = await get(server.port!, '/metrics', server.certificate!, strangerToken);
    assert.equal(r.status, 403);
    assert.equal(r.body, `Authorization denied for user system:serviceaccount:${ns}:stranger\n`);
  });

  it('serves the metrics to a ServiceAccount bound to get /metrics', async () => {
    const r = await get(server.port!, '/metrics', server.certificate!, readerToken);
    assert.equal(r.status, 200);
    assert.match(r.body, /controller_runtime_reconcile_total\{controller="inferenceservice",result="success"\} 0/);
    assert.match(r.body, /process_cpu_user_seconds_total/);
  });

  it('authorises the verb: the same token may not POST', async () => {
    const r = await get(server.port!, '/metrics', server.certificate!, readerToken, 'POST');
    assert.equal(r.status, 403);
  });

  it('caches reviews: repeated scrapes do not repeat them', async () => {
    const before = { ...server.auth!.stats };
    for (let i = 0; i < 3; i++) assert.equal((await get(server.port!, '/metrics', server.certificate!, readerToken)).status, 200);
    assert.deepEqual(server.auth!.stats, before);
  });
});
