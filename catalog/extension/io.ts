/** Writes the extension manifests folder atomically: all files or none. */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { replaceDirAtomic } from '../../lib/fsx.js';
import type { ExtensionManifests } from './manifests.js';

export async function writeExtensionDir(dir: string, manifests: ExtensionManifests): Promise<string[]> {
  const names = [...manifests.rendered.keys()].sort();
  await replaceDirAtomic(dir, async (tmp) => {
    for (const name of names) await writeFile(join(tmp, name), manifests.rendered.get(name)!);
  });
  return names;
}
