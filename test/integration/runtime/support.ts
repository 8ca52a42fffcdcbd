/**
 * Shared helpers of the runtime integration tests: clients on the real test apiserver, throwaway
 * namespaces, and a TCP proxy in front of the apiserver that can cut or black-hole connections
 * (a network fault injector; the apiserver behind it is the real one).
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions } from '../../../operator/runtime/kube/client.js';
import { testenv } from '../../support/env.js';

export function kubeConfig(server?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(testenv('KUBECONFIG'));
  if (server) {
    const name = kc.getCurrentCluster()!.name;
    kc.clusters = kc.clusters.map((c) => (c.name === name ? { ...c, server } : c));
  }
  return kc;
}

export function client(options: Omit<KubeClientOptions, 'kubeConfig'> & { server?: string } = {}): KubeClient {
  return new KubeClient({ ...options, kubeConfig: kubeConfig(options.server) });
}

export const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;
export const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

/** Creates a namespace named `<prefix>-<random>`. */
export async function createNamespace(c: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await c.create({ ...NS, metadata: { name, labels: { 'olmpub.dev/test': 'runtime' } } });
  return name;
}

export async function deleteNamespace(c: KubeClient, name: string): Promise<void> {
  await c.delete(NS, name, undefined, { ignoreNotFound: true });
}

/** A TCP proxy to the apiserver that can cut all connections or silently stop forwarding. */
export class FaultyProxy {
  private server?: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  /** 'up': forward; 'reset': drop every connection at once; 'blackhole': accept and keep, forward nothing. */
  mode: 'up' | 'reset' | 'blackhole' = 'up';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  static forApiserver(): FaultyProxy {
    const u = new URL(testenv('APISERVER'));
    return new FaultyProxy({ host: u.hostname, port: Number(u.port) });
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  start(): Promise<void> {
    this.server = net.createServer((inbound) => {
      if (this.mode === 'reset') {
        inbound.resetAndDestroy();
        return;
      }
      const outbound = net.connect(this.target);
      const pair: [net.Socket, net.Socket] = [inbound, outbound];
      this.pairs.add(pair);
      const forward = (from: net.Socket, to: net.Socket) =>
        from.on('data', (d) => {
          if (this.mode === 'up') to.write(d);
        });
      forward(inbound, outbound);
      forward(outbound, inbound);
      const close = () => {
        this.pairs.delete(pair);
        inbound.destroy();
        outbound.destroy();
      };
      inbound.on('close', close).on('error', close);
      outbound.on('close', close).on('error', close);
    });
    return new Promise((resolve) =>
      this.server!.listen(0, '127.0.0.1', () => {
        this.port = (this.server!.address() as net.AddressInfo).port;
        resolve();
      }),
    );
  }

  /** Cuts every open connection (RST) and refuses to forward new ones until `up()`. */
  reset(): void {
    this.mode = 'reset';
    for (const [a, b] of this.pairs) {
      a.resetAndDestroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  /** Keeps connections open but forwards nothing (a half-open connection). */
  blackhole(): void {
    this.mode = 'blackhole';
  }

  up(): void {
    this.mode = 'up';
  }

  get connections(): number {
    return this.pairs.size;
  }

  async stop(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
