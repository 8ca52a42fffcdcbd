/**
 * The metrics endpoint: `/metrics` over HTTPS on `:8443` by default, behind TokenReview +
 * SubjectAccessReview (DelegatingAuth), as kubebuilder scaffolds controller-runtime's server.
 * `secure: false` serves plain HTTP (then usually with `auth: false`, e.g. behind a sidecar).
 * Extra handlers (e.g. `/debug`) sit behind the same filter.
 */
import http from 'node:http';
import type { KubeClient } from '../kube/client.js';
import { silentLogger, type Logger } from '../log.js';
import { listen, type BoundServer } from '../net.js';
import { createSecureServer, type ServingCertOptions } from '../tls/serving.js';
import type { CertWatcher } from '../tls/certwatcher.js';
import { DelegatingAuth, type DelegatingAuthOptions } from './auth.js';
import type { RuntimeMetrics } from './registry.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface MetricsServerOptions extends ServingCertOptions {
  /** `host:port`, `:port`, or `0` to disable. Default `:8443`. */
  bindAddress?: string;
  /** HTTPS (default true). */
  secure?: boolean;
  /** Authenticate and authorise scrapes with the apiserver (default true; needs `client`). */
  auth?: boolean;
  authOptions?: DelegatingAuthOptions;
  /** Used for the reviews. */
  client?: KubeClient;
  /** Extra paths served next to /metrics, behind the same filter. */
  extraHandlers?: Record<string, Handler>;
  logger?: Logger;
}

export class MetricsServer {
  readonly auth?: DelegatingAuth;
  private bound?: BoundServer;
  private watcher?: CertWatcher;
  /** The serving certificate (PEM) once started with TLS. */
  certificate?: string;
  private readonly log: Logger;

  constructor(
    private readonly metrics: RuntimeMetrics,
    private readonly options: MetricsServerOptions = {},
  ) {
    this.log = (options.logger ?? silentLogger).child('metrics');
    if (options.auth ?? true) {
      if (!options.client) throw new Error('the metrics server needs a client for TokenReview/SubjectAccessReview (or auth: false)');
      this.auth = new DelegatingAuth(options.client, { logger: options.logger, ...options.authOptions });
    }
  }

  get address(): string | undefined {
    return this.bound?.address;
  }

  get port(): number | undefined {
    return this.bound?.port;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const extra = this.options.extraHandlers?.[path];
    if (path !== '/metrics' && !extra) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    if (this.auth) {
      const decision = await this.auth.check(req.method ?? 'GET', path, req.headers.authorization);
      if (decision.status !== 200) {
        res.writeHead(decision.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end(`${decision.message}\n`);
        return;
      }
    }
    if (extra) {
      await extra(req, res);
      return;
    }
    const body = await this.metrics.text();
    res.writeHead(200, { 'Content-Type': this.metrics.contentType }).end(body);
  }

  async start(): Promise<void> {
    const bind = this.options.bindAddress ?? ':8443';
    if (bind === '0' || this.bound) return;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      this.handle(req, res).catch((err) => {
        this.log.error('metrics handler failed', { err: err as Error });
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    };
    let server: http.Server;
    if (this.options.secure ?? true) {
      const secure = await createSecureServer(this.options, handler, { logger: this.options.logger, metrics: this.metrics });
      server = secure.server;
      this.watcher = secure.watcher;
      this.certificate = secure.certificate;
    } else {
      server = http.createServer(handler);
    }
    this.bound = await listen(server, bind);
    this.log.info('serving metrics', { address: this.bound.address, secure: this.options.secure ?? true });
  }

  async stop(): Promise<void> {
    this.watcher?.stop();
    await this.bound?.close();
    this.bound = undefined;
  }
}
