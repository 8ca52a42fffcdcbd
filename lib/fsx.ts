/**
 * Atomic writes: every output is written to a temporary sibling and renamed into place, so a failed
 * run leaves either the old content or the new one, never a half-written file or directory.
 */
import { mkdir, rename, rm, writeFile, mkdtemp, stat } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Builds a directory in a temporary sibling and swaps it into place when `fill` succeeds.
 * The previous directory, if any, is removed only after the new one is complete.
 */
export async function replaceDirAtomic(path: string, fill: (tmpDir: string) => Promise<void>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = await mkdtemp(join(dirname(path), `.${basename(path)}.`));
  try {
    await fill(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const old = `${tmp}.old`;
  const existed = await exists(path);
  if (existed) await rename(path, old);
  await rename(tmp, path);
  if (existed) await rm(old, { recursive: true, force: true });
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
