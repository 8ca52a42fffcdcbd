/**
 * A small Kubernetes client over node:https, using the kubeconfig that @kubernetes/client-node 1.4.0
 * loads (all its auth providers: tokens, client certs, exec, in-cluster token files that rotate).
 *
 * Why not client-node's own calls: its Watch and informer stop silently, and every call makes a new
 * https.Agent that is never destroyed (reference/operator.md §1.3). Here one keep-alive agent is
 * built once from the kubeconfig's TLS material and reused; authentication headers are taken fresh
 * from the kubeconfig for every request; errors carry the HTTP status and the parsed Status.
 *
 * Every request is counted: `writes` counts mutating requests by resource (so a test can prove that
 * a steady state writes nothing), and `onResponse` feeds rest_client_requests_total.
 */
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, type LoadKubeConfigOptions } from './config.js';
import { KubeApiError, KubeTransportError, isNotFound } from './errors.js';
import { RestMapper, resourceOfPath, resourcePath, type ResourceInfo } from './resources.js';
import type { ApiStatus, KubeList, KubeObject, TypeRef, WatchEvent } from './types.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  method?: string;
  /** Absolute API path, e.g. `/api/v1/namespaces/default/configmaps`. */
  path: string;
  query?: Query;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  /** Milliseconds until the request is abandoned. Default: the client's requestTimeoutMs; 0 = none. */
  timeoutMs?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ResponseInfo {
  method: string;
  /** `host:port` of the apiserver. */
  host: string;
  /** HTTP status as a string, or `<error>` when no response arrived (client-go's convention). */
  code: string;
  path: string;
}

export interface KubeClientOptions {
  /** Default: loadKubeConfig() (explicit path, KUBECONFIG, in-cluster, ~/.kube/config). */
  kubeConfig?: KubeConfig;
  /** Used only when kubeConfig is not given. */
  load?: LoadKubeConfigOptions;
  /** Default `olmpub-operator`. */
  userAgent?: string;
  /** Default 30 s per non-watch request. */
  requestTimeoutMs?: number;
  /** Called after every request (metrics). */
  onResponse?: (info: ResponseInfo) => void;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side timeout; the server ends the stream cleanly after it. */
  timeoutSeconds?: number;
  /** Abort the watch when no bytes arrive for this long (a half-open connection). Default: none. */
  inactivityTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ApplyOptions {
  /** Required by server-side apply: who owns the fields. */
  fieldManager: string;
  /** Take ownership of conflicting fields. Default true (controllers own their objects). */
  force?: boolean;
  /** e.g. `status`. */
  subresource?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  /** Return undefined instead of throwing when the object is gone. */
  ignoreNotFound?: boolean;
  signal?: AbortSignal;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Creates of these are questions, not writes: they persist nothing. */
const REVIEWS = /^(tokenreviews\.authentication|selfsubjectreviews\.authentication|(local|self)?subjectaccessreviews\.authorization|selfsubjectrulesreviews\.authorization)\.k8s\.io$/;

/** Counts mutating requests by resource (`leases.coordination.k8s.io`, `configmaps`, `x.group/status`). */
export class WriteCounter {
  private readonly counts = new Map<string, number>();
  private reviewCount = 0;
  private listeners: ((resource: string, method: string) => void)[] = [];

  record(method: string, path: string): void {
    if (!MUTATING.has(method)) return;
    const resource = resourceOfPath(path) ?? path;
    if (REVIEWS.test(resource)) {
      this.reviewCount++;
      return;
    }
    this.counts.set(resource, (this.counts.get(resource) ?? 0) + 1);
    for (const l of this.listeners) l(resource, method);
  }

  /** All writes, or those whose resource passes the filter. */
  count(filter?: { include?: string[]; exclude?: string[] }): number {
    let n = 0;
    for (const [resource, c] of this.counts) {
      const base = resource.split('/')[0]!;
      if (filter?.include && !filter.include.includes(resource) && !filter.include.includes(base)) continue;
      if (filter?.exclude && (filter.exclude.includes(resource) || filter.exclude.includes(base))) continue;
      n += c;
    }
    return n;
  }

  get total(): number {
    return this.count();
  }

  /** TokenReviews and SubjectAccessReviews sent (not counted as writes). */
  get reviews(): number {
    return this.reviewCount;
  }

  byResource(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  onWrite(listener: (resource: string, method: string) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }
}

function buildQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.append(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: URL;
  readonly writes = new WriteCounter();
  readonly mapper: RestMapper;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private responseListeners: ((info: ResponseInfo) => void)[] = [];
  private agentPromise?: Promise<http.Agent>;
  private closed = false;

  constructor(options: KubeClientOptions = {}) {
    this.kubeConfig = options.kubeConfig ?? loadKubeConfig(options.load);
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.userAgent = options.userAgent ?? 'olmpub-operator';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    if (options.onResponse) this.responseListeners.push(options.onResponse);
    this.mapper = new RestMapper((path) => this.requestJSON({ path }));
  }

  /** Adds a listener called after every request (metrics); returns a function removing it. */
  addResponseListener(listener: (info: ResponseInfo) => void): () => void {
    this.responseListeners.push(listener);
    return () => {
      this.responseListeners = this.responseListeners.filter((l) => l !== listener);
    };
  }

  private onResponse(info: ResponseInfo): void {
    for (const l of this.responseListeners) l(info);
  }

  /** The namespace of the kubeconfig's current context (or undefined). */
  get contextNamespace(): string | undefined {
    const ctx = this.kubeConfig.getContextObject(this.kubeConfig.getCurrentContext());
    return ctx?.namespace || undefined;
  }

  /** Destroys the shared agent and its sockets (open watches end). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.agentPromise) (await this.agentPromise.catch(() => undefined))?.destroy();
  }

  private agent(): Promise<http.Agent> {
    this.agentPromise ??= (async () => {
      const tls: https.RequestOptions = {};
      await this.kubeConfig.applyToHTTPSOptions(tls);
      if (this.server.protocol === 'http:') return new http.Agent({ keepAlive: true });
      return new https.Agent({
        keepAlive: true,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        pfx: tls.pfx,
        passphrase: tls.passphrase,
        servername: tls.servername,
        ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
      });
    })();
    return this.agentPromise;
  }

  /** Fresh authentication headers (bearer token, rotated token file, exec plugin, basic auth). */
  private async authHeaders(): Promise<Record<string, string>> {
    const opts: https.RequestOptions = { headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return headers;
  }

  private fullPath(path: string, query?: Query): string {
    const prefix = this.server.pathname.replace(/\/+$/, '');
    return `${prefix}${path}${buildQuery(query)}`;
  }

  /**
   * Opens a request and resolves with the response head (status < 400 not checked here).
   * The caller consumes or destroys the response.
   */
  private async open(opts: RequestOptions, streaming: boolean): Promise<{ res: http.IncomingMessage; req: http.ClientRequest }> {
    if (this.closed) throw new KubeTransportError('client closed', opts.method ?? 'GET', opts.path);
    const method = (opts.method ?? 'GET').toUpperCase();
    const [agent, auth] = await Promise.all([this.agent(), this.authHeaders()]);
    let payload: Buffer | undefined;
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent, ...auth, ...opts.headers };
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const path = this.fullPath(opts.path, opts.query);
    const transport = this.server.protocol === 'http:' ? http : https;
    this.writes.record(method, opts.path);
    const host = this.server.host;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        cleanup();
        this.onResponse({ method, host, code: '<error>', path: opts.path });
        reject(err instanceof KubeApiError || err instanceof KubeTransportError ? err : new KubeTransportError(err.message, method, opts.path, err));
      };
      const req = transport.request({
        protocol: this.server.protocol,
        hostname: this.server.hostname.replace(/^\[|\]$/g, ''),
        port: this.server.port || (this.server.protocol === 'http:' ? 80 : 443),
        method,
        path,
        headers,
        agent,
      });
      const timeoutMs = opts.timeoutMs ?? (streaming ? 0 : this.requestTimeoutMs);
      const timer = timeoutMs > 0 ? setTimeout(() => req.destroy(new KubeTransportError(`no answer within ${timeoutMs} ms`, method, opts.path)), timeoutMs) : undefined;
      const onAbort = () => req.destroy(new KubeTransportError('aborted', method, opts.path));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      if (opts.signal?.aborted) {
        onAbort();
      }
      req.on('error', fail);
      req.on('response', (res) => {
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        this.onResponse({ method, host, code: String(res.statusCode ?? 0), path: opts.path });
        if (streaming) {
          // The caller owns the stream from now on; keep the abort wiring, drop the head timeout.
          if (timer) clearTimeout(timer);
          res.on('close', () => opts.signal?.removeEventListener('abort', onAbort));
        } else {
          res.on('close', cleanup);
        }
        resolve({ res, req });
      });
      req.end(payload);
    });
  }

  /** One request; throws KubeApiError for HTTP >= 400. */
  async request(opts: RequestOptions): Promise<RawResponse> {
    const method = (opts.method ?? 'GET').toUpperCase();
    const { res, req } = await this.open(opts, false);
    const body = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', (err) => reject(new KubeTransportError(err.message, method, opts.path, err)));
      res.on('close', () => {
        if (!res.complete) setImmediate(() => reject(new KubeTransportError('connection closed before the response ended', method, opts.path)));
      });
      req.on('error', (err) => reject(err instanceof KubeTransportError ? err : new KubeTransportError(err.message, method, opts.path, err)));
    });
    const status = res.statusCode ?? 0;
    if (status >= 400) throw KubeApiError.fromResponse(status, body, method, opts.path);
    return { status, headers: res.headers, body };
  }

  async requestJSON<T>(opts: RequestOptions): Promise<T> {
    const { body } = await this.request(opts);
    return (body ? JSON.parse(body) : undefined) as T;
  }

  /** Kind → resource (built-in table, then discovery). */
  resource(ref: TypeRef): Promise<ResourceInfo> {
    return this.mapper.resolve(ref);
  }

  private static refOf(obj: KubeObject): TypeRef {
    if (!obj.apiVersion || !obj.kind) throw new Error('the object needs apiVersion and kind');
    return { apiVersion: obj.apiVersion, kind: obj.kind };
  }

  private async objectPath(obj: KubeObject, subresource?: string, withName = true): Promise<string> {
    const info = await this.resource(KubeClient.refOf(obj));
    const name = obj.metadata?.name;
    if (withName && !name) throw new Error(`${obj.kind} needs metadata.name`);
    if (info.namespaced && !obj.metadata?.namespace) throw new Error(`${obj.kind} ${name ?? ''} is namespaced and needs metadata.namespace`);
    return resourcePath(info, obj.metadata?.namespace, withName ? name : undefined, subresource);
  }

  async get<T extends KubeObject>(ref: TypeRef, name: string, namespace?: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
    const info = await this.resource(ref);
    const obj = await this.requestJSON<T>({ path: resourcePath(info, namespace, name), signal: opts.signal, timeoutMs: opts.timeoutMs });
    return withType(obj, ref);
  }

  /** Like get, but undefined when the object does not exist. */
  async tryGet<T extends KubeObject>(ref: TypeRef, name: string, namespace?: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T | undefined> {
    try {
      return await this.get<T>(ref, name, namespace, opts);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One page. Items get apiVersion and kind (list responses omit them). */
  async list<T extends KubeObject>(ref: TypeRef, opts: ListOptions = {}): Promise<KubeList<T>> {
    const info = await this.resource(ref);
    const list = await this.requestJSON<KubeList<T>>({
      path: resourcePath(info, opts.namespace),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    list.items = (list.items ?? []).map((item) => withType(item, ref));
    list.metadata ??= {};
    return list;
  }

  /** All pages (limit/continue), resourceVersion of the last page. */
  async listAll<T extends KubeObject>(ref: TypeRef, opts: Omit<ListOptions, 'continue'> & { pageSize?: number } = {}): Promise<KubeList<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let last: KubeList<T>;
    do {
      last = await this.list<T>(ref, { ...opts, limit: opts.pageSize ?? opts.limit ?? 500, continue: token });
      items.push(...last.items);
      token = last.metadata.continue || undefined;
    } while (token);
    return { apiVersion: last.apiVersion, kind: last.kind, metadata: { resourceVersion: last.metadata.resourceVersion }, items };
  }

  async create<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const path = await this.objectPath(obj, undefined, false);
    const out = await this.requestJSON<T>({ method: 'POST', path, body: obj, query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager }, signal: opts.signal, timeoutMs: opts.timeoutMs });
    return withType(out, KubeClient.refOf(obj));
  }

  /** PUT: optimistic concurrency through metadata.resourceVersion (409 Conflict when stale). */
  async replace<T extends KubeObject>(obj: T, opts: WriteOptions & { subresource?: string } = {}): Promise<T> {
    const path = await this.objectPath(obj, opts.subresource);
    const out = await this.requestJSON<T>({ method: 'PUT', path, body: obj, query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager }, signal: opts.signal, timeoutMs: opts.timeoutMs });
    return withType(out, KubeClient.refOf(obj));
  }

  async patch<T extends KubeObject>(
    ref: TypeRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions & { subresource?: string; force?: boolean } = {},
  ): Promise<T> {
    const info = await this.resource(ref);
    const out = await this.requestJSON<T>({
      method: 'PATCH',
      path: resourcePath(info, namespace, name, opts.subresource),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager, force: opts.force },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return withType(out, ref);
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`; the JSON body is valid YAML). The object needs
   * apiVersion, kind, metadata.name (and namespace when namespaced). managedFields are stripped.
   */
  async apply<T extends KubeObject>(obj: T, opts: ApplyOptions): Promise<T> {
    if (!opts.fieldManager) throw new Error('server-side apply needs a fieldManager');
    const path = await this.objectPath(obj, opts.subresource);
    const body = { ...obj, metadata: { ...obj.metadata } };
    delete body.metadata.managedFields;
    const out = await this.requestJSON<T>({
      method: 'PATCH',
      path,
      body,
      contentType: PATCH_CONTENT_TYPES.apply,
      query: { fieldManager: opts.fieldManager, force: opts.force ?? true, dryRun: opts.dryRun ? 'All' : undefined },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return withType(out, KubeClient.refOf(obj));
  }

  /** Server-side apply of the status subresource. */
  applyStatus<T extends KubeObject>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T> {
    return this.apply(obj, { ...opts, subresource: 'status' });
  }

  async delete(ref: TypeRef, name: string, namespace?: string, opts: DeleteOptions = {}): Promise<KubeObject | ApiStatus | undefined> {
    const info = await this.resource(ref);
    const body =
      opts.propagationPolicy || opts.gracePeriodSeconds !== undefined || opts.preconditions
        ? { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: opts.propagationPolicy, gracePeriodSeconds: opts.gracePeriodSeconds, preconditions: opts.preconditions }
        : undefined;
    try {
      return await this.requestJSON({ method: 'DELETE', path: resourcePath(info, namespace, name), body, query: { dryRun: opts.dryRun ? 'All' : undefined }, signal: opts.signal });
    } catch (err) {
      if (opts.ignoreNotFound && isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * A watch: resolves when the server ends the stream (its timeoutSeconds), or when `signal` aborts;
   * rejects on transport errors, a non-200 answer, an ERROR event (as KubeApiError: 410 → relist),
   * an unparsable line, a throwing `onEvent`, or the inactivity watchdog. BOOKMARKs are delivered.
   */
  async watch<T extends KubeObject>(ref: TypeRef, opts: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    const info = await this.resource(ref);
    const path = resourcePath(info, opts.namespace);
    const query: Query = {
      watch: 1,
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: opts.timeoutSeconds,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    const { res, req } = await this.open({ path, query, signal: opts.signal }, true);
    const status = res.statusCode ?? 0;
    if (status !== 200) {
      const body = await new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', () => resolve(''));
      });
      throw KubeApiError.fromResponse(status, body, 'GET', path);
    }
    await new Promise<void>((resolve, reject) => {
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      let finished = false;
      let watchdog: NodeJS.Timeout | undefined;
      const onAbort = () => finish();
      const finish = (err?: Error) => {
        if (finished) return;
        finished = true;
        if (watchdog) clearTimeout(watchdog);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) {
          req.destroy();
          res.destroy();
          reject(err);
        } else {
          resolve();
        }
      };
      const arm = () => {
        if (!opts.inactivityTimeoutMs) return;
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(() => finish(new KubeTransportError(`watch inactive for ${opts.inactivityTimeoutMs} ms`, 'GET', path)), opts.inactivityTimeoutMs);
      };
      const handleLine = (line: string) => {
        if (!line.trim()) return;
        let event: WatchEvent<T>;
        try {
          event = JSON.parse(line) as WatchEvent<T>;
        } catch {
          throw new KubeTransportError(`unparsable watch line (${line.length} bytes)`, 'GET', path);
        }
        if (event.type === 'ERROR') {
          const st = event.object as unknown as ApiStatus;
          const code = st.code ?? 500;
          throw new KubeApiError(code, st.reason || (code === 410 ? 'Expired' : 'InternalError'), `watch ${path}: ${st.message ?? 'error event'}`, 'GET', path, st);
        }
        if (event.type !== 'BOOKMARK') event.object = withType(event.object, ref);
        onEvent(event);
      };
      arm();
      res.on('data', (chunk: Buffer) => {
        if (finished) return;
        arm();
        buffer += decoder.write(chunk);
        let nl: number;
        try {
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            handleLine(line);
            if (finished) return;
          }
        } catch (err) {
          finish(err as Error);
        }
      });
      res.on('end', () => {
        try {
          handleLine(buffer + decoder.end());
          finish();
        } catch (err) {
          finish(err as Error);
        }
      });
      res.on('error', (err) => finish(opts.signal?.aborted ? undefined : new KubeTransportError(err.message, 'GET', path, err)));
      req.on('error', (err) => finish(opts.signal?.aborted ? undefined : err instanceof KubeTransportError ? err : new KubeTransportError(err.message, 'GET', path, err)));
      res.on('close', () => finish(opts.signal?.aborted || res.complete ? undefined : new KubeTransportError('watch connection closed', 'GET', path)));
      if (opts.signal?.aborted) finish();
      else opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function withType<T extends KubeObject>(obj: T, ref: TypeRef): T {
  if (obj && typeof obj === 'object' && (!obj.apiVersion || !obj.kind)) {
    obj.apiVersion ??= ref.apiVersion;
    obj.kind ??= ref.kind;
  }
  return obj;
}
