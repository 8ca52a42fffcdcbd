/**
 * `.indexignore` files, as opm reads them (joelanford/ignore over go-git's gitignore matcher): every
 * `.indexignore` in the tree contributes patterns scoped to its directory; the last matching pattern
 * decides; `!pattern` re-includes. Paths use `/` and are relative to the catalog root.
 */

interface Pattern {
  domain: string[];
  pattern: string[];
  inclusion: boolean;
  dirOnly: boolean;
  isGlob: boolean;
}

/** Go's path/filepath.Match (`*`, `?`, `[...]`, `[^...]`, `\` escapes); a malformed pattern never matches. */
export function goPathMatch(pattern: string, name: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      i++;
      if (i >= pattern.length) return false;
      re += escapeRe(pattern[i]!);
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) return false;
      let body = pattern.slice(i + 1, end);
      let neg = false;
      if (body.startsWith('^')) {
        neg = true;
        body = body.slice(1);
      }
      if (body === '') return false;
      re += `[${neg ? '^' : ''}${body.replace(/[\]\\^]/g, (m) => '\\' + m)}]`;
      i = end;
    } else re += escapeRe(c);
  }
  try {
    return new RegExp(re + '$', 's').test(name);
  } catch {
    return false;
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export function parsePattern(line: string, domain: string[]): Pattern {
  let p = line;
  const res: Pattern = { domain: [...domain], pattern: [], inclusion: false, dirOnly: false, isGlob: false };
  if (p.startsWith('!')) {
    res.inclusion = true;
    p = p.slice(1);
  }
  if (!p.endsWith('\\ ')) p = p.replace(/ +$/, '');
  if (p.endsWith('/')) {
    res.dirOnly = true;
    p = p.slice(0, -1);
  }
  if (p.includes('/')) res.isGlob = true;
  res.pattern = p.split('/');
  return res;
}

function simpleNameMatch(p: Pattern, path: string[], isDir: boolean): boolean {
  for (let i = 0; i < path.length; i++) {
    if (!goPathMatch(p.pattern[0]!, path[i]!)) continue;
    if (p.dirOnly && !isDir && i === path.length - 1) return false;
    return true;
  }
  return false;
}

function globMatch(p: Pattern, pathIn: string[], isDir: boolean): boolean {
  let path = pathIn;
  let matched = false;
  let canTraverse = false;
  for (let i = 0; i < p.pattern.length; i++) {
    const pattern = p.pattern[i]!;
    if (pattern === '') {
      canTraverse = false;
      continue;
    }
    if (pattern === '**') {
      if (i === p.pattern.length - 1) break;
      canTraverse = true;
      continue;
    }
    if (pattern.includes('**')) return false;
    if (path.length === 0) return false;
    if (canTraverse) {
      canTraverse = false;
      while (path.length > 0) {
        const e = path[0]!;
        path = path.slice(1);
        if (goPathMatch(pattern, e)) {
          matched = true;
          break;
        } else if (path.length === 0) matched = false;
      }
    } else {
      if (!goPathMatch(pattern, path[0]!)) return false;
      matched = true;
      path = path.slice(1);
    }
  }
  if (matched && p.dirOnly && !isDir && path.length === 0) matched = false;
  return matched;
}

function patternMatch(p: Pattern, pathIn: string[], isDir: boolean): 'none' | 'exclude' | 'include' {
  if (pathIn.length <= p.domain.length) return 'none';
  for (let i = 0; i < p.domain.length; i++) if (pathIn[i] !== p.domain[i]) return 'none';
  const path = pathIn.slice(p.domain.length);
  const ok = p.isGlob ? globMatch(p, path, isDir) : simpleNameMatch(p, path, isDir);
  if (!ok) return 'none';
  return p.inclusion ? 'include' : 'exclude';
}

export class IndexIgnore {
  private readonly patterns: Pattern[] = [];

  /** Adds the patterns of the `.indexignore` at `path` (relative, `/`-separated), in walk order. */
  add(path: string, content: string): void {
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '.';
    const domain = dir === '.' ? [] : dir.split('/');
    for (const raw of content.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      this.patterns.push(parsePattern(line, domain));
    }
  }

  /** Whether the file at `path` is ignored. */
  ignores(path: string, isDir = false): boolean {
    const parts = path.split('/');
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const m = patternMatch(this.patterns[i]!, parts, isDir);
      if (m !== 'none') return m === 'exclude';
    }
    return false;
  }
}
