import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { DigestStream, checkDigest, digestHex, isDigest, sha256, verifyBytes } from '../../../bundle/oci/digest.js';

const EMPTY = 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

async function drain(data: Buffer, check: DigestStream): Promise<void> {
  await pipeline(Readable.from([data]), check, new Writable({ write: (_c, _e, cb) => cb() }));
}

describe('oci/digest', () => {
  it('computes sha256 digests', () => {
    assert.equal(sha256(''), EMPTY);
    assert.equal(sha256(Buffer.from('{}')), 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    assert.equal(digestHex(EMPTY), EMPTY.slice(7));
  });
  it('validates digest syntax', () => {
    assert.ok(isDigest(EMPTY));
    assert.ok(!isDigest('sha256:abc'));
    assert.ok(!isDigest(EMPTY.toUpperCase()));
    assert.ok(!isDigest(`md5:${'a'.repeat(32)}`));
    assert.throws(() => checkDigest('sha256:xyz'), /not a valid digest/);
  });
  it('verifies bytes against a descriptor', () => {
    verifyBytes(Buffer.alloc(0), { digest: EMPTY, size: 0 }, 't');
    assert.throws(() => verifyBytes(Buffer.from('x'), { digest: EMPTY, size: 1 }, 't'), /digest/);
    assert.throws(() => verifyBytes(Buffer.from('x'), { digest: EMPTY, size: 0 }, 't'), /expected 0 bytes/);
  });
  it('DigestStream hashes and counts, and fails on a mismatch at the end', async () => {
    const data = Buffer.from('hello');
    const ok = new DigestStream({ digest: sha256(data), size: 5, where: 't' });
    await drain(data, ok);
    assert.equal(ok.digest, sha256(data));
    assert.equal(ok.bytes, 5);
    await assert.rejects(drain(data, new DigestStream({ digest: EMPTY, size: 5, where: 't' })), /digest/);
    await assert.rejects(drain(data, new DigestStream({ digest: sha256(data), size: 4, where: 't' })), /more than the expected 4 bytes/);
  });
});
