/**
 * Shared helpers of the operator integration tests: clients on a real test environment, the
 * InferenceService CRD (shared and cluster-scoped: installed only when absent, removed only by the
 * run that installed it), throwaway namespaces, the operator in-process or as a child process
 * (`node bin/olmpub.js operator run`) with its JSON logs, webhook certificates, ServiceAccount tokens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { CRD_NAME, operatorCRDs, type CRDOptions, type InferenceService } from '../../../operator/api/index.js';
import { KubeClient } from '../../../operator/runtime/kube/client.js';
import { isNotFound } from '../../../operator/runtime/kube/errors.js';
import type { KubeObject } from '../../../operator/runtime/kube/types.js';
import { generateSelfSigned } from '../../../operator/runtime/tls/selfsigned.js';
import { createOperator, parseOperatorConfig, type FlagValues, type Operator, type OperatorConfig } from '../../../operator/main.js';
import { ISVC } from '../../../operator/controller/reconciler.js';
import { Logger } from '../../../operator/runtime/log.js';
import { REPO_ROOT, eventually, testenv } from '../../support/env.js';

export const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;
export const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as const;
export const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
export const SERVICE = { apiVersion: 'v1', kind: 'Service' } as const;
export const REPLICA_SET = { apiVersion: 'apps/v1', kind: 'ReplicaSet' } as const;
export const POD = { apiVersion: 'v1', kind: 'Pod' } as const;
export const EVENT = { apiVersion: 'events.k8s.io/v1', kind: 'Event' } as const;
export const SA = { apiVersion: 'v1', kind: 'ServiceAccount' } as const;
export const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } as const;
export const CLUSTER_ROLE_BINDING = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' } as const;
export const VWC = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' } as const;
export const ISVC_V1ALPHA1 = { apiVersion: 'inference.olmpub.dev/v1alpha1', kind: 'InferenceService' } as const;

export const suffix = () => randomBytes(3).toString('hex');

/** A client on the environment whose admin kubeconfig is `kubeconfigPath` (default: the default environment). */
export function kube(kubeconfigPath = testenv('KUBECONFIG')): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return new KubeClient({ kubeConfig: kc, userAgent: 'olmpub-operator-test' });
}

// ---------------------------------------------------------------------------------------------
// the CRD

/**
 * Makes sure the InferenceService CRD is installed and Established. It is cluster-scoped and other
 * suites (the Helm chart, OLM) install it too, so an existing CRD is used as it is; only when it is
 * absent is it created here (returns true: then `removeCRD` may delete it again).
 */
export async function ensureCRD(c: KubeClient, options: CRDOptions = {}): Promise<boolean> {
  let created = false;
  if (!(await c.tryGet(CRD, CRD_NAME))) {
    try {
      await c.create(operatorCRDs(options)[0] as unknown as KubeObject);
      created = true;
    } catch (err) {
      if (!(err as { reason?: string }).reason?.includes('AlreadyExists')) throw err;
    }
  }
  await eventually(
    'the InferenceService CRD to be Established',
    async () => {
      const crd = await c.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(CRD, CRD_NAME);
      return crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    },
    60_000,
  );
  // Discovery lags behind Established for a moment.
  await eventually('inferenceservices in discovery', async () => (await c.requestJSON<{ resources?: { name: string }[] }>({ path: '/apis/inference.olmpub.dev/v1' })).resources?.some((r) => r.name === 'inferenceservices'), 60_000);
  return created;
}

/** Deletes the CRD when this run created it and no InferenceService is left anywhere. */
export async function removeCRD(c: KubeClient, created: boolean): Promise<void> {
  if (!created) return;
  try {
    const left = await c.list(ISVC, {});
    if (left.items.length) return;
    await c.delete(CRD, CRD_NAME, undefined, { ignoreNotFound: true });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// namespaces

export async function createNamespace(c: KubeClient, prefix: string, annotations: Record<string, string> = {}): Promise<string> {
  const name = `${prefix}-${suffix()}`;
  await c.create({ ...NS, metadata: { name, labels: { 'olmpub.dev/test': 'operator' }, annotations } });
  return name;
}

/**
 * Deletes a namespace. InferenceServices still carrying the finalizer (their operator is gone) are
 * released first, as docs/operator.md's rescue does, so the namespace does not hang in Terminating.
 */
export async function deleteNamespace(c: KubeClient, ns: string): Promise<void> {
  try {
    const left = await c.list<InferenceService>(ISVC, { namespace: ns });
    for (const o of left.items)
      if (o.metadata?.finalizers?.length) await c.patch(ISVC, o.metadata.name!, ns, { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
  } catch {
    // the CRD may be gone
  }
  await c.delete(NS, ns, undefined, { ignoreNotFound: true });
}

// ---------------------------------------------------------------------------------------------
// objects

/** A CPU-only InferenceService (gpu count 0) with a downloaded model; `spec` is merged over it. */
export function inferenceService(name: string, namespace: string, spec: Partial<InferenceService['spec']> = {}, metadata: Record<string, unknown> = {}): InferenceService {
  return {
    apiVersion: 'inference.olmpub.dev/v1',
    kind: 'InferenceService',
    metadata: { name, namespace, ...metadata },
    spec: {
      model: { name: `${name}-model`, storageUri: `hf://olmpub/${name}` },
      runtime: { image: 'registry.example/vllm:1.0' },
      resources: { gpu: { count: 0 } },
      ...spec,
    },
  } as InferenceService;
}

export type Deployment = KubeObject & {
  spec?: { replicas?: number; template?: { spec?: { containers?: { name: string; image?: string }[]; nodeSelector?: Record<string, string> } } };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
};

export type EventObject = KubeObject & { type?: string; reason?: string; note?: string; action?: string; regarding?: { name?: string; kind?: string; uid?: string }; reportingController?: string };

/** events.k8s.io/v1 Events about one object (by name, optionally uid). */
export async function eventsFor(c: KubeClient, ns: string, name: string, uid?: string): Promise<EventObject[]> {
  const list = await c.list<EventObject>(EVENT, { namespace: ns });
  return list.items.filter((e) => e.regarding?.kind === 'InferenceService' && e.regarding.name === name && (!uid || e.regarding.uid === uid));
}

export function condition(isvc: InferenceService | undefined, type: string) {
  return isvc?.status?.conditions?.find((c) => c.type === type);
}

// ---------------------------------------------------------------------------------------------
// the operator in-process

export interface InProcessOperator {
  operator: Operator;
  client: KubeClient;
  stop(): Promise<void>;
  logs: string[];
}

/**
 * Runs the operator in this process with its own client (so `client.writes` counts only the
 * operator's requests), servers on 127.0.0.1 with free ports, leader election off unless the flags
 * say otherwise.
 */
export async function startInProcess(
  flags: FlagValues,
  kubeconfigPath = testenv('KUBECONFIG'),
  beforeStart?: (client: KubeClient) => void,
  overrides: Partial<OperatorConfig> = {},
): Promise<InProcessOperator> {
  const config = { ...parseOperatorConfig({ 'health-probe-bind-address': '127.0.0.1:0', 'metrics-bind-address': '0', 'webhook-bind-address': '0', ...flags }, {}), ...overrides };
  const client = kube(kubeconfigPath);
  beforeStart?.(client);
  const logs: string[] = [];
  const logger = new Logger({ level: 'debug', sink: (line) => logs.push(line) });
  const operator = await createOperator(config, { client, logger, onLeadershipLost: () => logs.push('{"msg":"leadership lost (test)"}') });
  const ctrl = new AbortController();
  const done = operator.start(ctrl.signal);
  let failed: Error | undefined;
  done.catch((err: Error) => (failed = err));
  await eventually('the in-process operator to be ready', async () => {
    if (failed) throw failed;
    const port = operator.manager.probes.port;
    return port !== undefined && (await httpGet(port, '/readyz')).status === 200;
  }, 120_000);
  return {
    operator,
    client,
    logs,
    async stop() {
      ctrl.abort();
      await done.catch(() => undefined);
      await client.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the operator as a child process

export interface LogLine {
  ts?: string;
  level?: string;
  logger?: string;
  msg?: string;
  [key: string]: unknown;
}

export class OperatorProcess {
  readonly lines: LogLine[] = [];
  /** stderr lines that were not JSON (should stay empty). */
  readonly garbage: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitCode?: number | null;
  private buffer = '';

  constructor(readonly child: ChildProcess, readonly name: string) {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (!line.trim()) continue;
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          this.garbage.push(line);
        }
      }
    });
    child.stdout!.resume();
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exitCode = code;
        resolve({ code, signal });
      }),
    );
  }

  find(pred: (l: LogLine) => boolean): LogLine | undefined {
    return this.lines.find(pred);
  }

  /** The port a server logged it bound (`serving metrics`, `serving webhooks`, `starting health probe server`). */
  async port(msg: string): Promise<number> {
    const line = await eventually(`${this.name} to log "${msg}"`, async () => {
      if (this.exitCode !== undefined) throw new Error(`${this.name} exited with ${this.exitCode}: ${this.tail()}`);
      return this.find((l) => l.msg === msg && typeof l.address === 'string');
    }, 60_000);
    return Number(String(line.address).split(':').pop());
  }

  get identity(): string | undefined {
    return this.find((l) => l.msg === 'starting the operator')?.identity as string | undefined;
  }

  tail(n = 15): string {
    return [...this.lines.slice(-n).map((l) => JSON.stringify(l)), ...this.garbage.slice(-5)].join('\n');
  }

  kill(signal: NodeJS.Signals): void {
    if (this.exitCode === undefined) this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.exitCode !== undefined) return this.exited;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    const out = await this.exited;
    clearTimeout(timer);
    return out;
  }
}

/** `node bin/olmpub.js operator run ARGS` with the environment's kubeconfig; servers on 127.0.0.1:0. */
export function spawnOperator(name: string, args: string[], options: { kubeconfig?: string; env?: NodeJS.ProcessEnv } = {}): OperatorProcess {
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin/olmpub.js'),
      'operator',
      'run',
      '--kubeconfig',
      options.kubeconfig ?? testenv('KUBECONFIG'),
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--metrics-bind-address',
      '127.0.0.1:0',
      ...args,
    ],
    { cwd: REPO_ROOT, env: { ...process.env, KUBECONFIG: '', WATCH_NAMESPACE: '', LOG_LEVEL: '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new OperatorProcess(child, name);
}

// ---------------------------------------------------------------------------------------------
// HTTP, TLS and tokens

export function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      })
      .on('error', reject);
  });
}

/** GET over HTTPS (the metrics server's self-signed certificate is not verified). */
export function httpsGet(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, agent: false, timeout: 10_000, headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** A serving certificate for 127.0.0.1 (IP SAN) in a fresh directory; the certificate is its own CA. */
export function webhookCertDir(): { dir: string; caBundle: string } {
  const dir = mkdtempSync(join(tmpdir(), 'olmpub-operator-certs-'));
  const pair = generateSelfSigned({ commonName: 'olmpub-webhook', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key, { mode: 0o600 });
  return { dir, caBundle: Buffer.from(pair.cert).toString('base64') };
}

/** A ServiceAccount token from the TokenRequest API. */
export async function serviceAccountToken(c: KubeClient, ns: string, sa: string): Promise<string> {
  const out = await c.requestJSON<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return out.status.token;
}

/** A ServiceAccount allowed to GET /metrics (ClusterRole + binding named `name`); returns its token. */
export async function metricsReader(c: KubeClient, ns: string, name: string): Promise<string> {
  await c.create({ ...SA, metadata: { name: 'prometheus', namespace: ns } });
  await c.create({ ...CLUSTER_ROLE, metadata: { name }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } as KubeObject);
  await c.create({
    ...CLUSTER_ROLE_BINDING,
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }],
  } as KubeObject);
  return serviceAccountToken(c, ns, 'prometheus');
}

export async function removeMetricsReader(c: KubeClient, name: string): Promise<void> {
  await c.delete(CLUSTER_ROLE_BINDING, name, undefined, { ignoreNotFound: true });
  await c.delete(CLUSTER_ROLE, name, undefined, { ignoreNotFound: true });
}

/** The value of a metric sample (first match), or undefined. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as import('node:net').AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
