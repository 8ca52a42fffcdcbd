/**
 * A client of the OCI distribution spec (v1.1), behaving as oras-go does: HEAD before upload,
 * cross-repository mount, monolithic POST+PUT uploads, chunked PATCH uploads above a threshold (with
 * Content-Range, resumed from the upload's Range after a dropped connection), retries with backoff on
 * 408/429/5xx/timeouts, Basic and Bearer token auth (tokens cached per host and scope), credentials from
 * docker config.json. Authorization is only sent to the host it was obtained for; secrets never appear
 * in errors or in the request log. HTTPS unless `plainHttp` is asked for.
 */
import { Readable, Transform } from 'node:stream';
import { OlmpubError, environmentError, validationError } from '../../lib/errors.js';
import { cleanScopes, parseChallenge, parseTokenResponse, repositoryScope } from './auth.js';
import { MANIFEST_MEDIA_TYPES, MAX_MANIFEST_BYTES, isManifestOrIndex, type Descriptor } from './content.js';
import { type Credential, type CredentialProvider, dockerCredentials } from './credentials.js';
import { DigestStream, checkDigest, digestAlgorithm, digestOf, isDigest, verifyBytes } from './digest.js';
import { HttpTransport, NetworkError, discard, header, readBody, redactUrl, type HttpResponse, type RequestBody } from './http.js';
import { apiHost, parseReference, type RegistryReference } from './reference.js';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, retryDelay, systemClock, type Clock, type RetryPolicy } from './retry.js';
import type { BlobSource, PushBlobOptions, Store } from './store.js';

export interface RequestEvent {
  method: string;
  /** Scheme, host and path; never the query or credentials. */
  url: string;
  /** HTTP status, or 0 for a network failure. */
  status: number;
  /** 0 for the first try of this request, then 1, 2, … for retries. */
  attempt: number;
}

export interface RemoteOptions {
  /** Speak plain HTTP instead of HTTPS (default false: only when asked). */
  plainHttp?: boolean;
  /** Where credentials come from (default: docker config.json and its credential helpers). */
  credentials?: CredentialProvider;
  /** Retry policy (default: oras-go's, 5 retries, 250 ms × 2^n ±10 %, 200 ms–3 s). */
  retry?: Partial<RetryPolicy>;
  /** Clock for backoff waits (tests inject one). */
  clock?: Clock;
  /** Idle timeout of a request in ms (default 60000). */
  timeoutMs?: number;
  /** Blobs at least this large are uploaded in chunks (default 64 MiB). */
  chunkThreshold?: number;
  /** Size of a PATCH chunk (default 8 MiB; raised to the registry's OCI-Chunk-Min-Length). */
  chunkSize?: number;
  /** Extra CA certificates (PEM) for HTTPS registries. */
  ca?: string | Buffer;
  userAgent?: string;
  /** Called after every HTTP exchange, for debugging and tests; carries no secrets. */
  onRequest?: (event: RequestEvent) => void;
}

interface TokenEntry {
  token: string;
  expiresAt: number;
}

interface Exchange {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: RequestBody;
  /** Token scopes this request needs. */
  scopes: string[];
  /** Whether transient failures may be retried here (false for upload bodies, which the upload loop resumes). */
  retry?: boolean;
  signal?: AbortSignal;
}

/** Thrown by the upload loop to start a new upload session. */
class RestartUpload extends Error {}

/**
 * A connection to one registry (scheme + host): transport, auth state and token cache, shared by all
 * repositories of that registry.
 */
export class RegistryClient {
  readonly host: string;
  readonly baseUrl: URL;
  readonly policy: RetryPolicy;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly chunkThreshold: number;
  readonly chunkSize: number;
  private readonly transport: HttpTransport;
  private readonly credentials: CredentialProvider;
  private readonly credentialCache = new Map<string, Promise<Credential | undefined>>();
  /** Per host: which scheme the registry asked for last. */
  private readonly schemes = new Map<string, { scheme: 'basic' } | { scheme: 'bearer'; params: Record<string, string> }>();
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly tokenRequests = new Map<string, Promise<string>>();

  constructor(
    registry: string,
    readonly options: RemoteOptions = {},
  ) {
    this.host = apiHost(registry);
    this.baseUrl = new URL(`${options.plainHttp ? 'http' : 'https'}://${this.host}`);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.chunkThreshold = options.chunkThreshold ?? 64 * 1024 * 1024;
    this.chunkSize = options.chunkSize ?? 8 * 1024 * 1024;
    this.transport = new HttpTransport({ ...(options.ca ? { ca: options.ca } : {}), userAgent: options.userAgent ?? 'olmpub' });
    this.credentials = options.credentials ?? dockerCredentials();
  }

  repository(name: string): RemoteRepository {
    return new RemoteRepository(this, name);
  }

  close(): void {
    this.transport.close();
  }

  url(path: string): URL {
    return new URL(path, this.baseUrl);
  }

  private credentialFor(host: string): Promise<Credential | undefined> {
    let c = this.credentialCache.get(host);
    if (!c) {
      c = this.credentials(host);
      this.credentialCache.set(host, c);
      c.catch(() => this.credentialCache.delete(host));
    }
    return c;
  }

  /** Sends a request with auth and, when allowed, retries; the caller reads or discards the response body. */
  async request(ex: Exchange): Promise<HttpResponse> {
    let authRetried = false;
    for (;;) {
      const auth = await this.authorizationFor(ex.url, ex.scopes, ex.signal);
      const res = await this.sendWithRetry(ex, auth);
      if (res.status !== 401 || authRetried || res.url.host !== ex.url.host) return res;
      const challenge = parseChallenge(header(res, 'www-authenticate'));
      await discard(res);
      if (!challenge) {
        throw environmentError('oci-auth-failed', `${ex.method} ${redactUrl(ex.url)}: 401 Unauthorized without a WWW-Authenticate challenge`);
      }
      const host = ex.url.host;
      if (challenge.scheme === 'basic') {
        const cred = await this.credentialFor(host);
        if (!cred || (cred.username === undefined && cred.password === undefined)) throw this.authRequired(host, ex);
        this.schemes.set(host, { scheme: 'basic' });
      } else if (challenge.scheme === 'bearer') {
        if (!challenge.params.realm) throw environmentError('oci-auth-failed', `${host}: Bearer challenge without a realm`);
        this.schemes.set(host, { scheme: 'bearer', params: challenge.params });
        // The cached token (if any) was refused: expired, revoked or too narrow. Fetch a new one.
        this.tokens.delete(this.tokenKey(host, cleanScopes(ex.scopes)));
      } else {
        throw environmentError('oci-auth-failed', `${host}: unsupported authentication scheme "${challenge.scheme}"`, { hint: 'olmpub supports Basic and Bearer token authentication' });
      }
      authRetried = true;
      if (ex.body && !(ex.body instanceof Uint8Array) && ex.retry === false) {
        // The body stream was consumed; the caller (upload loop) starts over with auth now known.
        throw new RestartUpload('authentication negotiated during an upload');
      }
    }
  }

  private authRequired(host: string, ex: Exchange): OlmpubError {
    return environmentError('oci-auth-required', `${host} requires authentication and no credentials were found for it`, {
      hint: `log in (oras login ${host} / docker login ${host}) so that docker config.json ($DOCKER_CONFIG/config.json or ~/.docker/config.json) holds credentials for ${host}`,
      place: `${ex.method} ${redactUrl(ex.url)}`,
    });
  }

  private tokenKey(host: string, scopes: string[]): string {
    return `${host} ${scopes.join(' ')}`;
  }

  private async authorizationFor(url: URL, scopes: string[], signal?: AbortSignal): Promise<string | undefined> {
    const host = url.host;
    const known = this.schemes.get(host);
    if (!known) return undefined;
    const cred = await this.credentialFor(host);
    if (known.scheme === 'basic') {
      if (!cred) return undefined;
      return `Basic ${Buffer.from(`${cred.username ?? ''}:${cred.password ?? ''}`).toString('base64')}`;
    }
    const all = cleanScopes([...scopes]);
    const key = this.tokenKey(host, all);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > this.clock.now()) return `Bearer ${cached.token}`;
    let pending = this.tokenRequests.get(key);
    if (!pending) {
      pending = this.fetchToken(host, known.params, all, cred, signal).finally(() => this.tokenRequests.delete(key));
      this.tokenRequests.set(key, pending);
    }
    return `Bearer ${await pending}`;
  }

  private async fetchToken(host: string, params: Record<string, string>, scopes: string[], cred: Credential | undefined, signal?: AbortSignal): Promise<string> {
    const key = this.tokenKey(host, scopes);
    if (cred?.registryToken) return cred.registryToken;
    let realm: URL;
    try {
      realm = new URL(params.realm!);
    } catch {
      throw environmentError('oci-auth-failed', `${host}: the token realm "${params.realm}" is not a URL`);
    }
    if (realm.protocol !== 'https:' && realm.protocol !== 'http:') throw environmentError('oci-auth-failed', `${host}: the token realm must be http(s)`);
    let res: HttpResponse;
    if (cred?.identityToken || false) {
      // OAuth2 refresh-token grant, as oras-go does for identity tokens.
      const form = new URLSearchParams();
      form.set('grant_type', 'refresh_token');
      form.set('refresh_token', cred.identityToken);
      form.set('client_id', 'olmpub');
      if (params.service) form.set('service', params.service);
      if (scopes.length) form.set('scope', scopes.join(' '));
      res = await this.sendWithRetry(
        { method: 'POST', url: realm, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: Buffer.from(form.toString()), scopes: [], ...(signal ? { signal } : {}) },
        undefined,
      );
    } else {
      const u = new URL(realm);
      if (params.service) u.searchParams.set('service', params.service);
      for (const s of scopes) u.searchParams.append('scope', s);
      const auth = cred && (cred.username || cred.password) ? `Basic ${Buffer.from(`${cred.username ?? ''}:${cred.password ?? ''}`).toString('base64')}` : undefined;
      res = await this.sendWithRetry({ method: 'GET', url: u, scopes: [], ...(signal ? { signal } : {}) }, auth);
    }
    const body = (await readBody(res, 128 * 1024)).toString('utf8');
    if (res.status === 401 || res.status === 403) {
      throw environmentError('oci-auth-failed', `${host}: the token service ${realm.host} rejected ${cred ? `the credentials from ${cred.source}` : 'anonymous access'} (${res.status})`, {
        hint: cred ? `log in again to ${host}` : `log in to ${host} (docker config.json) for this repository`,
      });
    }
    if (res.status !== 200) throw environmentError('oci-auth-failed', `${host}: the token service ${realm.host} answered ${res.status}`);
    const parsed = parseTokenResponse(body);
    if (!parsed) throw environmentError('oci-auth-failed', `${host}: the token service answered without token or access_token`);
    this.tokens.set(key, { token: parsed.token, expiresAt: this.clock.now() + Math.max(1, parsed.expiresInSeconds - 5) * 1000 });
    return parsed.token;
  }

  /** Sends once, or with retries when the exchange allows it; network errors become OlmpubErrors. */
  private async sendWithRetry(ex: Exchange, authorization: string | undefined): Promise<HttpResponse> {
    let attempt = 0;
    for (;;) {
      let res: HttpResponse | undefined;
      let error: NetworkError | undefined;
      try {
        const headers: Record<string, string> = { ...ex.headers };
        if (authorization) headers.Authorization = authorization;
        res = await this.transport.send({
          method: ex.method,
          url: ex.url,
          headers,
          ...(ex.body ? { body: ex.body } : {}),
          timeoutMs: this.timeoutMs,
          ...(ex.signal ? { signal: ex.signal } : {}),
        });
      } catch (err) {
        if (ex.signal?.aborted || err instanceof OlmpubError) throw err;
        error = err instanceof NetworkError ? err : new NetworkError(String((err as Error)?.message ?? err), 'EUNKNOWN', false, { cause: err });
      }
      this.options.onRequest?.({ method: ex.method, url: redactUrl(ex.url), status: res?.status ?? 0, attempt });
      const rewindable = !ex.body || ex.body instanceof Uint8Array;
      const mayRetry = ex.retry !== false && rewindable;
      if (error) {
        const wait = mayRetry && error.transient ? retryDelay(this.policy, attempt, {}, this.clock) : -1;
        if (wait < 0) throw this.networkFailure(error, ex);
        await this.clock.sleep(wait, ex.signal);
      } else if (res) {
        const wait = mayRetry && isRetryableStatus(res.status) ? retryDelay(this.policy, attempt, { status: res.status, retryAfter: header(res, 'retry-after') }, this.clock) : -1;
        if (wait < 0) return res;
        await discard(res);
        await this.clock.sleep(wait, ex.signal);
      }
      attempt++;
    }
  }

  networkFailure(err: NetworkError, ex: { method: string; url: URL }): OlmpubError {
    const where = `${ex.method} ${redactUrl(ex.url)}`;
    const tlsMismatch = /wrong version number|EPROTO|packet length too long|ERR_SSL/i.test(`${err.code} ${err.message}`);
    if (tlsMismatch && ex.url.protocol === 'https:') {
      return environmentError('oci-tls', `${ex.url.host} did not answer HTTPS (${err.code})`, {
        hint: 'if this registry serves plain HTTP, pass --plain-http (plainHttp: true)',
        place: where,
        cause: err,
      });
    }
    if (err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.code === 'EHOSTUNREACH') {
      return environmentError('oci-unreachable', `cannot reach registry ${ex.url.host} (${err.code})`, {
        hint: 'check the registry address and that it is running (scripts/testenv status for the test registries)',
        place: where,
        cause: err,
      });
    }
    if (/certificate|CERT_|self.signed/i.test(`${err.code} ${err.message}`)) {
      return environmentError('oci-tls', `TLS verification failed for ${ex.url.host} (${err.code})`, {
        hint: 'add the registry CA with NODE_EXTRA_CA_CERTS, or use --plain-http for a plain-HTTP test registry',
        place: where,
        cause: err,
      });
    }
    return environmentError('oci-network', `${where} failed: ${err.code}`, { cause: err });
  }

  /** Turns an unexpected HTTP answer into an environment error with the registry's own error code. */
  async httpFailure(res: HttpResponse, what: string): Promise<OlmpubError> {
    let detail = '';
    try {
      const body = (await readBody(res, 64 * 1024)).toString('utf8');
      const parsed = JSON.parse(body) as { errors?: Array<{ code?: string; message?: string }> };
      detail = (parsed.errors ?? []).map((e) => `${e.code ?? 'UNKNOWN'}: ${e.message ?? ''}`.trim()).join('; ');
    } catch {
      /* not JSON */
    }
    const msg = `${what}: ${res.status}${detail ? ` ${detail}` : ''}`;
    if (res.status === 401) {
      const cred = await this.credentialFor(res.url.host).catch(() => undefined);
      return environmentError('oci-auth-failed', `${res.url.host} rejected ${cred ? `the credentials from ${cred.source}` : 'anonymous access'} (${what})`, {
        hint: cred ? `check the user name and password for ${res.url.host} (log in again)` : `log in to ${res.url.host} so that docker config.json holds credentials for it`,
      });
    }
    if (res.status === 403) return environmentError('oci-denied', msg, { hint: 'the credentials lack permission for this repository' });
    if (res.status === 404) return environmentError('oci-not-found', msg);
    if (res.status === 400 && /HTTP request to an HTTPS server/i.test(detail)) {
      return environmentError('oci-tls', `${res.url.host} expects HTTPS`, { hint: 'drop --plain-http' });
    }
    return environmentError('oci-registry-error', msg);
  }
}

/** One repository of a registry, as a Store. */
export class RemoteRepository implements Store {
  readonly description: string;
  /** Manifest bytes pushed by this object, kept for a later `tag` without a GET. */
  private readonly recentManifests = new Map<string, Uint8Array>();

  constructor(
    readonly client: RegistryClient,
    readonly repository: string,
  ) {
    this.description = `${client.host}/${repository}`;
  }

  /** A repository store for a reference such as `127.0.0.1:5000/olmpub/operator:1.0.0`. */
  static fromReference(ref: string | RegistryReference, options: RemoteOptions = {}): { store: RemoteRepository; reference: RegistryReference } {
    const r = typeof ref === 'string' ? parseReference(ref) : ref;
    return { store: new RegistryClient(r.registry, options).repository(r.repository), reference: r };
  }

  /** Whether `other` is another repository on the same registry connection (so blobs can be mounted). */
  sameRegistry(other: Store): other is RemoteRepository {
    return other instanceof RemoteRepository && other.client.baseUrl.href === this.client.baseUrl.href;
  }

  private path(kind: 'blobs' | 'manifests', ref: string): URL {
    return this.client.url(`/v2/${this.repository}/${kind}/${ref}`);
  }

  private pull(): string[] {
    return [repositoryScope(this.repository, ['pull'])];
  }

  private pushPull(): string[] {
    return [repositoryScope(this.repository, ['pull', 'push'])];
  }

  async exists(desc: Descriptor, signal?: AbortSignal): Promise<boolean> {
    checkDigest(desc.digest);
    const manifest = isManifestOrIndex(desc.mediaType);
    const url = this.path(manifest ? 'manifests' : 'blobs', desc.digest);
    const res = await this.client.request({
      method: 'HEAD',
      url,
      headers: manifest ? { Accept: acceptFor(desc.mediaType) } : {},
      scopes: this.pull(),
      ...(signal ? { signal } : {}),
    });
    await discard(res);
    if (res.status === 404) return false;
    if (res.status !== 200) throw await this.client.httpFailure(res, `HEAD ${redactUrl(url)}`);
    const len = header(res, 'content-length');
    if (!manifest && len !== undefined && Number(len) !== desc.size) {
      throw validationError('oci-size-mismatch', `${this.description}: blob ${desc.digest} is ${len} bytes in the registry, its descriptor says ${desc.size}`);
    }
    return true;
  }

  async fetchBlob(desc: Descriptor, options: { offset?: number; signal?: AbortSignal } = {}): Promise<Readable> {
    checkDigest(desc.digest);
    const offset = options.offset ?? 0;
    const res = await this.get(this.path('blobs', desc.digest), offset > 0 ? { Range: `bytes=${offset}-` } : {}, options.signal);
    if (res.status !== 200 && res.status !== 206) {
      if (res.status === 404) {
        await discard(res);
        throw environmentError('oci-not-found', `${this.description}: blob ${desc.digest} not found`);
      }
      throw await this.client.httpFailure(res, `GET blob ${desc.digest} from ${this.description}`);
    }
    let body: Readable = res.body;
    if (offset > 0 && res.status === 200) body = skipBytes(res.body, offset);
    if (offset > 0) return body;
    const check = new DigestStream({ digest: desc.digest, size: desc.size, where: `${this.description}: blob` });
    body.on('error', (err) => check.destroy(err));
    return body.pipe(check);
  }

  /** GET following redirects; Authorization is only ever attached for the registry's own host. */
  private async get(url: URL, headers: Record<string, string>, signal?: AbortSignal): Promise<HttpResponse> {
    let target = url;
    for (let hop = 0; hop < 6; hop++) {
      const res = await this.client.request({ method: 'GET', url: target, headers, scopes: this.pull(), ...(signal ? { signal } : {}) });
      if (![301, 302, 303, 307, 308].includes(res.status)) return res;
      const loc = header(res, 'location');
      await discard(res);
      if (!loc) throw environmentError('oci-registry-error', `${redactUrl(target)}: redirect without Location`);
      target = new URL(loc, target);
    }
    throw environmentError('oci-registry-error', `${redactUrl(url)}: too many redirects`);
  }

  async fetchManifest(desc: Descriptor, signal?: AbortSignal): Promise<Uint8Array> {
    checkDigest(desc.digest);
    if (desc.size > MAX_MANIFEST_BYTES) {
      throw validationError('oci-manifest-too-large', `${this.description}: manifest ${desc.digest} is ${desc.size} bytes, above the ${MAX_MANIFEST_BYTES}-byte limit`);
    }
    const res = await this.get(this.path('manifests', desc.digest), { Accept: acceptFor(desc.mediaType) }, signal);
    if (res.status !== 200) {
      if (res.status === 404) {
        await discard(res);
        throw environmentError('oci-not-found', `${this.description}: manifest ${desc.digest} not found`);
      }
      throw await this.client.httpFailure(res, `GET manifest ${desc.digest} from ${this.description}`);
    }
    const bytes = await readBody(res, MAX_MANIFEST_BYTES);
    verifyBytes(bytes, desc, `${this.description}: manifest`);
    return bytes;
  }

  async pushManifest(desc: Descriptor, bytes: Uint8Array, options: { tag?: string; signal?: AbortSignal } = {}): Promise<void> {
    verifyBytes(bytes, desc, `${this.description}: manifest`);
    const ref = options.tag ?? desc.digest;
    const url = this.path('manifests', ref);
    const res = await this.client.request({
      method: 'PUT',
      url,
      headers: { 'Content-Type': desc.mediaType },
      body: bytes,
      scopes: this.pushPull(),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (res.status !== 201 && res.status !== 200) throw await this.client.httpFailure(res, `PUT manifest ${ref} to ${this.description}`);
    await discard(res);
    const got = header(res, 'docker-content-digest');
    if (got && got !== desc.digest) {
      throw validationError('oci-digest-mismatch', `${this.description}: the registry stored manifest ${ref} as ${got}, expected ${desc.digest}`);
    }
    this.recentManifests.set(desc.digest, bytes);
    if (this.recentManifests.size > 16) this.recentManifests.delete(this.recentManifests.keys().next().value!);
  }

  async tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void> {
    if (isDigest(tag)) return;
    const bytes = this.recentManifests.get(desc.digest) ?? (await this.fetchManifest(desc, signal));
    await this.pushManifest(desc, bytes, { tag, ...(signal ? { signal } : {}) });
  }

  async resolve(reference: string, signal?: AbortSignal): Promise<Descriptor> {
    const url = this.path('manifests', reference);
    const res = await this.client.request({ method: 'HEAD', url, headers: { Accept: MANIFEST_MEDIA_TYPES.join(', ') }, scopes: this.pull(), ...(signal ? { signal } : {}) });
    await discard(res);
    if (res.status === 404) {
      throw environmentError('oci-not-found', `${this.description}: ${isDigest(reference) ? 'manifest' : 'tag'} "${reference}" not found`, {
        hint: `check the reference; the repository may not exist on ${this.client.host}`,
      });
    }
    if (res.status !== 200) throw await this.client.httpFailure(res, `HEAD manifest ${reference} on ${this.description}`);
    const mediaType = (header(res, 'content-type') ?? '').split(';')[0]!.trim();
    const digest = header(res, 'docker-content-digest');
    const size = Number(header(res, 'content-length'));
    if (digest && isDigest(digest) && Number.isFinite(size) && isManifestOrIndex(mediaType)) {
      if (isDigest(reference) && digest !== reference) {
        throw validationError('oci-digest-mismatch', `${this.description}: asked for ${reference}, the registry answered ${digest}`);
      }
      return { mediaType, digest, size };
    }
    // No usable HEAD answer: GET the manifest and compute its digest.
    const got = await this.get(url, { Accept: MANIFEST_MEDIA_TYPES.join(', ') }, signal);
    if (got.status !== 200) throw await this.client.httpFailure(got, `GET manifest ${reference} on ${this.description}`);
    const bytes = await readBody(got, MAX_MANIFEST_BYTES);
    const type = (header(got, 'content-type') ?? '').split(';')[0]!.trim();
    const computed = digestOf(bytes, isDigest(reference) ? digestAlgorithm(reference) : 'sha256');
    if (isDigest(reference) && computed !== reference) {
      throw validationError('oci-digest-mismatch', `${this.description}: asked for ${reference}, the content is ${computed}`);
    }
    return { mediaType: isManifestOrIndex(type) ? type : sniffType(bytes), digest: computed, size: bytes.length };
  }

  /** The repository's tags (`GET /v2/<name>/tags/list`, following `Link` pages). */
  async tags(signal?: AbortSignal): Promise<string[]> {
    const out: string[] = [];
    let url: URL | undefined = this.client.url(`/v2/${this.repository}/tags/list`);
    while (url) {
      const res = await this.get(url, {}, signal);
      if (res.status === 404) {
        await discard(res);
        return [];
      }
      if (res.status !== 200) throw await this.client.httpFailure(res, `GET tags of ${this.description}`);
      const link = header(res, 'link');
      const json = JSON.parse((await readBody(res, MAX_MANIFEST_BYTES)).toString('utf8')) as { tags?: string[] | null };
      out.push(...(json.tags ?? []));
      const next = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1] : undefined;
      url = next ? new URL(next, url) : undefined;
    }
    return out.sort();
  }

  /** Deletes a manifest by digest (untags every tag on it). */
  async deleteManifest(digest: string, signal?: AbortSignal): Promise<void> {
    const url = this.path('manifests', checkDigest(digest));
    const res = await this.client.request({ method: 'DELETE', url, scopes: [repositoryScope(this.repository, ['delete'])], ...(signal ? { signal } : {}) });
    if (res.status !== 202 && res.status !== 200) throw await this.client.httpFailure(res, `DELETE ${digest} on ${this.description}`);
    await discard(res);
  }

  /**
   * Uploads a blob: mount when `mountFrom` is given, else POST + PUT (monolithic) or POST + PATCH… + PUT
   * (chunked, above the threshold or when asked). Failed sessions are resumed (chunked) or restarted,
   * with backoff, up to the retry policy's limit.
   */
  async pushBlob(desc: Descriptor, source: BlobSource, options: PushBlobOptions = {}): Promise<void> {
    checkDigest(desc.digest);
    const chunked = options.chunked ?? desc.size >= this.client.chunkThreshold;
    let failures = 0;
    for (;;) {
      try {
        await this.uploadSession(desc, source, options, chunked, () => failures++);
        return;
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const retryable = err instanceof RestartUpload || isTransientUploadError(err);
        if (!retryable) throw err;
        if (err instanceof RestartUpload && failures === 0) {
          failures++;
          continue; // auth was only just negotiated; no backoff needed
        }
        const wait = retryDelay(this.client.policy, failures, {}, this.client.clock);
        if (wait < 0) throw err instanceof RestartUpload ? environmentError('oci-upload-failed', `${this.description}: upload of ${desc.digest} kept failing (last: ${err.message})`) : err;
        failures++;
        await this.client.clock.sleep(wait, options.signal);
      }
    }
  }

  private async startUpload(desc: Descriptor, options: PushBlobOptions): Promise<{ done: true } | { done: false; location: URL; minChunk?: number }> {
    const url = this.client.url(`/v2/${this.repository}/blobs/uploads/`);
    const scopes = this.pushPull();
    if (options.mountFrom && options.mountFrom !== this.repository) {
      url.searchParams.set('mount', desc.digest);
      url.searchParams.set('from', options.mountFrom);
      scopes.push(repositoryScope(options.mountFrom, ['pull']));
    }
    const res = await this.client.request({ method: 'POST', url, scopes, ...(options.signal ? { signal: options.signal } : {}) });
    if (res.status === 201) {
      await discard(res);
      return { done: true };
    }
    if (res.status !== 202) throw await this.client.httpFailure(res, `POST ${redactUrl(url)}`);
    await discard(res);
    const loc = header(res, 'location');
    if (!loc) throw environmentError('oci-registry-error', `${this.description}: upload started without a Location`);
    const min = Number(header(res, 'oci-chunk-min-length'));
    return { done: false, location: new URL(loc, url), ...(Number.isFinite(min) && min > 0 ? { minChunk: min } : {}) };
  }

  private async uploadSession(desc: Descriptor, source: BlobSource, options: PushBlobOptions, chunked: boolean, countFailure: () => void): Promise<void> {
    const started = await this.startUpload(desc, options);
    if (started.done) {
      if (options.mountFrom) options.onMounted?.();
      options.onProgress?.(desc.size, desc.size);
      return;
    }
    let location = started.location;
    const signal = options.signal ? { signal: options.signal } : {};
    if (!chunked) {
      // Monolithic: one PUT streaming the whole blob.
      let sent = 0;
      const put = withDigest(location, desc.digest);
      const res = await this.client.request({
        method: 'PUT',
        url: put,
        headers: { 'Content-Type': 'application/octet-stream' },
        body: {
          length: desc.size,
          open: () => source(0),
          onBytes: (n) => {
            sent += n;
            options.onProgress?.(sent, desc.size);
          },
        },
        scopes: this.pushPull(),
        retry: false,
        ...signal,
      });
      return this.finishUpload(res, desc);
    }
    // Chunked: PATCH with Content-Range, resuming from the registry's Range after failures.
    const chunkSize = Math.max(this.client.chunkSize, started.minChunk ?? 0);
    const reader = new ChunkReader(source);
    try {
      let offset = 0;
      let chunkFailures = 0;
      while (offset < desc.size) {
        const len = Math.min(chunkSize, desc.size - offset);
        const chunk = await reader.read(offset, len);
        let res: HttpResponse | undefined;
        let failure: unknown;
        try {
          res = await this.client.request({
            method: 'PATCH',
            url: location,
            headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `${offset}-${offset + len - 1}` },
            body: { length: len, open: async () => Readable.from([chunk]), onBytes: (n) => options.onProgress?.(offset + Math.min(n, len), desc.size) },
            scopes: this.pushPull(),
            retry: false,
            ...signal,
          });
        } catch (err) {
          if (!isTransientUploadError(err)) throw err;
          failure = err;
        }
        if (res && res.status === 202) {
          await discard(res);
          const loc = header(res, 'location');
          if (loc) location = new URL(loc, location);
          offset += len;
          options.onProgress?.(offset, desc.size);
          continue;
        }
        if (res && res.status !== 416 && !isRetryableStatus(res.status)) {
          const failure = await this.client.httpFailure(res, `PATCH upload of ${desc.digest}`);
          // The registry dropped the session (docker-registry invalidates one whose stored size no longer
          // matches its state, e.g. after part of a dropped PATCH landed, sometimes only at the next PATCH).
          if (res.status === 404 && /BLOB_UPLOAD_(UNKNOWN|INVALID)/.test(failure.message)) throw new RestartUpload(failure.message);
          throw failure;
        }
        const retryAfter = res ? header(res, 'retry-after') : undefined;
        const status = res?.status;
        if (res) await discard(res);
        // The chunk may or may not have landed: back off, then ask the registry where the upload stands.
        countFailure();
        if (++chunkFailures > this.client.policy.maxRetries) {
          throw environmentError('oci-upload-failed', `${this.description}: chunked upload of ${desc.digest} failed ${chunkFailures} times at offset ${offset}`, {
            ...(failure ? { cause: failure } : {}),
          });
        }
        const wait = retryDelay(this.client.policy, chunkFailures - 1, { ...(status !== undefined && status !== 416 ? { status } : {}), ...(retryAfter ? { retryAfter } : {}) }, this.client.clock);
        await this.client.clock.sleep(Math.max(wait, 0), options.signal);
        const state = await this.uploadStatus(location, options.signal);
        if (!state) throw new RestartUpload(`upload session lost after ${failure ? (failure as Error).message : `status ${status}`}`);
        location = state.location;
        if (state.offset < 0 || state.offset > desc.size) throw new RestartUpload('registry reports an impossible upload offset');
        // Distribution writes "0-0" for both 0 and 1 bytes received; trust our own count for that case.
        offset = state.ambiguousZero ? (offset === 1 ? 1 : 0) : state.offset;
      }
      const res = await this.client.request({ method: 'PUT', url: withDigest(location, desc.digest), scopes: this.pushPull(), retry: true, ...signal });
      return this.finishUpload(res, desc);
    } finally {
      reader.close();
    }
  }

  private async finishUpload(res: HttpResponse, desc: Descriptor): Promise<void> {
    if (res.status !== 201 && res.status !== 204 && res.status !== 200) {
      if (res.status === 404 || res.status === 416 || isRetryableStatus(res.status)) {
        const retryable = isRetryableStatus(res.status);
        const failure = await this.client.httpFailure(res, `PUT upload of ${desc.digest} to ${this.description}`);
        if (retryable || res.status === 404) throw new RestartUpload(failure.message);
        throw failure;
      }
      throw await this.client.httpFailure(res, `PUT upload of ${desc.digest} to ${this.description}`);
    }
    await discard(res);
    const got = header(res, 'docker-content-digest');
    if (got && got !== desc.digest) throw validationError('oci-digest-mismatch', `${this.description}: the registry stored ${got}, expected ${desc.digest}`);
  }

  /** GET on an upload location: where it stands (Range) and its current Location; undefined if the session is gone. */
  private async uploadStatus(location: URL, signal?: AbortSignal): Promise<{ offset: number; location: URL; ambiguousZero: boolean } | undefined> {
    const res = await this.client.request({ method: 'GET', url: location, scopes: this.pushPull(), ...(signal ? { signal } : {}) });
    await discard(res);
    if (res.status !== 204 && res.status !== 200) return undefined;
    const range = header(res, 'range');
    const loc = header(res, 'location');
    const next = loc ? new URL(loc, location) : location;
    if (!range) return { offset: 0, location: next, ambiguousZero: false };
    const m = /^(?:bytes=)?0-(\d+)$/.exec(range.trim());
    if (!m) return undefined;
    const end = Number(m[1]);
    return { offset: end + 1, location: next, ambiguousZero: end === 0 };
  }
}

function acceptFor(mediaType: string): string {
  return [mediaType, ...MANIFEST_MEDIA_TYPES.filter((t) => t !== mediaType)].join(', ');
}

function withDigest(location: URL, digest: string): URL {
  const u = new URL(location);
  u.searchParams.set('digest', digest);
  return u;
}

function sniffType(bytes: Uint8Array): string {
  const m = JSON.parse(Buffer.from(bytes).toString('utf8')) as { mediaType?: string; manifests?: unknown };
  if (m.mediaType && isManifestOrIndex(m.mediaType)) return m.mediaType;
  return Array.isArray(m.manifests) ? MANIFEST_MEDIA_TYPES[1]! : MANIFEST_MEDIA_TYPES[0]!;
}

function isTransientUploadError(err: unknown): boolean {
  if (err instanceof RestartUpload) return true;
  if (err instanceof OlmpubError) {
    const cause = (err as { cause?: unknown }).cause;
    return err.code === 'oci-network' && cause instanceof NetworkError && cause.transient;
  }
  if (err instanceof NetworkError) return err.transient;
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/** Skips the first `n` bytes of a stream (a registry that ignored Range). */
function skipBytes(stream: Readable, n: number): Readable {
  let left = n;
  const skip = new Transform({
    transform(chunk: Buffer, _e, cb) {
      if (left >= chunk.length) {
        left -= chunk.length;
        cb();
      } else {
        const out = chunk.subarray(left);
        left = 0;
        cb(null, out);
      }
    },
  });
  stream.on('error', (err) => skip.destroy(err));
  return stream.pipe(skip);
}

/**
 * Reads a source sequentially in chunks, keeping one stream open across chunks and reopening it at an
 * offset only when the upload has to go back (resume) or the stream broke.
 */
class ChunkReader {
  private stream?: Readable;
  private iterator?: AsyncIterator<Buffer>;
  private position = 0;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly source: BlobSource) {}

  async read(offset: number, length: number): Promise<Buffer> {
    if (!this.iterator || offset !== this.position) await this.reopen(offset);
    const parts: Buffer[] = [];
    let have = 0;
    if (this.carry.length) {
      const take = this.carry.subarray(0, length);
      parts.push(take);
      have += take.length;
      this.carry = this.carry.subarray(take.length);
    }
    while (have < length) {
      let next: IteratorResult<Buffer>;
      try {
        next = await this.iterator!.next();
      } catch (err) {
        this.close();
        throw err;
      }
      if (next.done) {
        this.close();
        throw environmentError('oci-short-source', `the blob source ended after ${offset + have} bytes, before the ${offset + length} expected`);
      }
      const buf = next.value;
      const need = length - have;
      if (buf.length > need) {
        parts.push(buf.subarray(0, need));
        this.carry = buf.subarray(need);
        have += need;
      } else {
        parts.push(buf);
        have += buf.length;
      }
    }
    this.position = offset + length;
    return Buffer.concat(parts, length);
  }

  private async reopen(offset: number): Promise<void> {
    this.close();
    this.stream = await this.source(offset);
    this.iterator = this.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    this.position = offset;
    this.carry = Buffer.alloc(0);
  }

  close(): void {
    this.stream?.destroy();
    this.stream = undefined;
    this.iterator = undefined;
  }
}
