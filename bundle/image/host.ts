/**
 * Files for a runtime layer taken from this machine: an executable and the shared libraries the dynamic
 * loader would load for it (from `ldd`), each placed at the path the loader looks for it, so the
 * binary runs in an image that has nothing else.
 */
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { promisify } from 'node:util';
import { environmentError } from '../../lib/errors.js';
import type { LayerEntry } from './tar.js';

const run = promisify(execFile);

/** Parses `ldd` output into the absolute paths it names (libraries and the loader). */
export function parseLdd(output: string): string[] {
  const paths = new Set<string>();
  for (const line of output.split('\n')) {
    const arrow = /=>\s+(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (arrow) paths.add(arrow[1]!);
    else {
      const direct = /^\s*(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
      if (direct) paths.add(direct[1]!);
    }
  }
  return [...paths].sort();
}

/**
 * Layer entries for `binary` (at `at`, default its own path) and its shared libraries (at their own
 * paths); symlinks are resolved so each entry holds the real file.
 */
export async function hostBinaryEntries(binary: string, options: { at?: string; mode?: number } = {}): Promise<LayerEntry[]> {
  let out: string;
  try {
    out = (await run('ldd', [binary], { encoding: 'utf8' })).stdout;
  } catch (err) {
    const text = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    if (/not a dynamic executable|statically linked/.test(text)) out = '';
    else throw environmentError('image-ldd', `cannot list the shared libraries of ${binary}: ${(err as Error).message}`, { hint: 'ldd (libc-bin) must be installed' });
  }
  const entries: LayerEntry[] = [{ path: options.at ?? binary, type: 'file', source: await realpath(binary), size: -1, mode: options.mode ?? 0o755 }];
  for (const lib of parseLdd(out)) {
    entries.push({ path: lib, type: 'file', source: await realpath(lib), size: -1, mode: 0o755 });
  }
  return entries;
}
