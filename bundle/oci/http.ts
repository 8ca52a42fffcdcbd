/**
 * One HTTP exchange over node:http/https, streaming in both directions: bodies are opened lazily (so a
 * request can be sent again), responses are handed back unread. Timeouts are idle timeouts on the socket.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

/** A request body: bytes in memory (rewindable) or a stream factory with its length. */
export type RequestBody = Uint8Array | { length: number; open: () => Promise<Readable>; onBytes?: (n: number) => void };

export interface HttpRequest {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: RequestBody;
  /** Idle timeout on the socket in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
  url: URL;
}

/** A failure below HTTP: refused, reset, timed out, TLS. */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly code: string,
    /** Whether retrying may help (resets and timeouts; not refused connections or unknown hosts). */
    readonly transient: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

const TRANSIENT = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);

export function toNetworkError(err: unknown, what: string): NetworkError {
  if (err instanceof NetworkError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e?.code ?? (/socket hang up/.test(e?.message ?? '') ? 'ECONNRESET' : 'EUNKNOWN');
  return new NetworkError(`${what}: ${e?.message ?? String(err)}`, code, TRANSIENT.has(code), { cause: err });
}

export class HttpTransport {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private readonly httpsAgent: https.Agent;

  constructor(options: { ca?: string | Buffer; userAgent?: string } = {}) {
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 16, ...(options.ca ? { ca: options.ca } : {}) });
    this.userAgent = options.userAgent ?? 'olmpub';
  }
  private readonly userAgent: string;

  /** Sends one request; rejects with NetworkError below HTTP, resolves with any HTTP status. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const isHttps = req.url.protocol === 'https:';
    const mod = isHttps ? https : http;
    const headers: Record<string, string> = { 'User-Agent': this.userAgent, ...req.headers };
    let bodyStream: Readable | undefined;
    let bodyBytes: Uint8Array | undefined;
    if (req.body instanceof Uint8Array) {
      bodyBytes = req.body;
      headers['Content-Length'] = String(req.body.length);
    } else if (req.body) {
      headers['Content-Length'] = String(req.body.length);
      bodyStream = await req.body.open();
    } else if (req.method === 'PUT' || req.method === 'POST' || req.method === 'PATCH') {
      headers['Content-Length'] ??= '0';
    }
    const what = `${req.method} ${redactUrl(req.url)}`;
    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        bodyStream?.destroy();
        // A failure of the body's own source (e.g. its digest check) is reported as it is.
        reject(err instanceof Error && err.name === 'OlmpubError' ? err : toNetworkError(err, what));
      };
      const r = mod.request(
        req.url,
        { method: req.method, headers, agent: isHttps ? this.httpsAgent : this.httpAgent, ...(req.signal ? { signal: req.signal } : {}) },
        (res) => {
          if (settled) {
            res.destroy();
            return;
          }
          settled = true;
          res.setTimeout(req.timeoutMs, () => res.destroy(new NetworkError(`${what}: no data for ${req.timeoutMs} ms`, 'ETIMEDOUT', true)));
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res, url: req.url });
        },
      );
      r.setTimeout(req.timeoutMs, () => r.destroy(new NetworkError(`${what}: no answer for ${req.timeoutMs} ms`, 'ETIMEDOUT', true)));
      r.on('error', fail);
      if (bodyBytes) r.end(bodyBytes);
      else if (bodyStream) {
        const body = req.body as { onBytes?: (n: number) => void };
        bodyStream.on('error', (err) => {
          fail(err);
          r.destroy();
        });
        if (body.onBytes) bodyStream.on('data', (chunk: Buffer) => body.onBytes!(chunk.length));
        bodyStream.pipe(r);
      } else r.end();
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** A URL fit for messages: no query (upload state, signatures) and no userinfo. */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search ? '?…' : ''}`;
}

/** Reads a response body up to `limit` bytes. */
export async function readBody(res: HttpResponse, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of res.body) {
    n += (chunk as Buffer).length;
    if (n > limit) {
      res.body.destroy();
      throw new NetworkError(`${redactUrl(res.url)}: response larger than ${limit} bytes`, 'ETOOBIG', false);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Drains and discards a body so the connection can be reused. */
export async function discard(res: HttpResponse): Promise<void> {
  try {
    for await (const _ of res.body) void _;
  } catch {
    /* the connection is gone; nothing to reuse */
  }
}

export const header = (res: HttpResponse, name: string): string | undefined => {
  const v = res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};
