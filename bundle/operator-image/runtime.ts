/**
 * The runtime under the operator: this machine's node binary with its shared libraries and dynamic
 * loader, plus the few system files a non-root Node.js process needs (passwd/group naming 65532
 * "nonroot", nsswitch.conf, CA certificates, a sticky world-writable /tmp). With a base image, its
 * filesystem is scanned (layers in order, whiteouts applied) to find an existing node executable and the
 * symlinked directories (/lib → usr/lib) new files must go through.
 */
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { validationError } from '../../lib/errors.js';
import type { ImageConfig, ImageManifest } from '../oci/content.js';
import type { Store } from '../oci/store.js';
import { hostBinaryEntries } from '../image/host.js';
import { openLayer } from '../image/unpack.js';
import type { LayerEntry } from '../image/tar.js';

/** The unprivileged user the image runs as (distroless' "nonroot"). */
export const NONROOT_UID = 65532;
export const NONROOT_GID = 65532;
/** Where the entrypoint expects node. */
export const NODE_PATH = '/usr/local/bin/node';
/** Where the CA bundle goes (Debian's path, which OpenSSL-based tools and SSL_CERT_FILE use). */
export const CA_BUNDLE_PATH = '/etc/ssl/certs/ca-certificates.crt';
export const DEFAULT_PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export const PASSWD = [
  'root:x:0:0:root:/root:/sbin/nologin',
  'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
  `nonroot:x:${NONROOT_UID}:${NONROOT_GID}:nonroot:/home/nonroot:/sbin/nologin`,
  '',
].join('\n');

export const GROUP = ['root:x:0:', 'nobody:x:65534:', `nonroot:x:${NONROOT_GID}:`, ''].join('\n');

/** Files only; `hosts: files dns` so that /etc/hosts (mounted by the kubelet) and cluster DNS both work. */
export const NSSWITCH = ['passwd: files', 'group: files', 'shadow: files', 'hosts: files dns', 'networks: files', 'protocols: files', 'services: files', ''].join('\n');

export interface SystemFilesOptions {
  /** Host CA bundle to copy to /etc/ssl/certs/ca-certificates.crt; false leaves it out. */
  caCertificates: string | false;
}

/** /etc files, /tmp (1777), /root (0700) and /home/nonroot (0700, owned by 65532). Pure. */
export function systemEntries(options: SystemFilesOptions): LayerEntry[] {
  const entries: LayerEntry[] = [
    { path: '/etc/passwd', type: 'file', content: PASSWD, mode: 0o644 },
    { path: '/etc/group', type: 'file', content: GROUP, mode: 0o644 },
    { path: '/etc/nsswitch.conf', type: 'file', content: NSSWITCH, mode: 0o644 },
    { path: '/tmp', type: 'dir', mode: 0o1777 },
    { path: '/root', type: 'dir', mode: 0o700 },
    { path: '/home', type: 'dir', mode: 0o755 },
    { path: '/home/nonroot', type: 'dir', mode: 0o700, uid: NONROOT_UID, gid: NONROOT_GID },
  ];
  if (options.caCertificates !== false) {
    entries.push({ path: '/etc/ssl', type: 'dir', mode: 0o755 });
    entries.push({ path: '/etc/ssl/certs', type: 'dir', mode: 0o755 });
    entries.push({ path: CA_BUNDLE_PATH, type: 'file', source: options.caCertificates, size: -1, mode: 0o644 });
  }
  return entries;
}

/** The node binary at /usr/local/bin/node and its libraries and loader at the paths `ldd` names. */
export async function nodeEntries(nodeBinary: string): Promise<LayerEntry[]> {
  return hostBinaryEntries(nodeBinary, { at: NODE_PATH, mode: 0o755 });
}

/** What a filesystem path is in the final state of an image. */
export type FsNode = { type: 'file' } | { type: 'dir' } | { type: 'symlink'; target: string } | { type: 'other' };

/** The final filesystem of an image as paths (no leading slash) → node. */
export class ImageTree {
  readonly nodes = new Map<string, FsNode>();

  /** Applies one layer's entry list (whiteouts included), as unpacking would. */
  apply(entries: Array<{ path: string; node: FsNode }>): void {
    const here = new Set<string>();
    const removeTree = (path: string, keep?: Set<string>) => {
      for (const key of [...this.nodes.keys()]) {
        if ((key === path || key.startsWith(`${path}/`) || path === '') && !keep?.has(key)) this.nodes.delete(key);
      }
    };
    for (const { path, node } of entries) {
      const name = posix.normalize(`/${path}`).replace(/^\/+/, '').replace(/\/+$/, '');
      if (!name || name === '.') continue;
      const dir = posix.dirname(name) === '.' ? '' : posix.dirname(name);
      const base = posix.basename(name);
      if (base === '.wh..wh..opq') {
        for (const key of [...this.nodes.keys()]) if ((dir === '' || key.startsWith(`${dir}/`)) && !here.has(key)) this.nodes.delete(key);
        continue;
      }
      if (base.startsWith('.wh.')) {
        const victim = dir ? `${dir}/${base.slice(4)}` : base.slice(4);
        if (!here.has(victim)) removeTree(victim, here);
        continue;
      }
      const prev = this.nodes.get(name);
      if (prev && prev.type === 'dir' && node.type !== 'dir') removeTree(name, here);
      this.nodes.set(name, node);
      here.add(name);
    }
  }

  /**
   * Resolves `path` through the symlinks of the tree (all components, or all but the last), staying
   * inside the root. Returns the resolved path without a leading slash.
   */
  resolve(path: string, followLast = true): string {
    const parts = path.split('/').filter((p) => p && p !== '.');
    const done: string[] = [];
    let hops = 0;
    while (parts.length) {
      const part = parts.shift()!;
      if (part === '..') {
        done.pop();
        continue;
      }
      const candidate = [...done, part].join('/');
      const node = this.nodes.get(candidate);
      if (node?.type === 'symlink' && (parts.length > 0 || followLast)) {
        if (++hops > 64) throw validationError('image-symlink-loop', `too many symlinks resolving /${path} in the base image`);
        if (node.target.startsWith('/')) done.length = 0;
        parts.unshift(...node.target.split('/').filter((p) => p && p !== '.'));
        continue;
      }
      done.push(part);
    }
    return done.join('/');
  }

  /** What `path` is once symlinks are followed. */
  lookup(path: string): FsNode | undefined {
    return this.nodes.get(this.resolve(path, true));
  }
}

/** Reads the entry list of an uncompressed layer tar (no contents). */
export async function layerIndex(stream: Readable): Promise<Array<{ path: string; node: FsNode }>> {
  const out: Array<{ path: string; node: FsNode }> = [];
  const extract = tar.extract();
  await new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, body, next) => {
      const node: FsNode =
        header.type === 'directory' ? { type: 'dir' }
        : header.type === 'symlink' ? { type: 'symlink', target: header.linkname ?? '' }
        : header.type === 'file' || header.type === 'contiguous-file' || header.type === 'link' ? { type: 'file' }
        : { type: 'other' };
      out.push({ path: header.name, node });
      body.on('end', () => next());
      body.resume();
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    stream.on('error', (err) => extract.destroy(err));
    stream.pipe(extract as unknown as NodeJS.WritableStream);
  });
  return out;
}

/** The final filesystem tree of an image's layers (each layer blob is read once, contents skipped). */
export async function imageTree(store: Store, manifest: ImageManifest, signal?: AbortSignal): Promise<ImageTree> {
  const tree = new ImageTree();
  for (const layer of manifest.layers) tree.apply(await layerIndex(await openLayer(store, layer, signal)));
  return tree;
}

/** Where node may be in a base image: its PATH, then the usual places (official images, distroless, Debian). */
export function nodeCandidates(config: ImageConfig): string[] {
  const path = (config.config?.Env ?? []).find((e) => e.startsWith('PATH='))?.slice(5) ?? '';
  const fromPath = path.split(':').filter((d) => d.startsWith('/')).map((d) => posix.join(d, 'node'));
  return [...new Set([NODE_PATH, ...fromPath, '/usr/bin/node', '/nodejs/bin/node', '/bin/node'])];
}

/** The first candidate that is a regular file (symlinks followed) in the tree, as an absolute path. */
export function findNode(tree: ImageTree, config: ImageConfig): string | undefined {
  for (const candidate of nodeCandidates(config)) {
    if (tree.lookup(candidate)?.type === 'file') return candidate;
  }
  return undefined;
}

/** The version a base image declares for its node (`NODE_VERSION`, as the official images set it). */
export function declaredNodeVersion(config: ImageConfig): string | undefined {
  const v = (config.config?.Env ?? []).find((e) => e.startsWith('NODE_VERSION='))?.slice('NODE_VERSION='.length);
  return v ? v.replace(/^v/, '') : undefined;
}

/**
 * Entries placed on top of a base image: each path's directories are resolved through the base's
 * symlinks (so a file for /lib/x86_64-linux-gnu lands in usr/lib/x86_64-linux-gnu when /lib → usr/lib),
 * and explicit directory entries the base already has as directories are dropped so their metadata stays.
 */
export function throughBase(entries: LayerEntry[], tree: ImageTree): LayerEntry[] {
  const out: LayerEntry[] = [];
  for (const e of entries) {
    const clean = e.path.replace(/^\/+/, '');
    const dir = posix.dirname(clean) === '.' ? '' : posix.dirname(clean);
    const resolvedDir = dir ? tree.resolve(dir, true) : '';
    const path = `/${resolvedDir ? `${resolvedDir}/` : ''}${posix.basename(clean)}`;
    if (e.type === 'dir' && tree.lookup(path)?.type === 'dir') continue;
    out.push({ ...e, path } as LayerEntry);
  }
  return out;
}
