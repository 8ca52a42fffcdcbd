/**
 * Tests that need a control plane of their own, started here with `TESTENV_NAME=operator
 * scripts/testenv up` and stopped with `down` (about a minute more on a quiet machine; the time is
 * printed):
 * - an apiserver restart loses no update: changes made while the apiserver restarts (as soon as it
 *   answers again, before the operator's watches have recovered) are all reconciled;
 * - a conversion round trip through the real apiserver and the operator's /convert webhook: the CRD
 *   is installed with the webhook on https://127.0.0.1:<port>/convert (never done to the shared
 *   environment, whose CRD other suites manage).
 * - the Gateway API (the real HTTPRoute CRD of sigs.k8s.io/gateway-api, from the Go module proxy)
 *   installed while the operator runs: it switches to HTTPRoute weights without a restart.
 * The operator runs in-process (no leader election, so a long restart cannot make it exit).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION_V1ALPHA1, V1ALPHA1_FIELDS_ANNOTATION, V1_FIELDS_ANNOTATION, operatorCRDs, type InferenceService } from '../../../operator/api/index.js';
import { ISVC } from '../../../operator/controller/reconciler.js';
import { CONVERSION_PATH } from '../../../operator/main.js';
import type { KubeClient } from '../../../operator/runtime/kube/client.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { LABEL_ISVC } from '../../../operator/api/meta.js';
import { REPO_ROOT, eventually } from '../../support/env.js';
import {
  CRD,
  DEPLOYMENT,
  ISVC_V1ALPHA1,
  SERVICE,
  condition,
  createNamespace,
  freePort,
  inferenceService,
  kube,
  metricValue,
  startInProcess,
  webhookCertDir,
  type Deployment,
  type InProcessOperator,
} from './support.js';

const run = promisify(execFile);
const ENV_NAME = process.env.OPERATOR_TESTENV_NAME ?? 'operator';
const testenvCmd = (...args: string[]) =>
  run(join(REPO_ROOT, 'scripts/testenv'), args, { env: { ...process.env, TESTENV_NAME: ENV_NAME }, maxBuffer: 16 << 20, timeout: 900_000 });

describe(`operator in a dedicated environment (TESTENV_NAME=${ENV_NAME})`, function () {
  this.timeout(300_000);
  let kubeconfig: string;
  let c: KubeClient;
  let op: InProcessOperator;
  let certs: { dir: string; caBundle: string };
  let ns: string;
  let convNs: string;

  before(async function () {
    this.timeout(900_000);
    const t0 = Date.now();
    await testenvCmd('up');
    console.log(`      dedicated environment up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    kubeconfig = (await testenvCmd('env', 'KUBECONFIG')).stdout.trim();
    c = kube(kubeconfig);
    certs = webhookCertDir();
    const port = await freePort();
    const crd = operatorCRDs({ conversionClientConfig: { url: `https://127.0.0.1:${port}${CONVERSION_PATH}`, caBundle: certs.caBundle } })[0]!;
    await c.apply(crd as unknown as KubeObject, { fieldManager: 'olmpub-test' });
    await eventually('the CRD Established', async () => {
      const got = await c.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(CRD, crd.metadata.name);
      return got.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    }, 60_000);
    ns = await createNamespace(c, 'op-restart');
    convNs = await createNamespace(c, 'op-convert');
    op = await startInProcess(
      { 'watch-namespace': ns, 'webhook-bind-address': `127.0.0.1:${port}`, 'webhook-cert-dir': certs.dir, gateway: 'gw-system/public', 'ingress-domain': 'models.example.com' },
      kubeconfig,
      undefined,
      { discoveryRefreshMs: 2_000 },
    );
  });

  after(async function () {
    this.timeout(300_000);
    await op?.stop();
    await c?.close();
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
    const t0 = Date.now();
    await testenvCmd('down');
    console.log(`      dedicated environment down in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  });

  describe('conversion through the real apiserver and the /convert webhook', () => {
    const alpha = () => ({
      apiVersion: API_VERSION_V1ALPHA1,
      kind: 'InferenceService',
      metadata: { name: 'legacy', namespace: convNs, labels: { team: 'search' }, annotations: { 'example.com/owner': 'alice' } },
      spec: {
        modelName: 'llama-3-8b',
        modelFormat: 'safetensors',
        modelUri: 'hf://meta-llama/Llama-3-8B',
        cachePvc: 'model-cache',
        image: 'vllm/vllm-openai:0.6.0',
        args: ['--max-model-len=8192'],
        port: 8000,
        healthPath: '/health',
        gpus: 1,
        cpu: '4',
        memory: '16Gi',
        replicas: { min: 1, max: 3, desired: 2 },
        canaryImage: 'vllm/vllm-openai:0.7.0',
        canaryPercent: 10,
        nodeSelector: { pool: 'gpu' },
        serviceType: 'NodePort',
      },
    });

    it('creates as v1alpha1, reads as v1, writes v1 back and reads v1alpha1 again with nothing lost', async () => {
      const original = alpha();
      await c.create(original as KubeObject);
      const v1 = await c.get<InferenceService>(ISVC, 'legacy', convNs);
      assert.equal(v1.apiVersion, 'inference.olmpub.dev/v1');
      assert.deepEqual(v1.spec.model, { name: 'llama-3-8b', format: 'safetensors', storageUri: 'hf://meta-llama/Llama-3-8B', cache: { claimName: 'model-cache' } });
      assert.equal(v1.spec.runtime.image, 'vllm/vllm-openai:0.6.0');
      assert.equal(v1.spec.runtime.port, 8000);
      assert.equal(v1.spec.resources?.gpu?.count, 1);
      assert.deepEqual(v1.spec.resources?.requests, { cpu: '4', memory: '16Gi' });
      assert.deepEqual([v1.spec.scaling?.minReplicas, v1.spec.scaling?.maxReplicas, v1.spec.scaling?.replicas], [1, 3, 2]);
      assert.deepEqual([v1.spec.canary?.trafficPercent, v1.spec.canary?.runtime?.image], [10, 'vllm/vllm-openai:0.7.0']);
      assert.deepEqual(v1.spec.placement?.nodeSelector, { pool: 'gpu' });
      assert.match(v1.metadata?.annotations?.[V1ALPHA1_FIELDS_ANNOTATION] ?? '', /"serviceType":"NodePort"/, 'what v1 cannot express is kept');

      // Written back as v1 (unchanged): the stored object is the v1 one, converted again on the way out.
      await c.replace(v1);
      const back = await c.get<KubeObject & { spec?: unknown }>(ISVC_V1ALPHA1, 'legacy', convNs);
      assert.equal(back.apiVersion, API_VERSION_V1ALPHA1);
      assert.deepEqual(back.spec, original.spec);
      assert.deepEqual(back.metadata?.labels, original.metadata.labels);
      assert.deepEqual(back.metadata?.annotations, original.metadata.annotations);

      const raw = await c.request({ path: `/apis/inference.olmpub.dev/v1alpha1/namespaces/${convNs}/inferenceservices/legacy` });
      assert.match(String(raw.headers.warning ?? ''), /v1alpha1 InferenceService is deprecated/);
    });

    it('keeps v1-only fields through v1alpha1 and applies edits made in either version', async () => {
      const v1 = await c.get<InferenceService>(ISVC, 'legacy', convNs);
      const tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];
      await c.replace({ ...v1, spec: { ...v1.spec, runtime: { ...v1.spec.runtime, image: 'vllm/vllm-openai:0.6.1' }, placement: { ...v1.spec.placement, tolerations } } });
      const asAlpha = await c.get<KubeObject & { spec?: Record<string, unknown> }>(ISVC_V1ALPHA1, 'legacy', convNs);
      assert.equal(asAlpha.spec?.image, 'vllm/vllm-openai:0.6.1');
      assert.equal(asAlpha.spec?.serviceType, 'NodePort');
      assert.match(asAlpha.metadata?.annotations?.[V1_FIELDS_ANNOTATION] ?? '', /tolerations/);

      // An edit through v1alpha1 keeps the v1-only tolerations.
      await c.replace({ ...asAlpha, spec: { ...asAlpha.spec, canaryPercent: 30 } } as KubeObject);
      const again = await c.get<InferenceService>(ISVC, 'legacy', convNs);
      assert.deepEqual(again.spec.placement?.tolerations, tolerations);
      assert.equal(again.spec.canary?.trafficPercent, 30);
      assert.equal(again.spec.runtime.image, 'vllm/vllm-openai:0.6.1');
      assert.match(again.metadata?.annotations?.[V1ALPHA1_FIELDS_ANNOTATION] ?? '', /NodePort/);
      assert.equal(again.metadata?.annotations?.[V1_FIELDS_ANNOTATION], undefined);

      const text = await op.operator.manager.metrics.text();
      assert.ok((metricValue(text, 'controller_runtime_webhook_requests_total', { webhook: CONVERSION_PATH, code: '200' }) ?? 0) >= 4, 'the apiserver called the operator');
      await c.delete(ISVC, 'legacy', convNs);
    });
  });

  describe('apiserver restart', () => {
    const deployment = (name: string) => c.tryGet<Deployment>(DEPLOYMENT, name, ns);
    const get = (name: string) => c.tryGet<InferenceService>(ISVC, name, ns);
    const ready = (name: string) => eventually(`${name} Ready`, async () => condition(await get(name), 'Ready')?.status === 'True', 120_000, 250);

    it('loses no update made while the apiserver restarts', async () => {
      await c.create(inferenceService('survivor', ns, { scaling: { minReplicas: 1, maxReplicas: 3, replicas: 1 } }));
      await c.create(inferenceService('doomed', ns));
      await Promise.all([ready('survivor'), ready('doomed')]);
      const oldService = (await c.get(SERVICE, 'survivor', ns)).metadata!.uid;
      const watchesBefore = op.operator.isvcs.stats().watches;

      const t0 = Date.now();
      const restart = spawn(join(REPO_ROOT, 'scripts/testenv'), ['restart', 'kube-apiserver'], { env: { ...process.env, TESTENV_NAME: ENV_NAME }, stdio: 'ignore' });
      const restarted = new Promise<number | null>((resolve) => restart.on('exit', resolve));
      const readyz = async () => {
        try {
          return (await c.request({ path: '/readyz', timeoutMs: 2_000 })).status === 200;
        } catch {
          return false;
        }
      };
      await eventually('the apiserver to go down', async () => !(await readyz()), 60_000, 50);
      const downAt = Date.now();
      await eventually('the apiserver to answer again', readyz, 180_000, 50);
      const upAt = Date.now();

      // Right away, before the operator's watches have recovered: three kinds of change.
      const retry = <X>(what: string, fn: () => Promise<X>) => eventually(what, async () => (await fn()) ?? true, 60_000, 100);
      await retry('scale survivor', () => c.patch(ISVC, 'survivor', ns, { spec: { scaling: { replicas: 3 } } }, 'merge'));
      await retry('create newcomer', () => c.create(inferenceService('newcomer', ns)));
      await retry('delete doomed', () => c.delete(ISVC, 'doomed', ns, { ignoreNotFound: true }));
      await retry('delete a child by hand', () => c.delete(SERVICE, 'survivor', ns, { ignoreNotFound: true }));
      const changedAt = Date.now();
      assert.equal(await restarted, 0, 'scripts/testenv restart kube-apiserver succeeded');

      await eventually('survivor scaled to 3 and Ready at generation 2', async () => {
        const o = await get('survivor');
        return (await deployment('survivor'))?.spec?.replicas === 3 && o?.status?.observedGeneration === 2 && o.status.readyReplicas === 3;
      }, 120_000, 250);
      await ready('newcomer');
      await eventually('doomed and its children gone', async () => {
        const left = await Promise.all([get('doomed'), ...[DEPLOYMENT, SERVICE].map((k) => c.list(k, { namespace: ns, labelSelector: `${LABEL_ISVC}=doomed` }))]);
        return !left[0] && left.slice(1).every((l) => (l as { items: unknown[] }).items.length === 0);
      }, 120_000, 250);
      const service = await eventually('the deleted Service recreated', () => c.tryGet(SERVICE, 'survivor', ns), 120_000, 250);
      assert.notEqual(service.metadata?.uid, oldService);
      const convergedAt = Date.now();
      assert.ok(op.operator.isvcs.stats().watches > watchesBefore, 'the operator re-established its watch');
      console.log(
        `      apiserver down ${((upAt - downAt) / 1000).toFixed(1)} s (restart command ${((upAt - t0) / 1000).toFixed(1)} s); ` +
          `changes made ${((changedAt - upAt) / 1000).toFixed(1)} s after it answered; all reconciled ${((convergedAt - changedAt) / 1000).toFixed(1)} s later`,
      );
    });
  });

  describe('the Gateway API installed while the operator runs', () => {
    const GATEWAY_API = 'sigs.k8s.io/gateway-api@v1.6.0';
    const ROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' } as const;
    type Route = KubeObject & { spec?: { parentRefs?: unknown[]; hostnames?: string[]; rules?: { backendRefs?: { name: string; weight: number; port: number }[] }[] } };
    const deployment = (name: string) => c.tryGet<Deployment>(DEPLOYMENT, name, ns);

    it('switches to an HTTPRoute with canary weights, per-track Services and the gateway URL, and removes the route with the object', async () => {
      await c.create(
        inferenceService('routed', ns, {
          scaling: { minReplicas: 1, maxReplicas: 2, replicas: 2 },
          canary: { trafficPercent: 20, runtime: { image: 'registry.example/vllm:2.0' } },
        }),
      );
      const before = await eventually('Ready, split by replicas', async () => {
        const o = await c.tryGet<InferenceService>(ISVC, 'routed', ns);
        return o?.status?.canary?.readyReplicas === 1 && condition(o, 'Ready')?.status === 'True' ? o : undefined;
      }, 120_000, 250);
      assert.equal(before.status?.url, `http://routed.${ns}.svc.cluster.local`);
      assert.deepEqual([(await deployment('routed'))?.spec?.replicas, (await deployment('routed-canary'))?.spec?.replicas], [1, 1], 'replica split: one pod per track');

      // The real HTTPRoute CRD, from the Go module proxy (cached in the module cache).
      const { stdout } = await run('go', ['mod', 'download', '-json', GATEWAY_API], { cwd: REPO_ROOT, env: { ...process.env, GOFLAGS: '-mod=mod' }, maxBuffer: 1 << 20 });
      const dir = (JSON.parse(stdout) as { Dir: string }).Dir;
      const crd = parseYaml(readFileSync(join(dir, 'config/crd/standard/gateway.networking.k8s.io_httproutes.yaml'), 'utf8')) as KubeObject;
      await c.apply(crd, { fieldManager: 'olmpub-test' });

      const route = await eventually('the HTTPRoute with the canary weight', async () => {
        const r = await c.tryGet<Route>(ROUTE, 'routed', ns);
        return r?.spec?.rules?.[0]?.backendRefs?.find((b) => b.name === 'routed-canary')?.weight === 20 ? r : undefined;
      }, 120_000, 250);
      assert.deepEqual(route.spec?.parentRefs, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public', namespace: 'gw-system' }]);
      assert.deepEqual(route.spec?.hostnames, [`routed.${ns}.models.example.com`]);
      assert.deepEqual(route.spec?.rules?.[0]?.backendRefs?.map((b) => [b.name, b.weight, b.port]), [['routed-stable', 80, 80], ['routed-canary', 20, 80]]);
      assert.deepEqual([(await deployment('routed'))?.spec?.replicas, (await deployment('routed-canary'))?.spec?.replicas], [2, 1], 'gateway split: stable keeps 2, the canary runs ceil(2 × 20 %)');
      for (const track of ['stable', 'canary']) {
        const svc = await c.get<KubeObject & { spec?: { selector?: Record<string, string> } }>(SERVICE, `routed-${track}`, ns);
        assert.equal(svc.spec?.selector?.['inference.olmpub.dev/track'], track);
      }
      const after = await eventually('status with the gateway URL', async () => {
        const o = await c.tryGet<InferenceService>(ISVC, 'routed', ns);
        return o?.status?.url === `http://routed.${ns}.models.example.com` ? o : undefined;
      }, 60_000, 250);
      assert.equal(after.status?.canary?.trafficPercent, 20);

      await c.patch(ISVC, 'routed', ns, { spec: { canary: null } }, 'merge');
      await eventually('one backend, no canary Service', async () => {
        const r = await c.tryGet<Route>(ROUTE, 'routed', ns);
        const refs = r?.spec?.rules?.[0]?.backendRefs ?? [];
        return refs.length === 1 && refs[0]!.name === 'routed-stable' && !(await c.tryGet(SERVICE, 'routed-canary', ns)) && !(await deployment('routed-canary'));
      }, 60_000, 250);

      await c.delete(ISVC, 'routed', ns);
      await eventually('the route and the Services gone with the object', async () => {
        const left = await Promise.all([ROUTE, SERVICE, DEPLOYMENT].map((k) => c.list(k, { namespace: ns, labelSelector: `${LABEL_ISVC}=routed` })));
        return !(await c.tryGet(ISVC, 'routed', ns)) && left.every((l) => l.items.length === 0);
      }, 60_000, 250);
    });
  });
});
