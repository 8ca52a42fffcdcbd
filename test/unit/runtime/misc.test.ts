import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { admissionHandler, denied, jsonPatch, patched } from '../../../operator/runtime/webhook/admission.js';
import { conversionHandler } from '../../../operator/runtime/webhook/conversion.js';
import { KubeApiError, isConflict, isGone, isNotFound, isAlreadyExists } from '../../../operator/runtime/kube/errors.js';
import { resourceOfPath, resourcePath, builtinResource, RestMapper } from '../../../operator/runtime/kube/resources.js';
import { parseWatchNamespaces } from '../../../operator/runtime/kube/config.js';
import { WriteCounter, type KubeClient } from '../../../operator/runtime/kube/client.js';
import { DelegatingAuth, bearerToken } from '../../../operator/runtime/metrics/auth.js';
import { Logger, parseLogLevel } from '../../../operator/runtime/log.js';
import { Backoff } from '../../../operator/runtime/backoff.js';
import { parseBindAddress } from '../../../operator/runtime/net.js';
import { generateSelfSigned } from '../../../operator/runtime/tls/selfsigned.js';
import { FakeClock } from '../../../operator/runtime/testing.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';

describe('runtime/webhook: admission and conversion', () => {
  const review = (object: unknown) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, operation: 'CREATE', userInfo: {}, object },
  });

  it('answers with the request uid and a denial status', async () => {
    const h = admissionHandler(() => denied('over the GPU quota of namespace ns (4 > 2)'));
    const out = (await h(review({ metadata: { name: 'x' } }), undefined as never)) as { response: Record<string, unknown> };
    assert.deepEqual(out, {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: false, status: { code: 403, message: 'over the GPU quota of namespace ns (4 > 2)', reason: 'Forbidden' } },
    });
  });

  it('turns a mutated object into a base64 JSONPatch', async () => {
    const h = admissionHandler((req) => patched({ ...(req.object as object), metadata: { name: 'x', labels: { a: 'b' } } }));
    const out = (await h(review({ metadata: { name: 'x' }, data: { k: 'v' } }), undefined as never)) as { response: { patch: string; patchType: string; allowed: boolean } };
    assert.equal(out.response.allowed, true);
    assert.equal(out.response.patchType, 'JSONPatch');
    assert.deepEqual(JSON.parse(Buffer.from(out.response.patch, 'base64').toString()), [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }]);
  });

  it('a throwing admission function answers allowed=false with code 500', async () => {
    const h = admissionHandler(() => {
      throw new Error('quota lookup failed');
    });
    const out = (await h(review({}), undefined as never)) as { response: { allowed: boolean; status: { code: number; message: string } } };
    assert.deepEqual(out.response.status, { code: 500, message: 'quota lookup failed', reason: 'InternalError' });
  });

  it('jsonPatch escapes keys and removes, adds and replaces', () => {
    assert.deepEqual(jsonPatch({ a: 1, 'x/y': 1, b: [1] }, { a: 2, b: [1, 2], 'c~': 3 }), [
      { op: 'remove', path: '/x~1y' },
      { op: 'replace', path: '/a', value: 2 },
      { op: 'replace', path: '/b', value: [1, 2] },
      { op: 'add', path: '/c~0', value: 3 },
    ]);
  });

  it('converts every object in order and reports failures as a Failure result', () => {
    const h = conversionHandler((obj, v) => ({ ...obj, apiVersion: v }));
    const req = (objects: KubeObject[]) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c-1', desiredAPIVersion: 'g/v1', objects } });
    const ok = h(req([{ apiVersion: 'g/v1alpha1', kind: 'K', metadata: { name: 'a' } }, { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'b' } }]), undefined as never) as {
      response: { uid: string; convertedObjects: KubeObject[]; result: { status: string } };
    };
    assert.equal(ok.response.uid, 'c-1');
    assert.deepEqual(ok.response.convertedObjects.map((o) => [o.apiVersion, o.metadata?.name]), [['g/v1', 'a'], ['g/v1', 'b']]);
    assert.equal(ok.response.result.status, 'Success');
    const bad = conversionHandler(() => {
      throw new Error('no home for field x');
    })(req([{ apiVersion: 'g/v1alpha1', kind: 'K' }]), undefined as never) as { response: { result: { status: string; message: string } } };
    assert.deepEqual(bad.response.result, { status: 'Failure', message: 'converting object 0 (<unnamed>) from g/v1alpha1 to g/v1: no home for field x' });
  });
});

describe('runtime/kube: errors, paths, write counting', () => {
  it('parses a Status body into status, reason and message', () => {
    const e = KubeApiError.fromResponse(409, JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', message: 'configmaps "x" already exists', code: 409 }), 'POST', '/api/v1/namespaces/ns/configmaps');
    assert.equal(e.status, 409);
    assert.equal(e.reason, 'AlreadyExists');
    assert.equal(e.code, 'KUBE_ALREADY_EXISTS');
    assert.ok(isAlreadyExists(e) && !isConflict(e));
    assert.match(e.message, /already exists/);
    const raw = KubeApiError.fromResponse(404, 'not json', 'GET', '/x');
    assert.equal(raw.reason, 'NotFound');
    assert.ok(isNotFound(raw));
    assert.ok(isGone(KubeApiError.fromResponse(410, '{"kind":"Status","reason":"Expired","code":410}', 'GET', '/x')));
  });

  it('builds and reads resource paths', () => {
    const deploy = builtinResource({ apiVersion: 'apps/v1', kind: 'Deployment' })!;
    assert.equal(resourcePath(deploy, 'ns', 'd', 'status'), '/apis/apps/v1/namespaces/ns/deployments/d/status');
    assert.equal(resourcePath(builtinResource({ apiVersion: 'v1', kind: 'Namespace' })!, 'ignored', 'ns'), '/api/v1/namespaces/ns');
    assert.equal(resourceOfPath('/apis/coordination.k8s.io/v1/namespaces/ns/leases/x'), 'leases.coordination.k8s.io');
    assert.equal(resourceOfPath('/api/v1/namespaces/ns/configmaps'), 'configmaps');
    assert.equal(resourceOfPath('/api/v1/namespaces/ns'), 'namespaces');
    assert.equal(resourceOfPath('/apis/inference.olmpub.dev/v1/namespaces/ns/inferenceservices/a/status'), 'inferenceservices.inference.olmpub.dev/status');
    assert.equal(resourceOfPath('/healthz'), undefined);
  });

  it('counts writes by resource and not reviews or reads', () => {
    const w = new WriteCounter();
    w.record('GET', '/api/v1/namespaces/ns/configmaps');
    w.record('PATCH', '/apis/apps/v1/namespaces/ns/deployments/d');
    w.record('PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l');
    w.record('POST', '/apis/authentication.k8s.io/v1/tokenreviews');
    w.record('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews');
    assert.equal(w.total, 2);
    assert.equal(w.reviews, 2);
    assert.equal(w.count({ exclude: ['leases.coordination.k8s.io'] }), 1);
    assert.deepEqual(w.byResource(), { 'deployments.apps': 1, 'leases.coordination.k8s.io': 1 });
  });

  it('resolves unknown kinds through discovery once per group-version, refreshing on a miss', async () => {
    let calls = 0;
    let resources = [{ name: 'widgets', kind: 'Widget', namespaced: true }];
    const m = new RestMapper(async (path) => {
      calls++;
      assert.equal(path, '/apis/example.com/v1');
      return { resources: [...resources, { name: 'widgets/status', kind: 'Widget', namespaced: true }] };
    });
    assert.equal((await m.resolve({ apiVersion: 'example.com/v1', kind: 'Widget' })).resource, 'widgets');
    await m.resolve({ apiVersion: 'example.com/v1', kind: 'Widget' });
    assert.equal(calls, 1);
    resources = [...resources, { name: 'gadgets', kind: 'Gadget', namespaced: false }];
    assert.equal((await m.resolve({ apiVersion: 'example.com/v1', kind: 'Gadget' })).namespaced, false);
    assert.equal(calls, 2);
  });

  it('parses WATCH_NAMESPACE', () => {
    assert.deepEqual(parseWatchNamespaces(undefined), []);
    assert.deepEqual(parseWatchNamespaces(''), []);
    assert.deepEqual(parseWatchNamespaces('team-a'), ['team-a']);
    assert.deepEqual(parseWatchNamespaces(' b, a ,,b'), ['a', 'b']);
  });
});

describe('runtime/metrics: DelegatingAuth decisions and caches', () => {
  function stubClient(tokens: Record<string, string>, allowed: Set<string>) {
    const calls = { tr: 0, sar: 0 };
    const client = {
      async requestJSON(opts: { path: string; body: { spec: { token?: string; user?: string; nonResourceAttributes?: { path: string; verb: string } } } }) {
        if (opts.path.endsWith('tokenreviews')) {
          calls.tr++;
          const user = tokens[opts.body.spec.token!];
          return { status: user ? { authenticated: true, user: { username: user, groups: ['system:authenticated'] } } : { authenticated: false, error: 'invalid bearer token' } };
        }
        calls.sar++;
        const s = opts.body.spec;
        return { status: { allowed: allowed.has(`${s.user} ${s.nonResourceAttributes!.verb} ${s.nonResourceAttributes!.path}`) } };
      },
    };
    return { client: client as unknown as KubeClient, calls };
  }

  it('401 without or with a rejected token, 403 when denied, 200 when allowed; verb is the lower-case method', async () => {
    const { client } = stubClient({ good: 'system:serviceaccount:ns:prom', other: 'system:serviceaccount:ns:nobody' }, new Set(['system:serviceaccount:ns:prom get /metrics']));
    const auth = new DelegatingAuth(client, { clock: new FakeClock() });
    assert.deepEqual(await auth.check('GET', '/metrics', undefined), { status: 401, message: 'Unauthorized' });
    assert.equal((await auth.check('GET', '/metrics', 'Basic abc')).status, 401);
    assert.equal((await auth.check('GET', '/metrics', 'Bearer nope')).status, 401);
    const denied = await auth.check('GET', '/metrics', 'Bearer other');
    assert.equal(denied.status, 403);
    assert.equal(denied.message, 'Authorization denied for user system:serviceaccount:ns:nobody');
    assert.equal((await auth.check('GET', '/metrics', 'bearer good')).status, 200);
    assert.equal((await auth.check('POST', '/metrics', 'Bearer good')).status, 403);
  });

  it('caches token reviews 1 min, allows 5 min and denials 30 s', async () => {
    const clock = new FakeClock();
    const { client, calls } = stubClient({ good: 'u', other: 'v' }, new Set(['u get /metrics']));
    const auth = new DelegatingAuth(client, { clock });
    await auth.check('GET', '/metrics', 'Bearer good');
    await auth.check('GET', '/metrics', 'Bearer other');
    assert.deepEqual(calls, { tr: 2, sar: 2 });
    await clock.advance(29_000);
    await auth.check('GET', '/metrics', 'Bearer good');
    await auth.check('GET', '/metrics', 'Bearer other');
    assert.deepEqual(calls, { tr: 2, sar: 2 }, 'all cached');
    await clock.advance(2_000); // 31 s: the denial expired
    await auth.check('GET', '/metrics', 'Bearer other');
    assert.deepEqual(calls, { tr: 2, sar: 3 });
    await clock.advance(30_000); // 61 s: token reviews expired, the allow (5 min) not
    await auth.check('GET', '/metrics', 'Bearer good');
    assert.deepEqual(calls, { tr: 3, sar: 3 });
  });

  it('500 when a review fails', async () => {
    const client = {
      async requestJSON() {
        throw new KubeApiError(403, 'Forbidden', 'tokenreviews is forbidden', 'POST', '/apis/authentication.k8s.io/v1/tokenreviews');
      },
    } as unknown as KubeClient;
    const auth = new DelegatingAuth(client, { clock: new FakeClock() });
    assert.deepEqual(await auth.check('GET', '/metrics', 'Bearer t'), { status: 500, message: 'Authentication failed' });
  });

  it('reads bearer tokens', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer  x '), 'x');
    assert.equal(bearerToken('Basic x'), undefined);
    assert.equal(bearerToken(''), undefined);
  });
});

describe('runtime: logger, backoff, bind addresses, self-signed certificates', () => {
  it('writes JSON lines with level, logger name and fields; respects the level; redacts secrets', () => {
    const lines: string[] = [];
    const log = new Logger({ level: 'info', sink: (l) => lines.push(l), now: () => 0 }).child('controller', { controller: 'isvc' });
    log.debug('hidden');
    log.info('reconciled', { name: 'a' });
    log.error('failed', { err: Object.assign(new Error('GET x: Authorization: Bearer s3cr3t'), { code: 'KUBE_X' }) });
    assert.equal(lines.length, 2);
    assert.deepEqual(JSON.parse(lines[0]!), { ts: '1970-01-01T00:00:00.000Z', level: 'info', logger: 'controller', msg: 'reconciled', controller: 'isvc', name: 'a' });
    const err = JSON.parse(lines[1]!).err;
    assert.equal(err.code, 'KUBE_X');
    assert.doesNotMatch(err.message, /s3cr3t/);
    assert.equal(parseLogLevel('DEBUG'), 'debug');
    assert.equal(parseLogLevel('2'), 'trace');
    assert.equal(parseLogLevel('bogus'), 'info');
  });

  it('backs off exponentially with jitter, capped, and resets after a quiet period', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, random: () => 0 });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next(), b.next(), b.next(), b.next()], [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    await clock.advance(120_001);
    assert.equal(b.next(), 800);
    assert.equal(new Backoff({ clock, random: () => 0.999 }).next() < 1600, true);
  });

  it('parses bind addresses', () => {
    assert.deepEqual(parseBindAddress(':8081'), { host: '', port: 8081 });
    assert.deepEqual(parseBindAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseBindAddress('[::1]:9443'), { host: '::1', port: 9443 });
    assert.throws(() => parseBindAddress('8081'), /invalid bind address/);
  });

  it('generates a valid self-signed serving certificate with SANs', () => {
    const pair = generateSelfSigned({ dnsNames: ['svc.ns.svc'], ipAddresses: ['127.0.0.1', '::1'] });
    const x = new X509Certificate(pair.cert);
    assert.equal(x.subjectAltName, 'DNS:svc.ns.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.ok(x.verify(x.publicKey));
    assert.ok(x.checkPrivateKey(createPrivateKey(pair.key)));
    assert.ok(x.checkHost('svc.ns.svc'));
  });
});
