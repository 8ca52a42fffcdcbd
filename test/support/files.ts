/** Every file under a directory, by path relative to it: for byte-for-byte comparisons of outputs. */
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

export async function tree(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else out.set(relative(dir, full), await readFile(full));
    }
  };
  await walk(dir);
  return out;
}
