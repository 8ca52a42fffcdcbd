/**
 * Registry authentication, the pure parts: `WWW-Authenticate` challenges, token scopes (merged and
 * sorted as oras-go's `CleanScopes`), and the token endpoint's answer.
 */

export interface Challenge {
  scheme: 'basic' | 'bearer' | string;
  params: Record<string, string>;
}

/**
 * Parses `WWW-Authenticate`, e.g. `Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push"`.
 * Returns the first challenge; parameter names are lowercased, quoted values unescaped.
 */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const s = header.trim();
  const m = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+|$)/.exec(s);
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  const params: Record<string, string> = {};
  let i = m[0].length;
  while (i < s.length) {
    while (i < s.length && (s[i] === ' ' || s[i] === ',' || s[i] === '\t')) i++;
    const nameMatch = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*/.exec(s.slice(i));
    if (!nameMatch) break;
    const name = nameMatch[1]!.toLowerCase();
    i += nameMatch[0].length;
    let value = '';
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        value += s[i];
        i++;
      }
      i++; // closing quote
    } else {
      const end = s.slice(i).search(/[,\s]/);
      value = end < 0 ? s.slice(i) : s.slice(i, i + end);
      i += value.length;
    }
    params[name] = value;
    // A second challenge (`, Basic realm=...`) starts with a bare scheme token: stop there.
    if (/^\s*,?\s*[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*\s+[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*=/.test(s.slice(i))) break;
  }
  return { scheme, params };
}

export const repositoryScope = (repository: string, actions: string[]): string => `repository:${repository}:${actions.join(',')}`;

/**
 * Merges scopes per resource and sorts them: `repository:a:pull` + `repository:a:push` →
 * `repository:a:pull,push`; `*` absorbs other actions. Unparsable scopes are kept as they are.
 */
export function cleanScopes(scopes: readonly string[]): string[] {
  const byResource = new Map<string, Set<string>>();
  const other = new Set<string>();
  for (const scope of scopes) {
    for (const one of scope.split(' ').filter(Boolean)) {
      const last = one.lastIndexOf(':');
      const first = one.indexOf(':');
      if (first < 0 || last === first) {
        other.add(one);
        continue;
      }
      const resource = one.slice(0, last);
      const actions = one.slice(last + 1).split(',').filter(Boolean);
      if (actions.length === 0) continue;
      const set = byResource.get(resource) ?? new Set<string>();
      for (const a of actions) set.add(a);
      byResource.set(resource, set);
    }
  }
  const out: string[] = [...other];
  for (const [resource, set] of byResource) {
    const actions = set.has('*') ? ['*'] : [...set].sort();
    out.push(`${resource}:${actions.join(',')}`);
  }
  return out.sort();
}

/** The token from a token endpoint's JSON answer (`token` or `access_token`) and its lifetime. */
export function parseTokenResponse(body: string): { token: string; expiresInSeconds: number } | undefined {
  let json: { token?: unknown; access_token?: unknown; expires_in?: unknown };
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    return undefined;
  }
  const token = typeof json.access_token === 'string' && json.access_token ? json.access_token : typeof json.token === 'string' && json.token ? json.token : undefined;
  if (!token) return undefined;
  const expires = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 60;
  return { token, expiresInSeconds: expires };
}
