/**
 * Proves the local test environment is made of real parts: the scheduler, controller-manager and KWOK
 * turn a Deployment Available; RBAC denies and then allows an impersonated ServiceAccount; the
 * apiserver calls a CRD conversion webhook on 127.0.0.1; the registry stores bytes faithfully and
 * its htpasswd twin rejects wrong credentials.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testenv, toolBin, eventually } from '../../support/env.js';

const run = promisify(execFile);

function kubectl(args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  const child = run(join(toolBin('k8s'), 'kubectl'), ['--kubeconfig', testenv('KUBECONFIG'), ...args], { maxBuffer: 16 << 20 });
  if (input !== undefined) child.child.stdin!.end(input);
  return child;
}

const kubectlJSON = async (args: string[]) => JSON.parse((await kubectl([...args, '-o', 'json'])).stdout);

const suffix = () => randomBytes(3).toString('hex');

describe('test environment (real control plane and registries)', function () {
  this.timeout(180_000);

  describe('control plane', () => {
    it('lists at least two Ready KWOK nodes', async () => {
      const nodes = await kubectlJSON(['get', 'nodes', '-l', 'type=kwok']);
      const ready = nodes.items.filter((n: any) => n.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
      assert.ok(ready.length >= 2, `expected 2 Ready nodes, got ${ready.length}`);
    });

    it('makes a Deployment Available with Running, Ready pods', async () => {
      const ns = `env-deploy-${suffix()}`;
      await kubectl(['create', 'namespace', ns]);
      try {
        await kubectl(['create', 'deployment', 'web', '--image=registry.example/web:1', '--replicas=2', '-n', ns]);
        const deployment = await eventually('Deployment Available', async () => {
          const d = await kubectlJSON(['get', 'deployment', 'web', '-n', ns]);
          const available = d.status?.conditions?.find((c: any) => c.type === 'Available');
          return available?.status === 'True' && d.status.readyReplicas === 2 ? d : undefined;
        }, 120_000);
        assert.equal(deployment.status.availableReplicas, 2);
        const pods = await kubectlJSON(['get', 'pods', '-n', ns, '-l', 'app=web']);
        assert.equal(pods.items.length, 2);
        for (const pod of pods.items) {
          assert.equal(pod.status.phase, 'Running');
          assert.match(pod.spec.nodeName, /^kwok-node-/, 'the scheduler bound the pod to a KWOK node');
        }
      } finally {
        await kubectl(['delete', 'namespace', ns, '--wait=false']);
      }
    });

    it('denies an impersonated ServiceAccount without permission and allows it once a Role grants it', async () => {
      const ns = `env-rbac-${suffix()}`;
      await kubectl(['create', 'namespace', ns]);
      try {
        await kubectl(['create', 'serviceaccount', 'reader', '-n', ns]);
        const as = `--as=system:serviceaccount:${ns}:reader`;
        await assert.rejects(kubectl(['get', 'configmaps', '-n', ns, as]), (err: any) => /forbidden/i.test(err.stderr));
        await kubectl(['create', 'role', 'cm-reader', '--verb=get,list', '--resource=configmaps', '-n', ns]);
        await kubectl(['create', 'rolebinding', 'cm-reader', '--role=cm-reader', `--serviceaccount=${ns}:reader`, '-n', ns]);
        await eventually('the Role to take effect', async () => (await kubectl(['get', 'configmaps', '-n', ns, as])).stdout !== undefined, 30_000);
        // Still denied for what the Role does not grant.
        await assert.rejects(kubectl(['get', 'secrets', '-n', ns, as]), (err: any) => /forbidden/i.test(err.stderr));
      } finally {
        await kubectl(['delete', 'namespace', ns, '--wait=false']);
      }
    });

    it('calls a CRD conversion webhook served on 127.0.0.1', async () => {
      const group = `env${suffix()}.olmpub.dev`;
      const dir = mkdtempSync(join(tmpdir(), 'olmpub-webhook-'));
      // A server certificate with the IP SAN the apiserver dials, signed by its own CA.
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt'),
        '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      const reviews: any[] = [];
      const server: Server = createServer({ key: readFileSync(join(dir, 'tls.key')), cert: readFileSync(join(dir, 'tls.crt')) }, (req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          const review = JSON.parse(body);
          reviews.push(review);
          const desired = review.request.desiredAPIVersion as string;
          const convertedObjects = review.request.objects.map((o: any) => {
            const out = { ...o, apiVersion: desired, spec: { ...o.spec } };
            if (desired.endsWith('/v2')) { out.spec.size = { value: o.spec.size }; }
            else { out.spec.size = o.spec.size?.value; }
            return out;
          });
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview',
            response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects } }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      const crdName = `widgets.${group}`;
      try {
        const schema = (size: object) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size } } } } });
        const crd = {
          apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crdName },
          spec: {
            group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
            versions: [
              { name: 'v1', served: true, storage: true, schema: schema({ type: 'integer' }) },
              { name: 'v2', served: true, storage: false, schema: schema({ type: 'object', properties: { value: { type: 'integer' } } }) },
            ],
            conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: {
              url: `https://127.0.0.1:${port}/convert`, caBundle: readFileSync(join(dir, 'tls.crt')).toString('base64') } } },
          },
        };
        await kubectl(['apply', '-f', '-'], JSON.stringify(crd));
        await kubectl(['wait', '--for=condition=Established', `crd/${crdName}`, '--timeout=60s']);
        const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { size: 7 } };
        await eventually('the new CRD to serve', async () => (await kubectl(['apply', '-f', '-'], JSON.stringify(widget))).stdout, 30_000);
        const asV2 = await kubectlJSON(['get', `widgets.v2.${group}`, 'w', '-n', 'default']);
        assert.equal(asV2.apiVersion, `${group}/v2`);
        assert.deepEqual(asV2.spec.size, { value: 7 }, 'the object was converted by our webhook');
        assert.ok(reviews.some((r) => r.request.desiredAPIVersion === `${group}/v2`), 'the apiserver sent a ConversionReview');
      } finally {
        await kubectl(['delete', 'crd', crdName, '--wait=false']).catch(() => undefined);
        server.close();
      }
    });
  });

  describe('OCI registries', () => {
    const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

    async function pushBlob(base: string, repo: string, blob: Buffer, headers: Record<string, string> = {}) {
      const start = await fetch(`${base}/v2/${repo}/blobs/uploads/`, { method: 'POST', headers });
      assert.equal(start.status, 202, `upload start: ${start.status}`);
      const location = new URL(start.headers.get('location')!, base);
      location.searchParams.set('digest', sha256(blob));
      const put = await fetch(location, { method: 'PUT', body: blob, headers: { ...headers, 'content-type': 'application/octet-stream' } });
      assert.equal(put.status, 201, `upload finish: ${put.status}`);
    }

    it('reads back a pushed blob and manifest byte-identical', async () => {
      const base = `http://${testenv('REGISTRY')}`;
      const repo = `envtest/blob-${suffix()}`;
      const layer = randomBytes(200_000);
      const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }));
      await pushBlob(base, repo, layer);
      await pushBlob(base, repo, config);
      const manifest = Buffer.from(JSON.stringify({
        schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha256(layer), size: layer.length }],
      }));
      const put = await fetch(`${base}/v2/${repo}/manifests/v1`, { method: 'PUT', body: manifest, headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' } });
      assert.equal(put.status, 201);
      assert.equal(put.headers.get('docker-content-digest'), sha256(manifest));

      const gotLayer = Buffer.from(await (await fetch(`${base}/v2/${repo}/blobs/${sha256(layer)}`)).arrayBuffer());
      assert.ok(gotLayer.equals(layer), 'blob bytes differ');
      const got = await fetch(`${base}/v2/${repo}/manifests/v1`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } });
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(manifest), 'manifest bytes differ');
    });

    it('rejects wrong basic-auth credentials and accepts the right ones', async () => {
      const base = `http://${testenv('AUTH_REGISTRY')}`;
      const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
      const anonymous = await fetch(`${base}/v2/`);
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      const wrong = await fetch(`${base}/v2/`, { headers: basic(testenv('AUTH_REGISTRY_USER'), 'not-the-password') });
      assert.equal(wrong.status, 401);
      const right = basic(testenv('AUTH_REGISTRY_USER'), testenv('AUTH_REGISTRY_PASSWORD'));
      assert.equal((await fetch(`${base}/v2/`, { headers: right })).status, 200);
      await pushBlob(base, `envtest/auth-${suffix()}`, randomBytes(1000), right);
    });
  });
});
