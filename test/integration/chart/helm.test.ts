/**
 * The chart against the REAL helm (v3.21, built from the Go module proxy) and the real test cluster:
 * `helm lint --strict` is clean, `helm template` renders exactly what the install manifests model renders
 * for the same values (objects compared parsed, order-insensitive), and `helm install` succeeds with the
 * Deployment becoming Available (KWOK runs the pods).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { eventually, testenv, toolBin } from '../../support/env.js';
import { buildChart, chartArchive, renderChart, type BuiltChart } from '../../../bundle/chart/index.js';
import { sampleInferenceService } from '../../../bundle/registryv1/csv.js';

const IMAGE = `registry.example.com/olmpub/inference-operator@sha256:${'a'.repeat(64)}`;
const VERSION = '0.7.0';
/** helm built from the module proxy reports Kubernetes v1.20 as its default capabilities; the chart needs >= 1.30. */
const KUBE_VERSION = '1.36.0';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(bin, args, { maxBuffer: 64 << 20, timeout: 300_000, env: { ...process.env, KUBECONFIG: testenv('KUBECONFIG'), HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

let helmHome = '';
const helm = (args: string[]) => run(join(toolBin('helm'), 'helm'), args);
const kubectl = (args: string[], input?: string) => run(join(toolBin('k8s'), 'kubectl'), ['--kubeconfig', testenv('KUBECONFIG'), ...args], input);
async function must(p: Promise<Run>, what: string): Promise<string> {
  const r = await p;
  assert.equal(r.code, 0, `${what} failed:\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const parseStream = (text: string): Obj[] => YAML.parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((o) => o && typeof o === 'object');

/** Every object of `helm template` equals the model's, and the two have the same objects. */
function assertSameObjects(helmObjects: Obj[], modelObjects: Obj[], label: string): void {
  const h = new Map(helmObjects.map((o) => [key(o), o]));
  const m = new Map(modelObjects.map((o) => [key(o), JSON.parse(JSON.stringify(o)) as Obj]));
  assert.deepEqual([...h.keys()].sort(), [...m.keys()].sort(), `${label}: the same objects`);
  for (const [k, o] of h) assert.deepEqual(o, m.get(k), `${label}: ${k}`);
}

describe('helm chart with the real helm', function () {
  this.timeout(300_000);
  let dir: string;
  let chart: BuiltChart;
  let tgz: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-chart-it-'));
    helmHome = join(dir, 'helm-home');
    chart = buildChart({ version: VERSION, image: IMAGE });
    tgz = join(dir, chart.archiveName);
    await writeFile(tgz, await chartArchive(chart));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('helm lint --strict is clean, on the archive and on the unpacked chart', async () => {
    const archive = await helm(['lint', '--strict', tgz]);
    assert.equal(archive.code, 0, archive.stdout + archive.stderr);
    assert.match(archive.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.doesNotMatch(archive.stdout, /\[(WARNING|ERROR)\]/);
    await must(run('tar', ['-xzf', tgz, '-C', dir]), 'tar');
    const unpacked = await helm(['lint', '--strict', '--namespace', 'other', join(dir, 'inference-operator')]);
    assert.equal(unpacked.code, 0, unpacked.stdout + unpacked.stderr);
    assert.doesNotMatch(unpacked.stdout, /\[(WARNING|ERROR)\]/);
  });

  it('helm template with the default values equals the model (CRDs included)', async () => {
    const out = await must(helm(['template', 'inference-operator', tgz, '--namespace', 'inference-operator-system', '--include-crds', '--kube-version', KUBE_VERSION]), 'helm template');
    const { manifests } = renderChart({ image: IMAGE, version: VERSION });
    assert.equal(manifests.objects.length, 17);
    assertSameObjects(parseStream(out), manifests.objects as Obj[], 'defaults');
  });

  const cases: { name: string; values: Record<string, unknown> }[] = [
    { name: 'webhooks off', values: { webhook: { enabled: false } } },
    { name: 'no cert-manager, own CA bundle', values: { certManager: { enabled: false }, webhook: { caBundle: 'Q0EK', failurePolicy: 'Ignore', timeoutSeconds: 5 } } },
    { name: 'one replica, no leader election, no NetworkPolicy', values: { replicas: 1, leaderElection: { enabled: false }, networkPolicy: { enabled: false } } },
    { name: 'ServiceMonitor, namespaces, placement', values: {
      serviceMonitor: { enabled: true, interval: '15s' },
      watchNamespaces: ['team-a', 'team-b'],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ops', effect: 'NoSchedule' }],
      affinity: null,
      podAnnotations: { 'example.com/scrape': 'true' },
      imagePullSecrets: [{ name: 'pull-secret' }],
      logLevel: 'debug',
      resources: { requests: { cpu: '50m' } },
      image: { pullPolicy: 'Always' },
    } },
  ];
  for (const c of cases) {
    it(`helm template with ${c.name} equals the model`, async () => {
      const valuesFile = join(dir, `values-${randomBytes(3).toString('hex')}.yaml`);
      await writeFile(valuesFile, YAML.stringify(c.values));
      const out = await must(helm(['template', 'rel-x', tgz, '--namespace', 'ops', '-f', valuesFile, '--include-crds', '--kube-version', KUBE_VERSION]), 'helm template');
      const { manifests } = renderChart({ image: IMAGE, version: VERSION, values: c.values, release: { name: 'rel-x', namespace: 'ops' } });
      assertSameObjects(parseStream(out), manifests.objects as Obj[], c.name);
    });
  }

  it('helm refuses values the schema rejects', async () => {
    const r = await helm(['template', 'x', tgz, '--kube-version', KUBE_VERSION, '--set', 'image.digest=latest']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /image\/digest/);
  });

  describe('helm install into the test cluster', () => {
    const ns = `olmpub-chart-${randomBytes(3).toString('hex')}`;
    const release = 'inference-operator';

    before(async () => {
      // Cluster-scoped objects have fixed names (one operator per cluster): clear a release a crashed run left.
      const list = await helm(['list', '--all-namespaces', '--filter', `^${release}$`, '-o', 'json']);
      for (const r of (JSON.parse(list.stdout || '[]') as { name: string; namespace: string }[])) await helm(['uninstall', r.name, '--namespace', r.namespace, '--wait']);
    });
    after(async () => {
      await helm(['uninstall', release, '--namespace', ns, '--wait']);
      await kubectl(['delete', 'namespace', ns, '--wait=false']);
    });

    it('installs with webhooks off and the operator Deployment becomes Available', async () => {
      const out = await must(helm(['install', release, tgz, '--namespace', ns, '--create-namespace', '--set', 'webhook.enabled=false']), 'helm install');
      assert.match(out, /STATUS: deployed/);
      assert.match(out, /Webhooks are off/, 'NOTES.txt is rendered');
      const deployment = await eventually(
        'the operator Deployment to be Available',
        async () => {
          const r = await kubectl(['get', 'deployment', 'inference-operator', '-n', ns, '-o', 'json']);
          if (r.code !== 0) return undefined;
          const d = JSON.parse(r.stdout);
          const available = d.status?.conditions?.find((c: { type: string }) => c.type === 'Available');
          return available?.status === 'True' && d.status.availableReplicas === 2 ? d : undefined;
        },
        180_000,
        1000,
      );
      assert.equal(deployment.spec.template.spec.securityContext.runAsUser, 65532);
      const objects = parseStream(await must(helm(['get', 'manifest', release, '--namespace', ns]), 'helm get manifest'));
      const { manifests } = renderChart({ image: IMAGE, version: VERSION, values: { webhook: { enabled: false } }, release: { name: release, namespace: ns } });
      assertSameObjects(objects, manifests.objects.filter((o) => o.kind !== 'CustomResourceDefinition') as Obj[], 'installed release');
      for (const o of objects) {
        const r = await kubectl(['get', o.kind.toLowerCase(), o.metadata.name, ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []), '-o', 'name']);
        assert.equal(r.code, 0, `${key(o)} exists in the cluster: ${r.stderr}`);
      }
      const crd = await kubectl(['get', 'crd', 'inferenceservices.inference.olmpub.dev', '-o', 'name']);
      assert.equal(crd.code, 0, 'crds/ was installed');
    });

    it('the published sample InferenceService is accepted by the installed CRD (schema and CEL rules)', async () => {
      const sample: Record<string, unknown> = { ...sampleInferenceService(), metadata: { name: 'llama', namespace: ns } };
      const r = await kubectl(['create', '--dry-run=server', '-f', '-', '-o', 'name'], JSON.stringify(sample));
      assert.equal(r.code, 0, r.stderr);
      const bad = { ...sample, spec: { ...(sample.spec as object), resources: {} } };
      const rejected = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(bad));
      assert.notEqual(rejected.code, 0, 'the CEL rule (gpu or devices) is enforced');
    });
  });
});
