import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { MediaType, type Descriptor } from '../../../bundle/oci/content.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { copy } from '../../../bundle/oci/copy.js';

function blob(text: string, mediaType: string = MediaType.LayerGzip): { desc: Descriptor; bytes: Buffer } {
  const bytes = Buffer.from(text);
  return { desc: { mediaType, digest: sha256(bytes), size: bytes.length }, bytes };
}

function image(layers: Descriptor[], config: Descriptor) {
  const bytes = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ImageManifest, config, layers }));
  return { desc: { mediaType: MediaType.ImageManifest, digest: sha256(bytes), size: bytes.length }, bytes };
}

describe('oci/layout: OCI image layout store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-layout-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('round-trips blobs, manifests and tags, in the image-spec layout', async () => {
    const store = new OciLayoutStore(join(dir, 'l'));
    const layer = blob('layer');
    const config = blob('{}', MediaType.ImageConfig);
    const m = image([layer.desc], config.desc);
    assert.equal(await store.exists(layer.desc), false);
    await store.pushBlob(layer.desc, bufferSource(layer.bytes));
    await store.pushBlob(config.desc, bufferSource(config.bytes));
    await store.pushManifest(m.desc, m.bytes, { tag: 'v1' });
    assert.ok(await store.exists(layer.desc));
    assert.deepEqual(await readAll(await store.fetchBlob(layer.desc)), layer.bytes);
    assert.deepEqual(Buffer.from(await store.fetchManifest(m.desc)), m.bytes);
    assert.deepEqual(await store.resolve('v1'), m.desc);
    assert.deepEqual(await store.resolve(m.desc.digest), m.desc);
    assert.equal(await readFile(join(dir, 'l', 'oci-layout'), 'utf8'), '{"imageLayoutVersion":"1.0.0"}');
    const index = JSON.parse(await readFile(join(dir, 'l', 'index.json'), 'utf8'));
    assert.deepEqual(index, {
      schemaVersion: 2,
      mediaType: MediaType.ImageIndex,
      manifests: [{ ...m.desc, annotations: { 'org.opencontainers.image.ref.name': 'v1' } }],
    });
    assert.deepEqual((await readdir(join(dir, 'l', 'blobs', 'sha256'))).sort(), [layer.desc, config.desc, m.desc].map((d) => d.digest.slice(7)).sort());
  });

  it('moves a tag, keeps other tags, and writes index.json in a stable order', async () => {
    const store = new OciLayoutStore(dir);
    const config = blob('{}', MediaType.ImageConfig);
    await store.pushBlob(config.desc, bufferSource(config.bytes));
    const a = image([], config.desc);
    const b = image([config.desc], config.desc);
    await store.pushManifest(b.desc, b.bytes, { tag: 'zeta' });
    await store.pushManifest(a.desc, a.bytes, { tag: 'v1' });
    await store.tag(a.desc, 'alpha');
    await store.tag(b.desc, 'v1');
    assert.deepEqual(await store.tags(), ['alpha', 'v1', 'zeta']);
    assert.equal((await store.resolve('v1')).digest, b.desc.digest);
    const names = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')).manifests.map((d: Descriptor) => d.annotations?.['org.opencontainers.image.ref.name']);
    assert.deepEqual(names, ['alpha', 'v1', 'zeta']);
  });

  it('refuses content that does not match its descriptor and leaves no file behind', async () => {
    const store = new OciLayoutStore(dir);
    const good = blob('good');
    await assert.rejects(store.pushBlob(good.desc, bufferSource(Buffer.from('evil'))), /digest/);
    await assert.rejects(store.pushBlob(good.desc, bufferSource(Buffer.from('good!'))), /more than the expected/);
    assert.deepEqual(await readdir(join(dir, 'blobs', 'sha256')), []);
    await assert.rejects(store.pushManifest(good.desc, Buffer.from('evil')), /digest|bytes/);
  });

  it('explains a missing tag, a missing layout and tagging absent content', async () => {
    const store = new OciLayoutStore(dir);
    await store.init();
    await assert.rejects(store.resolve('nope'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-not-found' && /no tags/.test(err.hint ?? ''));
    await assert.rejects(new OciLayoutStore(join(dir, 'nothing')).resolve('v1'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-layout-missing');
    await assert.rejects(store.tag(blob('x', MediaType.ImageManifest).desc, 'v1'), /not in the layout/);
  });

  it('copies between layouts: same digests, tag last, untagged copy by digest recorded as a root', async () => {
    const a = new OciLayoutStore(join(dir, 'a'));
    const layer = blob('L');
    const config = blob('{"c":1}', MediaType.ImageConfig);
    const m = image([layer.desc], config.desc);
    await a.pushBlob(layer.desc, bufferSource(layer.bytes));
    await a.pushBlob(config.desc, bufferSource(config.bytes));
    await a.pushManifest(m.desc, m.bytes, { tag: 'v1' });
    const b = new OciLayoutStore(join(dir, 'b'));
    const r = await copy(a, 'v1', b, 'v2');
    assert.equal(r.root.digest, m.desc.digest);
    assert.equal(r.copied, 3);
    assert.deepEqual(await b.tags(), ['v2']);
    const again = await copy(a, 'v1', b, 'v2');
    assert.equal(again.copied, 0);
    const c = new OciLayoutStore(join(dir, 'c'));
    await copy(a, m.desc.digest, c);
    const index = JSON.parse(await readFile(join(dir, 'c', 'index.json'), 'utf8'));
    assert.deepEqual(index.manifests, [m.desc]);
  });

  it('never writes the tag when a child is missing in the source', async () => {
    const a = new OciLayoutStore(join(dir, 'a'));
    const config = blob('{}', MediaType.ImageConfig);
    const m = image([blob('never stored').desc], config.desc);
    await a.pushBlob(config.desc, bufferSource(config.bytes));
    await a.pushManifest(m.desc, m.bytes, { tag: 'v1' });
    const b = new OciLayoutStore(join(dir, 'b'));
    await assert.rejects(copy(a, 'v1', b, 'v1'), /not found/);
    assert.deepEqual(await b.tags(), []);
    assert.equal(await b.exists(m.desc), false);
  });
});
