/**
 * The webhook server (controller-runtime pkg/webhook): HTTPS on :9443, certificate `tls.crt`/`tls.key`
 * from a directory (default `<tmp>/k8s-webhook-server/serving-certs`, as controller-runtime) reloaded
 * when the files change, JSON handlers routed by exact path (admission: admission.ts; conversion:
 * conversion.ts), and the webhook metrics (requests_total{webhook,code}, latency_seconds{webhook},
 * requests_in_flight{webhook}; the `webhook` label is the path).
 */
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import type { Checker } from '../healthz.js';
import { silentLogger, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics/registry.js';
import { listen, parseBindAddress, type BoundServer } from '../net.js';
import type { CertWatcher } from '../tls/certwatcher.js';
import { createSecureServer, type ServingCertOptions } from '../tls/serving.js';

/** Takes the decoded JSON body, returns the JSON answer; throw WebhookBadRequest for a body that is not a review (HTTP 400). */
export type WebhookHandler = (body: unknown, req: http.IncomingMessage) => unknown | Promise<unknown>;

/** The body is JSON but not the review the handler expects: answered with HTTP 400 and the message. */
export class WebhookBadRequest extends Error {
  override readonly name = 'WebhookBadRequest';
}

export const DEFAULT_WEBHOOK_CERT_DIR = join(tmpdir(), 'k8s-webhook-server', 'serving-certs');

export interface WebhookServerOptions extends ServingCertOptions {
  /** `host:port` or `:port`. Default `:9443`. */
  bindAddress?: string;
  /** Generate a self-signed certificate instead of reading certDir (tests, local runs). */
  selfSigned?: boolean;
  /** Largest accepted body. Default 7 MiB (the apiserver's request limit is 3 MiB of object, reviews carry two). */
  maxBodyBytes?: number;
  logger?: Logger;
  metrics?: RuntimeMetrics;
}

export class WebhookServer {
  private readonly handlers = new Map<string, WebhookHandler>();
  private bound?: BoundServer;
  private watcher?: CertWatcher;
  /** The serving certificate in service at start (PEM). */
  certificate?: string;
  private readonly log: Logger;

  constructor(private readonly options: WebhookServerOptions = {}) {
    this.log = (options.logger ?? silentLogger).child('webhook');
  }

  /** Routes a path (e.g. `/validate-inference-olmpub-dev-v1-inferenceservice`, `/convert`) to a handler. */
  register(path: string, handler: WebhookHandler): void {
    if (!path.startsWith('/')) throw new Error(`webhook path ${path} must start with /`);
    if (this.handlers.has(path)) throw new Error(`a webhook is already registered at ${path}`);
    this.handlers.set(path, handler);
    this.options.metrics?.webhookInFlight.set({ webhook: path }, 0);
  }

  get paths(): string[] {
    return [...this.handlers.keys()].sort();
  }

  get port(): number | undefined {
    return this.bound?.port;
  }

  get address(): string | undefined {
    return this.bound?.address;
  }

  /** Reloads so far (certificate rotation). */
  get certificateReloads(): number {
    return this.watcher?.reloads ?? 0;
  }

  async start(): Promise<void> {
    if (this.bound) return;
    const certDir = this.options.selfSigned ? undefined : (this.options.certDir ?? DEFAULT_WEBHOOK_CERT_DIR);
    const secure = await createSecureServer({ ...this.options, certDir }, (req, res) => void this.serve(req, res), {
      logger: this.options.logger,
      metrics: this.options.metrics,
    });
    this.watcher = secure.watcher;
    this.certificate = secure.certificate;
    this.bound = await listen(secure.server, this.options.bindAddress ?? ':9443');
    this.log.info('serving webhooks', { address: this.bound.address, paths: this.paths });
  }

  async stop(): Promise<void> {
    this.watcher?.stop();
    await this.bound?.close();
    this.bound = undefined;
  }

  /** A readiness check that passes once the server accepts TLS connections (controller-runtime's StartedChecker). */
  startedChecker(): Checker {
    return () =>
      new Promise<void>((resolve, reject) => {
        if (!this.bound) return reject(new Error('webhook server has not been started yet'));
        const { host } = parseBindAddress(this.options.bindAddress ?? ':9443');
        const socket = tls.connect({ host: host || '127.0.0.1', port: this.bound.port, rejectUnauthorized: false, timeout: 10_000 }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', (err) => reject(new Error(`webhook server is not reachable: ${err.message}`)));
        socket.on('timeout', () => {
          socket.destroy();
          reject(new Error('webhook server is not reachable: timeout'));
        });
      });
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const handler = this.handlers.get(path);
    if (!handler) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    const m = this.options.metrics;
    const started = process.hrtime.bigint();
    m?.webhookInFlight.inc({ webhook: path });
    let code = 200;
    try {
      if (req.method !== 'POST') {
        code = 405;
        res.writeHead(code, { Allow: 'POST' }).end('method not allowed\n');
        return;
      }
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (type !== 'application/json') {
        code = 400;
        res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`contentType=${type}, expected application/json\n`);
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, this.options.maxBodyBytes ?? 7 * 1024 * 1024));
      } catch (err) {
        code = 400;
        res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`unable to decode the request: ${(err as Error).message}\n`);
        return;
      }
      let answer: unknown;
      try {
        answer = await handler(body, req);
      } catch (err) {
        const bad = err instanceof WebhookBadRequest;
        code = bad ? 400 : 500;
        if (!bad) this.log.error('webhook handler failed', { webhook: path, err: err as Error });
        res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${bad ? 'bad request' : 'internal error'}: ${(err as Error).message}\n`);
        return;
      }
      res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    } finally {
      m?.webhookInFlight.dec({ webhook: path });
      m?.webhookRequests.inc({ webhook: path, code: String(code) });
      m?.webhookLatency.observe({ webhook: path }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }
}

function readBody(req: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        reject(new Error(`request body larger than ${max} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
