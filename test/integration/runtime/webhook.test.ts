import assert from 'node:assert/strict';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../lib/fsx.js';
import { RuntimeMetrics } from '../../../operator/runtime/metrics/registry.js';
import { generateSelfSigned } from '../../../operator/runtime/tls/selfsigned.js';
import { WebhookServer } from '../../../operator/runtime/webhook/server.js';
import { admissionHandler, allowed, denied } from '../../../operator/runtime/webhook/admission.js';
import { conversionHandler } from '../../../operator/runtime/webhook/conversion.js';
import { eventually } from '../../support/env.js';

function post(port: number, path: string, body: unknown, ca: string): Promise<{ status: number; json?: unknown; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const req = https.request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, servername: 'localhost', agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length } },
      (res) => {
        const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, fingerprint });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('runtime/webhook: HTTPS webhook server with certificate hot-reload', function () {
  this.timeout(60_000);
  let dir: string;
  let server: WebhookServer;
  const metrics = new RuntimeMetrics({ defaultMetrics: false });
  let pair1: { cert: string; key: string };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rt-webhook-'));
    pair1 = generateSelfSigned({ dnsNames: ['localhost'] });
    await writeFileAtomic(join(dir, 'tls.crt'), pair1.cert);
    await writeFileAtomic(join(dir, 'tls.key'), pair1.key);
    server = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir, pollIntervalMs: 500, metrics });
    server.register(
      '/validate-inference-olmpub-dev-v1-inferenceservice',
      admissionHandler<{ spec?: { gpus?: number } }>((req) => ((req.object?.spec?.gpus ?? 0) > 2 ? denied('GPU quota exceeded: 3 requested, 2 allowed') : allowed())),
    );
    server.register('/convert', conversionHandler((obj, v) => ({ ...obj, apiVersion: v })));
    await server.start();
  });
  after(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const review = (gpus: number) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${gpus}`,
      kind: { group: 'inference.olmpub.dev', version: 'v1', kind: 'InferenceService' },
      resource: { group: 'inference.olmpub.dev', version: 'v1', resource: 'inferenceservices' },
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: { apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService', metadata: { name: 'x' }, spec: { gpus } },
    },
  });

  it('routes AdmissionReview v1 by path and answers with the uid', async () => {
    const ok = await post(server.port!, '/validate-inference-olmpub-dev-v1-inferenceservice', review(1), pair1.cert);
    assert.equal(ok.status, 200);
    assert.deepEqual((ok.json as { response: unknown }).response, { uid: 'uid-1', allowed: true });
    const no = await post(server.port!, '/validate-inference-olmpub-dev-v1-inferenceservice', review(3), pair1.cert);
    assert.deepEqual((no.json as { response: unknown }).response, { uid: 'uid-3', allowed: false, status: { code: 403, message: 'GPU quota exceeded: 3 requested, 2 allowed', reason: 'Forbidden' } });
    assert.equal((await post(server.port!, '/nope', review(1), pair1.cert)).status, 404);
  });

  it('answers a body that is not a review with 400, not 500', async () => {
    const bad = await post(server.port!, '/validate-inference-olmpub-dev-v1-inferenceservice', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }, pair1.cert);
    assert.equal(bad.status, 400);
    assert.equal((await post(server.port!, '/convert', { kind: 'ConversionReview' }, pair1.cert)).status, 400);
  });

  it('serves ConversionReview v1', async () => {
    const r = await post(
      server.port!,
      '/convert',
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c1', desiredAPIVersion: 'inference.olmpub.dev/v1', objects: [{ apiVersion: 'inference.olmpub.dev/v1alpha1', kind: 'InferenceService', metadata: { name: 'x' } }] } },
      pair1.cert,
    );
    const resp = (r.json as { response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string }[] } }).response;
    assert.equal(resp.uid, 'c1');
    assert.equal(resp.result.status, 'Success');
    assert.equal(resp.convertedObjects[0]!.apiVersion, 'inference.olmpub.dev/v1');
  });

  it('counts requests per webhook and code', async () => {
    const text = await metrics.text();
    assert.match(text, /controller_runtime_webhook_requests_total\{webhook="\/validate-inference-olmpub-dev-v1-inferenceservice",code="200"\} 2/);
    assert.match(text, /controller_runtime_webhook_requests_total\{webhook="\/convert",code="400"\} 1/);
    assert.match(text, /controller_runtime_webhook_latency_seconds_count\{webhook="\/convert"\} 2/);
    assert.match(text, /controller_runtime_webhook_requests_in_flight\{webhook="\/convert"\} 0/);
  });

  it('passes its readiness check once it accepts TLS connections', async () => {
    await server.startedChecker()();
  });

  it('reloads the certificate when the files change, without a restart', async () => {
    const fp1 = new X509Certificate(pair1.cert).fingerprint256;
    assert.equal((await post(server.port!, '/convert', {}, pair1.cert)).fingerprint, fp1);
    const pair2 = generateSelfSigned({ dnsNames: ['localhost'] });
    // a half-written state (new cert, old key) must not take the server down
    await writeFileAtomic(join(dir, 'tls.crt'), pair2.cert);
    await writeFileAtomic(join(dir, 'tls.key'), pair2.key);
    const fp2 = new X509Certificate(pair2.cert).fingerprint256;
    await eventually('the new certificate is served', async () => (await post(server.port!, '/convert', {}, pair2.cert).catch(() => undefined))?.fingerprint === fp2, 20_000, 100);
    assert.ok(server.certificateReloads >= 1);
    assert.match(await metrics.text(), /certwatcher_read_certificate_total [1-9]/);
  });
});
