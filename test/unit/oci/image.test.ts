import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile, chmod, symlink, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { sha256 } from '../../../bundle/oci/digest.js';
import { MediaType } from '../../../bundle/oci/content.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { readAll } from '../../../bundle/oci/store.js';
import { GZIP_HEADER, gzipBytes } from '../../../bundle/image/gzip.js';
import { entriesFromDir, entriesFromFiles, normalizeEntries, readTar, sourceDateEpoch, tarStream } from '../../../bundle/image/tar.js';
import { buildImage, imageConfig, mergeEnv, type BuildImageOptions } from '../../../bundle/image/build.js';
import { applyLayer, unpackImage } from '../../../bundle/image/unpack.js';
import { parseLdd } from '../../../bundle/image/host.js';

async function tarBytes(files: Parameters<typeof entriesFromFiles>[0], options = {}): Promise<Buffer> {
  return readAll(tarStream(await normalizeEntries(entriesFromFiles(files)), options));
}

const listTar = (bytes: Buffer) => readTar(bytes);

describe('image: deterministic tar and gzip', () => {
  it('same input twice gives the same tar bytes, sorted, with explicit parent directories', async () => {
    const files = { '/usr/bin/tool': { content: '#!/bin/sh\n', mode: 0o755 }, '/etc/app.conf': 'x=1\n', '/usr/lib/a.so': 'elf' };
    const a = await tarBytes(files, { mtime: 0 });
    const b = await tarBytes(Object.fromEntries(Object.entries(files).reverse()), { mtime: 0 });
    assert.deepEqual(a, b);
    const entries = await listTar(a);
    assert.deepEqual(entries.map((e) => e.name), ['etc/', 'etc/app.conf', 'usr/', 'usr/bin/', 'usr/bin/tool', 'usr/lib/', 'usr/lib/a.so']);
    assert.ok(entries.every((e) => e.mtime === 0 && e.uid === 0 && e.gid === 0 && e.uname === ''));
    assert.equal(entries.find((e) => e.name === 'usr/bin/tool')!.mode, 0o755);
    assert.equal(entries.find((e) => e.name === 'etc/app.conf')!.mode, 0o644);
    assert.equal(entries.find((e) => e.name === 'usr/')!.type, 'directory');
  });
  it('uses SOURCE_DATE_EPOCH and configured owners', async () => {
    assert.equal(sourceDateEpoch({ SOURCE_DATE_EPOCH: '1700000000' }), 1700000000);
    assert.equal(sourceDateEpoch({}), 0);
    assert.throws(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: 'yesterday' }), /not a number/);
    const entries = await listTar(await tarBytes({ a: 'x' }, { mtime: 1700000000, uid: 65532, gid: 65532 }));
    assert.ok(entries.every((e) => e.mtime === 1700000000 && e.uid === 65532 && e.gid === 65532));
  });
  it('reads directories from disk with modes and symlinks, ignoring host mtimes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'olmpub-tar-'));
    try {
      await mkdir(join(dir, 'src', 'lib'), { recursive: true });
      await writeFile(join(dir, 'src', 'run.sh'), 'echo hi\n');
      await chmod(join(dir, 'src', 'run.sh'), 0o750);
      await writeFile(join(dir, 'src', 'lib', 'm.js'), 'export {}\n');
      await symlink('lib/m.js', join(dir, 'src', 'link.js'));
      const first = await readAll(tarStream(await normalizeEntries(await entriesFromDir(join(dir, 'src'), '/app')), { mtime: 0 }));
      await writeFile(join(dir, 'src', 'lib', 'm.js'), 'export {}\n'); // new mtime, same content
      const second = await readAll(tarStream(await normalizeEntries(await entriesFromDir(join(dir, 'src'), '/app')), { mtime: 0 }));
      assert.deepEqual(first, second);
      const entries = await listTar(first);
      assert.deepEqual(entries.map((e) => `${e.name} ${e.type} ${e.mode.toString(8)}`), [
        'app/ directory 755',
        'app/lib/ directory 755',
        'app/lib/m.js file 644',
        'app/link.js symlink 777',
        'app/run.sh file 750',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('rejects paths that leave the root, and duplicates', async () => {
    assert.throws(() => entriesFromFiles({ '../etc/passwd': 'x' }), /leaves the image root/);
    await assert.rejects(normalizeEntries([...entriesFromFiles({ '/a': 'x' }), ...entriesFromFiles({ 'a': 'y' })]), /appears twice/);
    await assert.rejects(normalizeEntries(entriesFromFiles({ '/a': 'x', '/a/b': 'y' })), /both a file and a directory/);
  });
  it('gzips deterministically: fixed header without mtime or name, identical bytes across runs', async () => {
    const data = Buffer.from('olmpub '.repeat(50_000));
    const a = await gzipBytes(data);
    const b = await gzipBytes(data);
    assert.deepEqual(a, b);
    assert.deepEqual(a.subarray(0, 10), GZIP_HEADER);
    assert.equal(a.readUInt32LE(4), 0, 'mtime is 0');
    assert.equal(a[3], 0, 'no FNAME/FCOMMENT/FEXTRA flags');
    assert.deepEqual(gunzipSync(a), data);
    assert.deepEqual(gunzipSync(await gzipBytes(Buffer.alloc(0))), Buffer.alloc(0));
  });
});

describe('image: config and build', () => {
  it('merges env by name and computes diff_ids and history', () => {
    assert.deepEqual(mergeEnv(['PATH=/bin', 'A=1'], ['A=2', 'B=3']), ['PATH=/bin', 'A=2', 'B=3']);
    const base = imageConfig(undefined, { env: { PATH: '/bin' }, cmd: ['sh'] }, [{ diffId: 'sha256:aa' }], { os: 'linux', architecture: 'amd64' }, '1970-01-01T00:00:00Z');
    const c = imageConfig(base, { entrypoint: ['/x'], user: '65532', labels: { l: 'v' } }, [{ diffId: 'sha256:bb', createdBy: 'app' }], { os: 'linux', architecture: 'amd64' }, 'T');
    assert.deepEqual(c.rootfs.diff_ids, ['sha256:aa', 'sha256:bb']);
    assert.deepEqual(c.config, { Env: ['PATH=/bin'], Entrypoint: ['/x'], User: '65532', Labels: { l: 'v' } }, 'entrypoint without cmd drops the base Cmd');
    assert.deepEqual(c.history?.map((h) => h.created_by), ['olmpub image build', 'app']);
  });

  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-build-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const spec = (store: OciLayoutStore): BuildImageOptions => ({
    store,
    tag: '1.0.0',
    created: 1700000000,
    layers: [
      { files: { '/app/main.js': { content: 'console.log(1)\n', mode: 0o644 }, '/app/bin/run': { content: '#!/bin/sh\n', mode: 0o755 } }, createdBy: 'app' },
      { files: { '/etc/motd': 'hello\n' }, uid: 65532, gid: 65532 },
    ],
    config: { entrypoint: ['/app/bin/run'], cmd: ['operator', 'run'], env: { NODE_ENV: 'production' }, user: '65532:65532', workingDir: '/app', labels: { 'org.opencontainers.image.title': 'olmpub' } },
    platform: { os: 'linux', architecture: 'amd64' },
  });

  it('builds the same digests twice, with diff_ids = sha256 of the uncompressed layers', async () => {
    const a = await buildImage(spec(new OciLayoutStore(join(dir, 'a'))));
    const b = await buildImage(spec(new OciLayoutStore(join(dir, 'b'))));
    assert.equal(a.root.digest, b.root.digest);
    assert.deepEqual(a.manifest.bytes, b.manifest.bytes);
    assert.deepEqual(a.config.bytes, b.config.bytes);
    const store = new OciLayoutStore(join(dir, 'a'));
    for (const [i, layer] of a.layers.entries()) {
      const blob = await readAll(await store.fetchBlob(layer.descriptor));
      assert.equal(sha256(gunzipSync(blob)), a.config.json.rootfs.diff_ids[i]);
      assert.equal(layer.descriptor.mediaType, MediaType.LayerGzip);
    }
    assert.equal(a.config.json.created, '2023-11-14T22:13:20Z');
    assert.deepEqual(a.config.json.config?.Cmd, ['operator', 'run']);
    assert.equal(a.config.json.config?.User, '65532:65532');
    assert.deepEqual(await store.resolve('1.0.0'), a.manifest.descriptor);
    // No temporary layer files are left behind in the layout.
    assert.deepEqual((await readdir(join(dir, 'a', 'blobs', 'sha256'))).filter((n) => n.includes('.')), []);
  });

  it('stacks layers on a base image read from a store, and writes an index when asked', async () => {
    const store = new OciLayoutStore(join(dir, 'l'));
    const base = await buildImage({ ...spec(store), tag: 'base', layers: [{ files: { '/bin/sh': 'sh', '/etc/os-release': 'base' } }], config: { env: { PATH: '/bin' }, cmd: ['/bin/sh'] } });
    const top = await buildImage({
      store,
      tag: 'top',
      created: 0,
      base: { store, reference: 'base' },
      index: true,
      layers: [{ files: { '/etc/os-release': 'top', '/etc/.wh.motd': '' } }],
      config: { env: { APP: '1' }, user: '65532' },
    });
    assert.equal(top.root.mediaType, MediaType.ImageIndex);
    assert.deepEqual(top.index!.json.manifests[0]!.platform, { os: 'linux', architecture: 'amd64' });
    assert.deepEqual(top.config.json.rootfs.diff_ids.slice(0, 1), base.config.json.rootfs.diff_ids);
    assert.equal(top.manifest.json.layers[0]!.digest, base.manifest.json.layers[0]!.digest);
    assert.deepEqual(top.config.json.config?.Env, ['PATH=/bin', 'APP=1']);
    assert.deepEqual(top.config.json.config?.Cmd, ['/bin/sh']);
    const root = join(dir, 'rootfs');
    const un = await unpackImage(store, 'top', root);
    assert.equal(un.config.config?.User, '65532');
    assert.equal(await readFile(join(root, 'etc/os-release'), 'utf8'), 'top');
    assert.equal(await readFile(join(root, 'bin/sh'), 'utf8'), 'sh');
  });
});

describe('image: unpack applies whiteouts inside the root', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-unpack-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const layer = async (files: Parameters<typeof entriesFromFiles>[0]) => Readable.from([await tarBytes(files, { mtime: 0 })]);
  /** A tar exactly as given: no parent directory entries (which would replace a symlink, as in containerd). */
  const rawLayer = async (files: Parameters<typeof entriesFromFiles>[0]) => Readable.from([await readAll(tarStream(entriesFromFiles(files), { mtime: 0 }))]);

  it('removes whited-out files, empties opaque directories, follows in-root symlinks', async () => {
    await applyLayer(dir, await layer({ '/a/keep': 'k', '/a/gone': 'g', '/o/old1': '1', '/o/sub/old2': '2', '/lib': { symlink: 'usr/lib' }, '/usr/lib/x': 'x', '/bin/tool': { content: 't', mode: 0o755 } }));
    await applyLayer(dir, await rawLayer({ '/a/.wh.gone': '', '/o/.wh..wh..opq': '', '/o/new': 'n', '/lib/y': 'y', '/bin/tool2': { hardlink: '/bin/tool' } }));
    assert.deepEqual((await readdir(join(dir, 'a'))).sort(), ['keep']);
    assert.deepEqual((await readdir(join(dir, 'o'))).sort(), ['new']);
    assert.equal(await readFile(join(dir, 'usr/lib/y'), 'utf8'), 'y', 'written through the lib -> usr/lib symlink');
    assert.equal(await readlink(join(dir, 'lib')), 'usr/lib');
    assert.equal((await stat(join(dir, 'bin/tool'))).mode & 0o777, 0o755);
    assert.equal((await stat(join(dir, 'bin/tool2'))).ino, (await stat(join(dir, 'bin/tool'))).ino);
  });

  it('keeps absolute symlinks and .. inside the root', async () => {
    await applyLayer(dir, await layer({ '/etc': { symlink: '/../../../../tmp' } }));
    await applyLayer(dir, await rawLayer({ '/etc/escaped': 'no' }));
    const evil = tar.pack();
    evil.entry({ name: '../../up', size: 2 }, 'no');
    evil.entry({ name: 'etc/../../../up2', size: 2 }, 'no');
    evil.finalize();
    await applyLayer(dir, Readable.from([await readAll(evil as unknown as Readable)]));
    assert.deepEqual((await readdir(dir)).sort(), ['etc', 'tmp', 'up', 'up2'], '.. stops at the root');
    assert.equal((await lstat(join(dir, 'tmp/escaped'))).isFile(), true, 'the absolute link resolved against the root');
  });
});

describe('image: host binaries', () => {
  it('parses ldd output', () => {
    const out = `\tlinux-vdso.so.1 (0x00007ffd)\n\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f83)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f83)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f83)\n`;
    assert.deepEqual(parseLdd(out), ['/lib/x86_64-linux-gnu/libc.so.6', '/lib/x86_64-linux-gnu/libstdc++.so.6', '/lib64/ld-linux-x86-64.so.2']);
  });
});
