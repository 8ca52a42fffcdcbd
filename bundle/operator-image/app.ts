/**
 * The app layer: the compiled JavaScript of the layers the CLI and the operator load (lib, operator,
 * bundle, catalog, cli; never test or bench), bin/olmpub.js and package.json (whose `"type": "module"`
 * makes Node.js load dist/ as ES modules and whose version `olmpub --version` prints), under /app.
 * Only outputs that have a TypeScript source are taken, so stale files left in dist/ by a deleted source
 * never reach the image. Files are read into memory when listed (a snapshot), not streamed later.
 */
import { lstat, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { environmentError } from '../../lib/errors.js';
import type { LayerEntry } from '../image/tar.js';
import { normalizeMode } from './deps.js';

/** The source folders whose compiled output the image carries. */
export const APP_DIRS = ['lib', 'operator', 'bundle', 'catalog', 'cli'] as const;
/** Where the app lives in the image (also the working directory). */
export const APP_ROOT = '/app';

export interface AppEntriesOptions {
  /** Holds package.json, bin/olmpub.js and the TypeScript sources. */
  repoRoot: string;
  /** The compiled output (tsconfig outDir). */
  distDir: string;
  /** Also take `.js.map` files. @default false */
  sourceMaps?: boolean;
  /** Folders of dist/ to take. @default APP_DIRS */
  dirs?: readonly string[];
}

export interface AppFiles {
  entries: LayerEntry[];
  files: number;
  bytes: number;
  /** Outputs without a source (left out) and outputs older than their source (taken, but likely stale). */
  warnings: string[];
}

export async function appEntries(options: AppEntriesOptions): Promise<AppFiles> {
  const { repoRoot, distDir } = options;
  const out: AppFiles = { entries: [], files: 0, bytes: 0, warnings: [] };
  const stale: string[] = [];
  const orphans: string[] = [];
  const addFile = async (source: string, path: string, mode?: number) => {
    let st;
    let content: Buffer;
    try {
      st = await stat(source);
      content = await readFile(source);
    } catch (err) {
      throw environmentError('operator-image-missing-file', `${source} is missing`, { place: source, hint: 'the image is built from a checkout of olmpub: run it from the repository', cause: err });
    }
    // Read now (about 1 MiB in all): a compiler rewriting dist/ during the build cannot tear the layer.
    out.entries.push({ path, type: 'file', content, mode: mode ?? normalizeMode(st.mode, false) });
    out.files++;
    out.bytes += content.length;
  };
  await addFile(join(repoRoot, 'package.json'), `${APP_ROOT}/package.json`, 0o644);
  await addFile(join(repoRoot, 'bin', 'olmpub.js'), `${APP_ROOT}/bin/olmpub.js`, 0o755);
  for (const top of options.dirs ?? APP_DIRS) {
    const root = join(distDir, top);
    try {
      await readdir(root);
    } catch (err) {
      throw environmentError('operator-image-not-built', `${root} does not exist: olmpub is not compiled`, { place: root, hint: 'compile first: npm run build', cause: err });
    }
    const walk = async (abs: string, rel: string): Promise<void> => {
      for (const name of (await readdir(abs)).sort()) {
        const full = join(abs, name);
        const relPath = `${rel}/${name}`;
        const st = await lstat(full);
        if (st.isDirectory()) {
          await walk(full, relPath);
          continue;
        }
        if (!st.isFile()) continue;
        const m = /^(.*)\.js(\.map)?$/.exec(relPath);
        if (!m || (m[2] && !options.sourceMaps)) continue;
        const src = join(repoRoot, `${m[1]}.ts`);
        const srcStat = await stat(src).catch(() => undefined);
        if (!srcStat) {
          if (!m[2]) orphans.push(`dist/${relPath}`);
          continue;
        }
        if (!m[2] && srcStat.mtimeMs > st.mtimeMs + 1000) stale.push(`dist/${relPath}`);
        await addFile(full, `${APP_ROOT}/dist/${relPath}`);
      }
    };
    await walk(root, top);
  }
  if (orphans.length) out.warnings.push(`left out ${orphans.length} compiled file(s) without a TypeScript source (stale output of deleted sources?): ${orphans.slice(0, 5).join(', ')}${orphans.length > 5 ? ', …' : ''}`);
  if (stale.length) out.warnings.push(`${stale.length} compiled file(s) are older than their source; run npm run build: ${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ', …' : ''}`);
  return out;
}
