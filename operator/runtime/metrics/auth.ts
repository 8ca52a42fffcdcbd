/**
 * Authentication and authorization of metrics scrapes against the apiserver, as controller-runtime's
 * filters.WithAuthenticationAndAuthorization (reference/operator.md §2.4):
 * - the bearer token goes to a TokenReview (results cached 1 min, review timeout 10 s);
 * - the user is checked with a SubjectAccessReview on nonResourceAttributes {path, verb = lower-case
 *   HTTP method} (allow cached 5 min, deny 30 s);
 * - no token, or a token the TokenReview rejects → 401 "Unauthorized"; denied → 403
 *   "Authorization denied for user <name>"; a review that fails → 500.
 * Review calls that fail with a transport error, 429 or 5xx are retried (500 ms × 1.5, 5 steps).
 * Tokens are kept only as SHA-256 digests and never logged.
 */
import { createHash } from 'node:crypto';
import { realClock, sleep, type Clock } from '../clock.js';
import type { KubeClient } from '../kube/client.js';
import { KubeApiError, KubeTransportError } from '../kube/errors.js';
import { silentLogger, type Logger } from '../log.js';

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AuthDecision {
  status: 200 | 401 | 403 | 500;
  /** Body text for refusals. */
  message: string;
  user?: UserInfo;
}

export interface DelegatingAuthOptions {
  /** Default 60 s. */
  tokenCacheTtlMs?: number;
  /** Default 5 min. */
  allowCacheTtlMs?: number;
  /** Default 30 s. */
  denyCacheTtlMs?: number;
  /** Default 10 s. */
  reviewTimeoutMs?: number;
  /** TokenReview audiences. Default: the apiserver's. */
  audiences?: string[];
  /** Retry steps for failing review calls. Default 5. */
  retrySteps?: number;
  clock?: Clock;
  logger?: Logger;
}

interface Cached<T> {
  value: T;
  expires: number;
}

const MAX_CACHE = 10_000;

function retriable(err: unknown): boolean {
  return err instanceof KubeTransportError || (err instanceof KubeApiError && (err.status === 429 || err.status >= 500));
}

export class DelegatingAuth {
  private readonly tokens = new Map<string, Cached<UserInfo | null>>();
  private readonly decisions = new Map<string, Cached<boolean>>();
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly stats = { tokenReviews: 0, subjectAccessReviews: 0 };

  constructor(
    private readonly client: KubeClient,
    private readonly options: DelegatingAuthOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child('metrics-auth');
  }

  /** The full decision for one request. */
  async check(method: string, path: string, authorization: string | undefined): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (!token) return { status: 401, message: 'Unauthorized' };
    let user: UserInfo | null;
    try {
      user = await this.authenticate(token);
    } catch (err) {
      this.log.error('Authentication failed', { err: err as Error });
      return { status: 500, message: 'Authentication failed' };
    }
    if (!user) return { status: 401, message: 'Unauthorized' };
    let allowed: boolean;
    try {
      allowed = await this.authorize(user, method.toLowerCase(), path);
    } catch (err) {
      const message = `Authorization for user ${user.username} failed`;
      this.log.error(message, { err: err as Error });
      return { status: 500, message, user };
    }
    if (!allowed) {
      const message = `Authorization denied for user ${user.username}`;
      this.log.debug(message, { path, verb: method.toLowerCase() });
      return { status: 403, message, user };
    }
    return { status: 200, message: 'ok', user };
  }

  /** The user behind a token, or null when the TokenReview does not authenticate it. Throws when the review fails. */
  async authenticate(token: string): Promise<UserInfo | null> {
    const key = createHash('sha256').update(token).digest('hex');
    const now = this.clock.now();
    const hit = this.tokens.get(key);
    if (hit && hit.expires > now) return hit.value;
    const review = await this.withRetries(() => {
      this.stats.tokenReviews++;
      return this.client.requestJSON<{ status?: { authenticated?: boolean; user?: UserInfo; error?: string } }>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(this.options.audiences ? { audiences: this.options.audiences } : {}) } },
        timeoutMs: this.options.reviewTimeoutMs ?? 10_000,
      });
    });
    const st = review.status ?? {};
    const user = st.authenticated && st.user?.username ? { username: st.user.username, uid: st.user.uid, groups: st.user.groups, extra: st.user.extra } : null;
    if (!user && st.error) this.log.debug('token rejected', { reason: st.error });
    this.put(this.tokens, key, user, this.options.tokenCacheTtlMs ?? 60_000);
    return user;
  }

  /** Whether the user may `verb` the non-resource `path`. Throws when the review fails. */
  async authorize(user: UserInfo, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), verb, path]);
    const now = this.clock.now();
    const hit = this.decisions.get(key);
    if (hit && hit.expires > now) return hit.value;
    const review = await this.withRetries(() => {
      this.stats.subjectAccessReviews++;
      return this.client.requestJSON<{ status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb } },
        },
        timeoutMs: this.options.reviewTimeoutMs ?? 10_000,
      });
    });
    const allowed = review.status?.allowed === true;
    this.put(this.decisions, key, allowed, allowed ? (this.options.allowCacheTtlMs ?? 300_000) : (this.options.denyCacheTtlMs ?? 30_000));
    return allowed;
  }

  private put<T>(cache: Map<string, Cached<T>>, key: string, value: T, ttl: number): void {
    if (cache.size >= MAX_CACHE) {
      const now = this.clock.now();
      for (const [k, v] of cache) if (v.expires <= now) cache.delete(k);
      if (cache.size >= MAX_CACHE) cache.clear();
    }
    cache.set(key, { value, expires: this.clock.now() + ttl });
  }

  private async withRetries<T>(fn: () => Promise<T>): Promise<T> {
    const steps = this.options.retrySteps ?? 5;
    let delay = 500;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (i >= steps || !retriable(err)) throw err;
        await sleep(this.clock, delay * (1 + Math.random() * 0.2));
        delay *= 1.5;
      }
    }
  }
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
