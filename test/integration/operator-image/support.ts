/** Base images for the operator image tests, shaped like Debian's (merged /usr: /lib → usr/lib), built without Docker. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildImage, type BuiltImage } from '../../../bundle/image/build.js';
import { hostBinaryEntries } from '../../../bundle/image/host.js';
import type { LayerEntry } from '../../../bundle/image/tar.js';
import type { Store } from '../../../bundle/oci/store.js';
import { REPO_ROOT } from '../../support/env.js';

const run = promisify(execFile);

/** Moves /lib/... and /lib64/... to usr/, as a merged-/usr distribution stores them. */
const merged = (e: LayerEntry): LayerEntry => ({ ...e, path: e.path.replace(/^\/(lib|lib64|bin)\//, '/usr/$1/') }) as LayerEntry;

/**
 * A Debian-like base: /lib, /lib64 and /bin are symlinks into /usr, /etc/os-release, a marker file in
 * /usr/lib/x86_64-linux-gnu. With `node`, a second layer puts this machine's node at /usr/bin/node
 * (with its libraries) and a decoy at /usr/local/bin/node that a third layer whites out.
 */
export async function debianLikeBase(store: Store, tag: string, options: { node?: boolean; nodeVersion?: string; base?: { store: Store; reference: string } } = {}): Promise<BuiltImage> {
  const skeleton: LayerEntry[] = [
    { path: '/lib', type: 'symlink', target: 'usr/lib' },
    { path: '/lib64', type: 'symlink', target: 'usr/lib64' },
    { path: '/bin', type: 'symlink', target: 'usr/bin' },
    { path: '/usr/lib/x86_64-linux-gnu/base-marker', type: 'file', content: 'from the base\n' },
    { path: '/usr/lib64', type: 'dir' },
    { path: '/usr/local/bin', type: 'dir' },
    { path: '/etc/os-release', type: 'file', content: 'ID=olmpub-test-base\n' },
  ];
  const layers = options.base ? [] : [{ files: skeleton, createdBy: 'skeleton' }];
  if (options.node && !options.base) {
    const node = (await hostBinaryEntries(process.execPath, { at: '/usr/bin/node' })).map(merged);
    layers.push({ files: [...node, { path: '/usr/local/bin/node', type: 'file', content: '#!/bin/false\n', mode: 0o755 }], createdBy: 'node' });
    layers.push({ files: [{ path: '/usr/local/bin/.wh.node', type: 'file', content: '' }], createdBy: 'remove the decoy' });
  }
  const nodeVersion = options.nodeVersion ?? (options.node ? process.versions.node : undefined);
  return buildImage({
    store,
    tag,
    created: 1_600_000_000,
    gzipLevel: 1,
    ...(options.base ? { base: options.base } : {}),
    layers,
    config: { env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...(nodeVersion ? { NODE_VERSION: nodeVersion } : {}) } },
  });
}

/** Runs the CLI as a user would, from the repository's bin/olmpub.js. */
export async function olmpub(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [join(REPO_ROOT, 'bin/olmpub.js'), ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, encoding: 'utf8', maxBuffer: 32 * 1024 * 1024, timeout: 300_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Runs the image's entrypoint with `args` under chroot as 65532:65532, with the image's environment. */
export async function inChroot(root: string, env: string[], argv: string[], extraEnv: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  // Found on this machine's PATH: the image's PATH is for inside the chroot.
  const chroot = (process.env.PATH ?? '/usr/sbin:/usr/bin').split(':').map((d) => join(d, 'chroot')).find((p) => existsSync(p)) ?? '/usr/sbin/chroot';
  return run(chroot, ['--userspec=65532:65532', root, ...argv], {
    env: { ...Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])), ...extraEnv },
    encoding: 'utf8',
    maxBuffer: 32 * 1024 * 1024,
    timeout: 120_000,
  });
}

