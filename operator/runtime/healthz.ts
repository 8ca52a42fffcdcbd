/**
 * Liveness and readiness probes with controller-runtime's shapes (pkg/healthz): `/healthz` and
 * `/readyz` run every named check; `/healthz/<name>` one check; `?verbose` lists `[+]name ok` lines;
 * `?exclude=name` (repeatable) skips checks; a failure answers 500 with the per-check lines and
 * "healthz check failed" (reasons withheld, as upstream: the endpoint is public). With no checks a
 * `ping` check is installed. The server binds `:8081` by default (kubebuilder's scaffold).
 */
import http from 'node:http';
import { silentLogger, type Logger } from './log.js';
import { listen, type BoundServer } from './net.js';

/** A check passes by returning, fails by throwing (or returning false / an Error). */
export type Checker = (req?: http.IncomingMessage) => void | boolean | Error | Promise<void | boolean | Error>;

export interface ProbeResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

async function runCheck(check: Checker, req?: http.IncomingMessage): Promise<Error | undefined> {
  try {
    const r = await check(req);
    if (r === false) return new Error('check returned false');
    if (r instanceof Error) return r;
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The aggregated endpoint (pure apart from the checks themselves). */
export async function evaluateChecks(checks: Map<string, Checker>, query: URLSearchParams, req?: http.IncomingMessage, log: Logger = silentLogger): Promise<ProbeResponse> {
  const excluded = new Set(query.getAll('exclude').flatMap((v) => v.split(',')).filter(Boolean));
  let failed = false;
  const lines: string[] = [];
  for (const [name, check] of checks) {
    if (excluded.has(name)) {
      excluded.delete(name);
      lines.push(`[+]${name} excluded: ok`);
      continue;
    }
    const err = await runCheck(check, req);
    if (err) {
      log.debug('healthz check failed', { checker: name, err });
      lines.push(`[-]${name} failed: reason withheld`);
      failed = true;
    } else {
      lines.push(`[+]${name} ok`);
    }
  }
  if (excluded.size > 0) {
    lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].sort().map((n) => JSON.stringify(n)).join(',')}`);
  }
  const verboseOut = lines.map((l) => l + '\n').join('');
  const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
  if (failed) return { status: 500, body: `${verboseOut}healthz check failed\n`, headers };
  if (!query.has('verbose')) return { status: 200, body: 'ok', headers };
  return { status: 200, body: `${verboseOut}healthz check passed\n`, headers };
}

/** One named check at `/healthz/<name>`. */
export async function evaluateOne(check: Checker, req?: http.IncomingMessage): Promise<ProbeResponse> {
  const err = await runCheck(check, req);
  const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
  return err ? { status: 500, body: `internal server error: ${err.message}\n`, headers } : { status: 200, body: 'ok', headers };
}

export const ping: Checker = () => undefined;

export interface HealthProbeServerOptions {
  /** `host:port`, `:port` (all interfaces), or `0` to disable. Default `:8081`. */
  bindAddress?: string;
  logger?: Logger;
}

export class HealthProbes {
  readonly healthz = new Map<string, Checker>();
  readonly readyz = new Map<string, Checker>();
  private server?: BoundServer;
  private readonly log: Logger;

  constructor(private readonly options: HealthProbeServerOptions = {}) {
    this.log = (options.logger ?? silentLogger).child('healthz');
  }

  addHealthzCheck(name: string, check: Checker): void {
    add(this.healthz, name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    add(this.readyz, name, check);
  }

  /** Answers one probe request (the server's handler; usable without a server). */
  async handle(method: string, url: string, req?: http.IncomingMessage): Promise<ProbeResponse> {
    const u = new URL(url, 'http://probe');
    const text = { 'Content-Type': 'text/plain; charset=utf-8' };
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, body: 'method not allowed\n', headers: text };
    const m = /^\/(healthz|readyz)(?:\/([^/]+))?\/?$/.exec(u.pathname);
    if (!m) return { status: 404, body: '404 page not found\n', headers: text };
    const checks = m[1] === 'healthz' ? this.healthz : this.readyz;
    const effective = checks.size ? checks : new Map([['ping', ping]]);
    if (m[2]) {
      const check = effective.get(decodeURIComponent(m[2]));
      if (!check) return { status: 404, body: '404 page not found\n', headers: text };
      return evaluateOne(check, req);
    }
    return evaluateChecks(effective, u.searchParams, req, this.log);
  }

  /** Starts the probe server (no-op when the bind address is `0`). */
  async start(): Promise<void> {
    const bind = this.options.bindAddress ?? ':8081';
    if (bind === '0' || this.server) return;
    const server = http.createServer((req, res) => {
      this.handle(req.method ?? 'GET', req.url ?? '/', req).then(
        (r) => {
          res.writeHead(r.status, r.headers);
          res.end(req.method === 'HEAD' ? undefined : r.body);
        },
        (err) => {
          this.log.error('probe handler failed', { err: err as Error });
          res.writeHead(500).end();
        },
      );
    });
    this.server = await listen(server, bind);
    this.log.info('starting health probe server', { address: this.server.address });
  }

  /** `host:port` actually bound (useful with port 0). */
  get address(): string | undefined {
    return this.server?.address;
  }

  get port(): number | undefined {
    return this.server?.port;
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}

function add(map: Map<string, Checker>, name: string, check: Checker): void {
  if (!/^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(name)) throw new Error(`invalid check name ${JSON.stringify(name)}`);
  if (map.has(name)) throw new Error(`a check named ${name} is already registered`);
  map.set(name, check);
}
