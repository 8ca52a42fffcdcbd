/**
 * The production dependencies of the operator: the closure of package.json's `dependencies` over the
 * lockfile (npm lockfileVersion 2 or 3, `packages` keyed by install location), resolved as Node.js does
 * (nearest `node_modules` up the tree), then copied from the repository's `node_modules` with normalised
 * modes. devDependencies (typescript, mocha, @types/...) are never reached unless a production package
 * depends on them. The closure is pure; reading the files is the thin I/O part.
 */
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { environmentError, validationError } from '../../lib/errors.js';
import type { LayerEntry } from '../image/tar.js';

/** One entry of package-lock.json's `packages`. */
export interface LockPackage {
  name?: string;
  version?: string;
  resolved?: string;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
}

export interface Lockfile {
  name?: string;
  version?: string;
  lockfileVersion: number;
  packages: Record<string, LockPackage>;
}

export interface ResolvedPackage {
  /** Install location in the lockfile, e.g. `node_modules/a/node_modules/b`. */
  location: string;
  name: string;
  version: string;
  /** Only reached through optional edges (optionalDependencies, optional peers): may be absent on disk. */
  optional: boolean;
  license?: string;
}

export interface ProductionClosure {
  packages: ResolvedPackage[];
  /** Optional dependencies the lockfile does not hold (not installed on any platform): `from → name`. */
  absentOptional: string[];
}

/** The package name at a lockfile location: what follows the last `node_modules/`. */
export function packageNameAt(location: string): string {
  const i = location.lastIndexOf('node_modules/');
  return i < 0 ? location : location.slice(i + 'node_modules/'.length);
}

/** The location Node.js would load `name` from when required by the package at `from` ('' = the root). */
export function resolveLocation(packages: Record<string, LockPackage>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

/**
 * The packages the root's `dependencies` and `optionalDependencies` need at run time: their
 * `dependencies`, `optionalDependencies` and `peerDependencies`, transitively. Sorted by location.
 */
export function productionClosure(lock: Lockfile, where = 'package-lock.json'): ProductionClosure {
  if (!lock || typeof lock !== 'object' || typeof lock.packages !== 'object' || !lock.packages || (lock.lockfileVersion ?? 0) < 2) {
    throw validationError('operator-image-lockfile-version', `${where} has no "packages" map (lockfileVersion ${lock?.lockfileVersion ?? '?'})`, {
      place: where,
      hint: 'regenerate it with npm 7 or later (lockfileVersion 2 or 3): npm install --package-lock-only',
    });
  }
  const packages = lock.packages;
  const root = packages[''] ?? {};
  const found = new Map<string, ResolvedPackage>();
  const absentOptional: string[] = [];
  // A package reached by a required edge is required, whatever optional edges also reach it.
  const queue: Array<{ from: string; name: string; optional: boolean }> = [];
  const edges = (from: string, p: LockPackage, optionalParent: boolean) => {
    for (const name of Object.keys(p.dependencies ?? {}).sort()) queue.push({ from, name, optional: optionalParent });
    for (const name of Object.keys(p.optionalDependencies ?? {}).sort()) queue.push({ from, name, optional: true });
    for (const name of Object.keys(p.peerDependencies ?? {}).sort()) {
      queue.push({ from, name, optional: optionalParent || p.peerDependenciesMeta?.[name]?.optional === true });
    }
  };
  edges('', root, false);
  while (queue.length) {
    const { from, name, optional } = queue.shift()!;
    const location = resolveLocation(packages, from, name);
    if (!location) {
      if (optional) {
        absentOptional.push(`${from || '(root)'} → ${name}`);
        continue;
      }
      throw validationError('operator-image-lockfile-missing', `${from || 'package.json'} depends on "${name}", which ${where} does not hold`, {
        place: `${where}: ${from || '(root)'}`,
        hint: 'the lockfile is out of date: run npm install, then npm ci',
      });
    }
    const pkg = packages[location]!;
    if (pkg.link) {
      throw validationError('operator-image-linked-package', `"${name}" is a link (${location}); linked and workspace packages cannot be copied into the image`, {
        place: `${where}: ${location}`,
        hint: 'depend on a published version of the package instead',
      });
    }
    const prev = found.get(location);
    if (prev) {
      if (prev.optional && !optional) {
        prev.optional = false;
        edges(location, pkg, false);
      }
      continue;
    }
    found.set(location, {
      location,
      name: pkg.name ?? packageNameAt(location),
      version: pkg.version ?? '0.0.0',
      optional,
      ...(pkg.license ? { license: pkg.license } : {}),
    });
    edges(location, pkg, optional);
  }
  const sorted = [...found.values()].sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
  return { packages: sorted, absentOptional: [...new Set(absentOptional)].sort() };
}

/**
 * Files left out of dependency packages when pruning: type declarations, source maps, TypeScript sources
 * and Markdown documentation. Node.js never loads them; license and notice files always stay.
 */
export function isPrunable(fileName: string): boolean {
  if (/^(licen[cs]e|notice|copying|authors|patents)/i.test(fileName)) return false;
  return /\.(d\.[mc]?ts|[mc]?ts|map|md|markdown)$/i.test(fileName);
}

export interface DependencyEntriesOptions {
  /** The node_modules directory holding the packages (the lockfile's `node_modules/` maps onto it). */
  nodeModulesDir: string;
  /** Where `node_modules` goes in the image. @default '/app/node_modules' */
  at?: string;
  /** Leave out files `isPrunable` names. @default true */
  prune?: boolean;
}

export interface DependencyFiles {
  entries: LayerEntry[];
  /** Packages copied. */
  packages: ResolvedPackage[];
  /** Optional packages the lockfile lists but that are not installed here (another platform's). */
  skipped: ResolvedPackage[];
  files: number;
  bytes: number;
  prunedFiles: number;
  prunedBytes: number;
}

/** Regular files 0644 (0755 when any execute bit is set), directories 0755, owner root. */
export const normalizeMode = (mode: number, dir: boolean): number => (dir || mode & 0o111 ? 0o755 : 0o644);

/**
 * Layer entries for the packages, read from `nodeModulesDir`. Each package's own files are taken,
 * without its nested `node_modules` (nested packages are in the closure when they are needed). The
 * version on disk must be the lockfile's.
 */
export async function dependencyEntries(closure: ResolvedPackage[], options: DependencyEntriesOptions): Promise<DependencyFiles> {
  const at = (options.at ?? '/app/node_modules').replace(/\/+$/, '');
  const prune = options.prune ?? true;
  const out: DependencyFiles = { entries: [], packages: [], skipped: [], files: 0, bytes: 0, prunedFiles: 0, prunedBytes: 0 };
  for (const pkg of closure) {
    const rel = pkg.location.replace(/^node_modules\//, '');
    const dir = join(options.nodeModulesDir, ...rel.split('/'));
    let manifest: { version?: string };
    try {
      manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version?: string };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && pkg.optional) {
        out.skipped.push(pkg);
        continue;
      }
      throw environmentError('operator-image-dependency-missing', `${pkg.name}@${pkg.version} is not installed at ${dir}`, {
        place: dir,
        hint: 'install the locked dependencies first: npm ci',
        cause: err,
      });
    }
    if (manifest.version !== pkg.version) {
      throw environmentError('operator-image-dependency-version', `${dir} holds ${pkg.name}@${manifest.version ?? '?'}, the lockfile wants ${pkg.version}`, {
        place: dir,
        hint: 'node_modules does not match package-lock.json: run npm ci',
      });
    }
    const target = `${at}/${rel}`;
    out.entries.push({ path: target, type: 'dir', mode: 0o755 });
    const walk = async (abs: string, relPath: string): Promise<void> => {
      for (const name of (await readdir(abs)).sort()) {
        if (!relPath && name === 'node_modules') continue;
        const full = join(abs, name);
        const inPkg = relPath ? `${relPath}/${name}` : name;
        const st = await lstat(full);
        if (st.isDirectory()) {
          out.entries.push({ path: `${target}/${inPkg}`, type: 'dir', mode: 0o755 });
          await walk(full, inPkg);
        } else if (st.isFile()) {
          if (prune && isPrunable(name)) {
            out.prunedFiles++;
            out.prunedBytes += st.size;
            continue;
          }
          out.entries.push({ path: `${target}/${inPkg}`, type: 'file', source: full, size: st.size, mode: normalizeMode(st.mode, false) });
          out.files++;
          out.bytes += st.size;
        } else if (st.isSymbolicLink()) {
          const link = await readlink(full);
          const resolved = posix.normalize(posix.join(posix.dirname(inPkg), link));
          if (link.startsWith('/') || resolved === '..' || resolved.startsWith('../')) {
            throw validationError('operator-image-dependency-symlink', `${full} links outside its package (${link})`, { place: full, hint: 'reinstall the package with npm ci' });
          }
          out.entries.push({ path: `${target}/${inPkg}`, type: 'symlink', target: link });
        } else {
          throw validationError('image-unsupported-file', `${full} is neither a file, a directory nor a symlink`, { place: full });
        }
      }
    };
    await walk(dir, '');
    out.packages.push(pkg);
  }
  return out;
}
