/**
 * Retries, backoff, Retry-After, dropped connections and timeouts: a fault-injecting proxy in front of
 * the REAL registry, and an injected clock that records the waits instead of sleeping.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { OlmpubError } from '../../../lib/errors.js';
import { MediaType, type Descriptor } from '../../../bundle/oci/content.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import type { Clock } from '../../../bundle/oci/retry.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { buildImage } from '../../../bundle/image/build.js';
import { FaultProxy } from './proxy.js';
import { client, registries, tempDir, uniqueRepo } from './support.js';

/** A clock whose sleeps return at once and are recorded; jitter fixed at the midpoint. */
function recordingClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  return { waits, now: () => Date.now(), random: () => 0.5, sleep: async (ms) => void waits.push(ms) };
}

const layer = (bytes: Buffer): Descriptor => ({ mediaType: MediaType.LayerGzip, digest: sha256(bytes), size: bytes.length });

describe('oci integration: faults between client and the real registry', function () {
  this.timeout(120_000);
  let proxy: FaultProxy;
  let addr: string;
  beforeEach(async () => {
    proxy = new FaultProxy(registries().registry);
    addr = await proxy.start();
  });
  afterEach(() => proxy.stop());

  it('retries 5xx with the oras-go backoff schedule, then succeeds', async () => {
    const clock = recordingClock();
    let failures = 3;
    proxy.rule = (req) => (req.method === 'HEAD' && failures-- > 0 ? { kind: 'status', status: 503 } : undefined);
    const { client: c, events } = client(addr, { clock });
    const bytes = randomBytes(100);
    assert.equal(await c.repository(uniqueRepo('5xx')).exists(layer(bytes)), false);
    assert.deepEqual(clock.waits, [250, 500, 1000]);
    assert.deepEqual(events.map((e) => `${e.status}/${e.attempt}`), ['503/0', '503/1', '503/2', '404/3']);
    c.close();
  });

  it('gives up after 5 retries with the registry error', async () => {
    const clock = recordingClock();
    proxy.rule = (req) => (req.method === 'HEAD' ? { kind: 'status', status: 500 } : undefined);
    const { client: c } = client(addr, { clock });
    await assert.rejects(c.repository(uniqueRepo('500')).resolve('v1'), (err: unknown) => err instanceof OlmpubError && err.code === 'oci-registry-error' && /: 500$/.test(err.message));
    assert.deepEqual(clock.waits, [250, 500, 1000, 2000, 3000]);
    c.close();
  });

  it('honours Retry-After on 429', async () => {
    const clock = recordingClock();
    let once = true;
    proxy.rule = (req) => {
      if (req.method === 'POST' && once) {
        once = false;
        return { kind: 'status', status: 429, headers: { 'Retry-After': '2' } };
      }
      return undefined;
    };
    const { client: c } = client(addr, { clock });
    const bytes = randomBytes(1000);
    const repo = c.repository(uniqueRepo('429'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(clock.waits, [2000]);
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    c.close();
  });

  it('resumes a chunked upload from the registry Range after a dropped connection', async () => {
    const clock = recordingClock();
    let patches = 0;
    proxy.rule = (req) => (req.method === 'PATCH' && ++patches === 3 ? { kind: 'drop-before-forward', afterBytes: 10_000 } : undefined);
    const { client: c } = client(addr, { clock, chunkSize: 64 * 1024, chunkThreshold: 0 });
    const bytes = randomBytes(5 * 64 * 1024 + 3);
    const repo = c.repository(uniqueRepo('resume'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    const methods = proxy.seen.map((r) => `${r.method}${r.contentRange ? ` ${r.contentRange}` : ''}${r.fault ? ' (dropped)' : ''}`);
    assert.deepEqual(methods, [
      'POST',
      'PATCH 0-65535',
      'PATCH 65536-131071',
      'PATCH 131072-196607 (dropped)',
      'GET',
      'PATCH 131072-196607',
      'PATCH 196608-262143',
      'PATCH 262144-327679',
      'PATCH 327680-327682',
      'PUT',
      'GET',
    ]);
    assert.equal(clock.waits.length, 1);
    c.close();
  });

  it('starts a new upload session when the registry lost the interrupted one', async () => {
    // After a dropped PATCH the client asks where the upload stands; a registry that lost the session
    // answers 404 (BLOB_UPLOAD_UNKNOWN). The proxy answers that one GET as such a registry would.
    const clock = recordingClock();
    let patches = 0;
    let dropped = false;
    proxy.rule = (req) => {
      if (req.method === 'PATCH' && ++patches === 2) {
        dropped = true;
        return { kind: 'drop-before-forward', afterBytes: 20_000 };
      }
      if (req.method === 'GET' && dropped && req.url?.includes('/blobs/uploads/')) {
        dropped = false;
        return { kind: 'status', status: 404 };
      }
      return undefined;
    };
    const { client: c } = client(addr, { clock, chunkSize: 64 * 1024, chunkThreshold: 0 });
    const bytes = randomBytes(3 * 64 * 1024);
    const repo = c.repository(uniqueRepo('restart'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    const methods = proxy.seen.map((r) => `${r.method}${r.contentRange ? ` ${r.contentRange}` : ''}${r.fault ? ` (${r.fault})` : ''}`);
    assert.deepEqual(methods.slice(0, 5), ['POST', 'PATCH 0-65535', 'PATCH 65536-131071 (drop-before-forward)', 'GET (status)', 'POST']);
    assert.deepEqual(methods.slice(5), ['PATCH 0-65535', 'PATCH 65536-131071', 'PATCH 131072-196607', 'PUT', 'GET']);
    c.close();
  });

  it('starts a new upload session when a PATCH is refused as BLOB_UPLOAD_INVALID', async () => {
    // What docker-registry answers when it invalidated the session after the status GET looked fine.
    const clock = recordingClock();
    let patches = 0;
    proxy.rule = (req) => (req.method === 'PATCH' && ++patches === 2 ? { kind: 'status', status: 404, errorCode: 'BLOB_UPLOAD_INVALID' } : undefined);
    const { client: c } = client(addr, { clock, chunkSize: 64 * 1024, chunkThreshold: 0 });
    const bytes = randomBytes(3 * 64 * 1024);
    const repo = c.repository(uniqueRepo('invalid'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    assert.deepEqual(
      proxy.seen.map((r) => `${r.method}${r.contentRange ? ` ${r.contentRange}` : ''}${r.fault ? ` (${r.fault})` : ''}`),
      ['POST', 'PATCH 0-65535', 'PATCH 65536-131071 (status)', 'POST', 'PATCH 0-65535', 'PATCH 65536-131071', 'PATCH 131072-196607', 'PUT', 'GET'],
    );
    c.close();
  });

  it('does not restart on any other 404 from a PATCH: the registry error is reported', async () => {
    const clock = recordingClock();
    proxy.rule = (req) => (req.method === 'PATCH' ? { kind: 'status', status: 404, errorCode: 'NAME_UNKNOWN' } : undefined);
    const { client: c } = client(addr, { clock, chunkSize: 64 * 1024, chunkThreshold: 0 });
    const bytes = randomBytes(2 * 64 * 1024);
    await assert.rejects(c.repository(uniqueRepo('gone')).pushBlob(layer(bytes), bufferSource(bytes)), /404 NAME_UNKNOWN/);
    assert.equal(proxy.seen.filter((r) => r.method === 'POST').length, 1);
    c.close();
  });

  it('completes when part of a PATCH body reached the real registry before the connection dropped', async () => {
    // docker-registry 2.8.2 either keeps the session (the partial write never landed: resume from its
    // Range) or invalidates it (its stored size no longer matches its state token: start over). Which
    // one depends on timing inside the registry; both must end with the exact bytes stored.
    const clock = recordingClock();
    let patches = 0;
    proxy.rule = (req) => (req.method === 'PATCH' && ++patches === 2 ? { kind: 'drop-mid-forward', afterBytes: 20_000 } : undefined);
    const { client: c } = client(addr, { clock, chunkSize: 64 * 1024, chunkThreshold: 0 });
    const bytes = randomBytes(3 * 64 * 1024);
    const repo = c.repository(uniqueRepo('partial'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    const sessions = proxy.seen.filter((r) => r.method === 'POST').length;
    assert.ok(sessions === 1 || sessions === 2, `one upload session resumed, or a second one started (saw ${sessions})`);
    assert.equal(proxy.seen.filter((r) => r.method === 'PUT').length, 1, 'the upload is closed once');
    c.close();
  });

  it('retries a monolithic upload whose connection dropped mid-body', async () => {
    const clock = recordingClock();
    let puts = 0;
    proxy.rule = (req) => (req.method === 'PUT' && req.url?.includes('/blobs/uploads/') && ++puts === 1 ? { kind: 'drop-mid-forward', afterBytes: 30_000 } : undefined);
    const { client: c } = client(addr, { clock });
    const bytes = randomBytes(200_000);
    const repo = c.repository(uniqueRepo('mono'));
    await repo.pushBlob(layer(bytes), bufferSource(bytes));
    assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
    assert.equal(proxy.seen.filter((r) => r.method === 'POST').length, 2);
    c.close();
  });

  it('times out a stalled request and retries it', async () => {
    const clock = recordingClock();
    let stalls = 1;
    proxy.rule = (req) => (req.method === 'HEAD' && stalls-- > 0 ? { kind: 'stall' } : undefined);
    const { client: c } = client(addr, { clock, timeoutMs: 2000 });
    assert.equal(await c.repository(uniqueRepo('stall')).exists(layer(randomBytes(10))), false);
    assert.deepEqual(clock.waits, [250]);
    c.close();
  });

  it('never writes the tag when a copy fails, and writes it once the copy is retried', async () => {
    const { dir, cleanup } = await tempDir('notag');
    const clock = recordingClock();
    try {
      const layout = new OciLayoutStore(dir);
      await buildImage({ store: layout, tag: 'v1', layers: [{ files: { '/a': randomBytes(3000) } }, { files: { '/b': randomBytes(3000) } }] });
      proxy.rule = (req) => (req.method === 'POST' && proxy.seen.filter((r) => r.method === 'POST').length === 2 ? { kind: 'status', status: 400 } : undefined);
      const { client: c } = client(addr, { clock });
      const repo = c.repository(uniqueRepo('notag'));
      await assert.rejects(copy(layout, 'v1', repo, 'v1'), (err: unknown) => err instanceof OlmpubError && /400/.test(err.message));
      assert.deepEqual(await repo.tags(), []);
      assert.equal(proxy.seen.filter((r) => r.method === 'PUT' && r.path.includes('/manifests/')).length, 0, 'no manifest PUT at all');
      proxy.rule = () => undefined;
      await copy(layout, 'v1', repo, 'v1');
      assert.deepEqual(await repo.tags(), ['v1']);
      c.close();
    } finally {
      await cleanup();
    }
  });
});
