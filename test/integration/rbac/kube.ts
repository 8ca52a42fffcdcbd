/**
 * A minimal HTTPS client for the test apiserver: the admin credentials of a kubeconfig, optional
 * impersonation (Impersonate-User, as `kubectl --as` does), and REST paths for objects.
 */
import { readFileSync } from 'node:fs';
import { request, Agent } from 'node:https';
import YAML from 'yaml';
import type { KubeObject } from '../../../bundle/rbac/authorizer.js';
import type { PlacedObject } from '../../../bundle/rbac/installer.js';

export interface KubeResponse {
  status: number;
  body: Record<string, unknown>;
}

export class Kube {
  private readonly agent: Agent;

  constructor(
    readonly server: string,
    tls: { ca: Buffer; cert: Buffer; key: Buffer },
  ) {
    this.agent = new Agent({ ...tls, keepAlive: true, maxSockets: 4 });
  }

  static fromKubeconfig(path: string): Kube {
    const cfg = YAML.parse(readFileSync(path, 'utf8')) as {
      'current-context': string;
      contexts: { name: string; context: { cluster: string; user: string } }[];
      clusters: { name: string; cluster: Record<string, string> }[];
      users: { name: string; user: Record<string, string> }[];
    };
    const ctx = cfg.contexts.find((c) => c.name === cfg['current-context'])!.context;
    const cluster = cfg.clusters.find((c) => c.name === ctx.cluster)!.cluster;
    const user = cfg.users.find((u) => u.name === ctx.user)!.user;
    const read = (data: string | undefined, file: string | undefined) => (data ? Buffer.from(data, 'base64') : readFileSync(file!));
    return new Kube(cluster.server!, {
      ca: read(cluster['certificate-authority-data'], cluster['certificate-authority']),
      cert: read(user['client-certificate-data'], user['client-certificate']),
      key: read(user['client-key-data'], user['client-key']),
    });
  }

  /**
   * One request. `as` impersonates a user name (the apiserver adds a ServiceAccount's groups itself).
   * `headersOnly` resolves as soon as the status is known (for watches).
   */
  request(
    method: string,
    path: string,
    options: { body?: unknown; as?: string; contentType?: string; headersOnly?: boolean } = {},
  ): Promise<KubeResponse> {
    const url = new URL(path, this.server);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) headers['content-type'] = options.contentType ?? 'application/json';
    if (options.as) headers['impersonate-user'] = options.as;
    return new Promise((resolve, reject) => {
      const req = request(url, { method, agent: this.agent, headers, timeout: 30_000 }, (res) => {
        if (options.headersOnly) {
          resolve({ status: res.statusCode ?? 0, body: {} });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            body = { raw: text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** Like `request`, but throws unless the status is one of `ok`. */
  async must(method: string, path: string, ok: number[], options: Parameters<Kube['request']>[2] = {}): Promise<KubeResponse> {
    const res = await this.request(method, path, options);
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}${options.as ? ` as ${options.as}` : ''}: HTTP ${res.status} ${String(res.body.message ?? '')}`);
    return res;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function apiBase(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export function collectionPath(p: Pick<PlacedObject, 'object' | 'resource' | 'namespace'>): string {
  return `${apiBase(p.object.apiVersion ?? 'v1')}${p.namespace ? `/namespaces/${p.namespace}` : ''}/${p.resource}`;
}

export function objectPath(p: PlacedObject): string {
  return `${collectionPath(p)}/${p.name}`;
}

/** The object with the namespace it is placed in. */
export const placedBody = (p: PlacedObject): KubeObject => ({ ...p.object, metadata: { ...p.object.metadata, ...(p.namespace ? { namespace: p.namespace } : {}) } });
