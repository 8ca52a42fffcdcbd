/** The distribution client against the REAL open registry of scripts/testenv (Debian docker-registry 2.8.2). */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { MediaType, type Descriptor } from '../../../bundle/oci/content.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { buildImage } from '../../../bundle/image/build.js';
import { client, count, registries, tempDir, uniqueRepo } from './support.js';

function blob(bytes: Buffer, mediaType: string = MediaType.LayerGzip): { desc: Descriptor; bytes: Buffer } {
  return { desc: { mediaType, digest: sha256(bytes), size: bytes.length }, bytes };
}

function manifestOf(config: Descriptor, layers: Descriptor[]) {
  return blob(Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ImageManifest, config, layers })), MediaType.ImageManifest);
}

describe('oci integration: distribution client on the real registry', function () {
  this.timeout(180_000);
  let host: string;
  before(() => {
    host = registries().registry;
  });

  it('pushes a blob and a manifest and reads them back byte-identical', async () => {
    const { client: c, events } = client(host);
    const repo = c.repository(uniqueRepo('roundtrip'));
    const layer = blob(randomBytes(300_000));
    const config = blob(Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}'), MediaType.ImageConfig);
    const m = manifestOf(config.desc, [layer.desc]);
    await repo.pushBlob(layer.desc, bufferSource(layer.bytes));
    await repo.pushBlob(config.desc, bufferSource(config.bytes));
    await repo.pushManifest(m.desc, m.bytes, { tag: 'v1' });
    assert.deepEqual(await readAll(await repo.fetchBlob(layer.desc)), layer.bytes);
    assert.deepEqual(Buffer.from(await repo.fetchManifest(m.desc)), m.bytes);
    assert.deepEqual(await repo.resolve('v1'), m.desc);
    assert.deepEqual(await readAll(await repo.fetchBlob(layer.desc, { offset: 299_990 })), layer.bytes.subarray(299_990), 'ranged read');
    assert.deepEqual(await repo.tags(), ['v1']);
    assert.equal(count(events, 'POST', '/blobs/uploads/'), 2, 'one upload session per blob');
    assert.equal(count(events, 'PATCH'), 0, 'small blobs go monolithic');
    c.close();
  });

  it('checks with HEAD before uploading and skips blobs that exist', async () => {
    const { client: c, events } = client(host);
    const { dir, cleanup } = await tempDir('head');
    try {
      const layout = new OciLayoutStore(dir);
      await buildImage({ store: layout, tag: 'v1', layers: [{ files: { '/a': randomBytes(1000) } }, { files: { '/b': 'b' } }], config: { cmd: ['/a'] } });
      const repo = c.repository(uniqueRepo('head'));
      const first = await copy(layout, 'v1', repo, 'v1');
      assert.equal(first.copied, 4);
      const uploadsBefore = count(events, 'POST', '/blobs/uploads/');
      assert.equal(uploadsBefore, 3, 'two layers and the config');
      const second = await copy(layout, 'v1', repo, 'v2');
      assert.equal(count(events, 'POST', '/blobs/uploads/'), uploadsBefore, 'nothing uploaded again');
      assert.equal(second.copied, 0);
      assert.equal(second.skipped, 1, 'the root manifest exists; its subtree is skipped');
      assert.deepEqual(await repo.tags(), ['v1', 'v2']);
      // Every blob upload was preceded by a HEAD of that blob.
      const heads = events.filter((e) => e.method === 'HEAD' && e.url.includes('/blobs/'));
      assert.ok(heads.length >= 3);
    } finally {
      await cleanup();
      c.close();
    }
  });

  it('mounts blobs across repositories of the same registry instead of uploading', async () => {
    const { client: c, events } = client(host);
    const src = c.repository(uniqueRepo('mount-src'));
    const dst = c.repository(uniqueRepo('mount-dst'));
    const layer = blob(randomBytes(200_000));
    const config = blob(Buffer.from('{}'), MediaType.ImageConfig);
    const m = manifestOf(config.desc, [layer.desc]);
    await src.pushBlob(layer.desc, bufferSource(layer.bytes));
    await src.pushBlob(config.desc, bufferSource(config.bytes));
    await src.pushManifest(m.desc, m.bytes, { tag: 'v1' });
    const before = events.length;
    const r = await copy(src, 'v1', dst, 'v1');
    assert.equal(r.mounted, 2);
    const after = events.slice(before);
    assert.equal(after.filter((e) => e.method === 'POST').length, 2);
    assert.equal(after.filter((e) => e.method === 'PUT' && e.url.includes('/blobs/')).length, 0, 'no blob bytes sent');
    assert.deepEqual(await readAll(await dst.fetchBlob(layer.desc)), layer.bytes);
    c.close();
  });

  it('uploads in chunks with Content-Range when asked or above the threshold', async () => {
    const { client: c, events } = client(host, { chunkSize: 64 * 1024, chunkThreshold: 150 * 1024 });
    const repo = c.repository(uniqueRepo('chunked'));
    const big = blob(randomBytes(200 * 1024 + 17));
    await repo.pushBlob(big.desc, bufferSource(big.bytes));
    assert.equal(count(events, 'PATCH'), 4, '3 full chunks of 64 KiB and a short one');
    assert.deepEqual(await readAll(await repo.fetchBlob(big.desc)), big.bytes);
    const small = blob(randomBytes(1000));
    const patches = count(events, 'PATCH');
    await repo.pushBlob(small.desc, bufferSource(small.bytes), { chunked: true });
    assert.equal(count(events, 'PATCH'), patches + 1);
    assert.deepEqual(await readAll(await repo.fetchBlob(small.desc)), small.bytes);
    c.close();
  });

  it('copies OCI layout → registry → OCI layout with identical digests and bytes', async () => {
    const { client: c } = client(host);
    const { dir, cleanup } = await tempDir('roundtrip');
    try {
      const a = new OciLayoutStore(join(dir, 'a'));
      const built = await buildImage({ store: a, tag: '1.0.0', index: true, layers: [{ files: { '/app/x': randomBytes(5000), '/app/y': 'y' } }], config: { entrypoint: ['/app/x'] } });
      const repo = c.repository(uniqueRepo('layout'));
      await copy(a, '1.0.0', repo, '1.0.0');
      const b = new OciLayoutStore(join(dir, 'b'));
      const r = await copy(repo, '1.0.0', b, '1.0.0');
      assert.equal(r.root.digest, built.root.digest);
      assert.equal(r.root.mediaType, MediaType.ImageIndex);
      for (const d of [built.root, built.manifest.descriptor, built.config.descriptor, ...built.blobs]) {
        assert.deepEqual(await readFile(b.blobPath(d.digest)), await readFile(a.blobPath(d.digest)), d.digest);
      }
    } finally {
      await cleanup();
      c.close();
    }
  });

  it('reports a missing tag and an unreachable registry as environment errors', async () => {
    const { client: c } = client(host);
    await assert.rejects(c.repository(uniqueRepo('missing')).resolve('nope'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-not-found' && err.exitCode === 3);
    c.close();
    const { client: dead } = client('127.0.0.1:1');
    await assert.rejects(dead.repository('x').resolve('v1'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-unreachable' && err.exitCode === 3);
    dead.close();
    const { client: tls } = client(host, { plainHttp: false });
    await assert.rejects(tls.repository('x').resolve('v1'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-tls' && /--plain-http/.test(err.hint ?? ''));
    tls.close();
  });
});
