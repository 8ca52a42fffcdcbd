/**
 * A small HTTP proxy in front of a REAL registry that injects faults (errors, Retry-After, dropped
 * connections, stalls) on chosen requests. It never answers registry calls itself except for the
 * injected faults; everything else is forwarded byte for byte.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  /** Answer with this status (and headers) instead of forwarding. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; errorCode?: string }
  /** Read `afterBytes` of the request body, then drop the connection without forwarding anything. */
  | { kind: 'drop-before-forward'; afterBytes: number }
  /** Forward `afterBytes` of the request body, then drop both connections. */
  | { kind: 'drop-mid-forward'; afterBytes: number }
  /** Never answer (the client must time out). */
  | { kind: 'stall' }
  /** Answer with a redirect to `location` (absolute URL). */
  | { kind: 'redirect'; location: string };

export interface SeenRequest {
  method: string;
  path: string;
  /** Whether the request carried an Authorization header (never its value). */
  authorized: boolean;
  contentRange?: string;
  fault?: Fault['kind'];
}

export class FaultProxy {
  readonly seen: SeenRequest[] = [];
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  /** Decides, per request, whether to inject a fault (undefined: forward). */
  rule: (req: IncomingMessage, index: number) => Fault | undefined = () => undefined;

  constructor(private readonly target: string) {}

  async start(host = '127.0.0.1'): Promise<string> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    return `${host === '127.0.0.1' ? '127.0.0.1' : host}:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const index = this.seen.length;
    const fault = this.rule(req, index);
    this.seen.push({
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0]!,
      authorized: req.headers.authorization !== undefined,
      ...(req.headers['content-range'] ? { contentRange: String(req.headers['content-range']) } : {}),
      ...(fault ? { fault: fault.kind } : {}),
    });
    if (fault?.kind === 'status') {
      req.resume();
      req.on('end', () => {
        res.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers });
        res.end(JSON.stringify({ errors: [{ code: fault.errorCode ?? 'INJECTED', message: `injected ${fault.status}` }] }));
      });
      return;
    }
    if (fault?.kind === 'redirect') {
      req.resume();
      res.writeHead(307, { Location: fault.location });
      res.end();
      return;
    }
    if (fault?.kind === 'stall') {
      req.resume();
      return;
    }
    if (fault?.kind === 'drop-before-forward') {
      let n = 0;
      req.on('data', (c: Buffer) => {
        n += c.length;
        if (n >= fault.afterBytes) req.socket.destroy();
      });
      req.on('end', () => req.socket.destroy());
      return;
    }
    const upstream = http.request(
      { host: this.target.split(':')[0], port: Number(this.target.split(':')[1]), method: req.method, path: req.url, headers: { ...req.headers } },
      (up) => {
        // Location headers pointing at the registry are rewritten to stay on the proxy.
        const headers = { ...up.headers };
        res.writeHead(up.statusCode ?? 502, headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    if (fault?.kind === 'drop-mid-forward') {
      let n = 0;
      req.on('data', (c: Buffer) => {
        const take = Math.min(c.length, fault.afterBytes - n);
        if (take > 0) upstream.write(c.subarray(0, take));
        n += c.length;
        if (n >= fault.afterBytes) {
          // Give the registry the partial body, then cut both sides.
          setImmediate(() => {
            upstream.destroy();
            req.socket.destroy();
          });
        }
      });
      return;
    }
    req.pipe(upstream);
  }
}
