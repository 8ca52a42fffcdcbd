/** Content digests: `sha256:<64 hex>` (sha512 is recognised when reading). */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { validationError } from '../../lib/errors.js';

const DIGEST_RE = /^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;

export const isDigest = (value: string): boolean => DIGEST_RE.test(value);

/** Throws a clear error unless `value` is a supported digest. */
export function checkDigest(value: string, what = 'digest'): string {
  if (!isDigest(value)) {
    throw validationError('oci-bad-digest', `${what} "${value}" is not a valid digest`, {
      hint: 'a digest is sha256: followed by 64 lowercase hex characters',
    });
  }
  return value;
}

export const sha256 = (data: Uint8Array | string): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export function digestAlgorithm(digest: string): 'sha256' | 'sha512' {
  return checkDigest(digest).startsWith('sha512:') ? 'sha512' : 'sha256';
}

export const digestHex = (digest: string): string => checkDigest(digest).slice(digest.indexOf(':') + 1);

/** Digest of in-memory content with the algorithm of `digest` (so a sha512 descriptor can be verified). */
export function digestOf(data: Uint8Array, algorithm: 'sha256' | 'sha512' = 'sha256'): string {
  return `${algorithm}:${createHash(algorithm).update(data).digest('hex')}`;
}

/** Checks that bytes match their descriptor (size and digest). */
export function verifyBytes(data: Uint8Array, desc: { digest: string; size: number }, where: string): void {
  if (data.length !== desc.size) {
    throw validationError('oci-size-mismatch', `${where}: expected ${desc.size} bytes for ${desc.digest}, got ${data.length}`);
  }
  const actual = digestOf(data, digestAlgorithm(desc.digest));
  if (actual !== desc.digest) {
    throw validationError('oci-digest-mismatch', `${where}: content has digest ${actual}, expected ${desc.digest}`);
  }
}

/**
 * A pass-through stream that hashes and counts what flows through it. With `expect`, it fails at the end
 * when the size or digest differ, so a consumer never treats corrupt content as complete.
 */
export class DigestStream extends Transform {
  private readonly hash: Hash;
  bytes = 0;
  private result?: string;
  constructor(
    private readonly expect?: { digest: string; size: number; where: string },
    algorithm: 'sha256' | 'sha512' = expect ? digestAlgorithm(expect.digest) : 'sha256',
  ) {
    super();
    this.hash = createHash(algorithm);
    this.algorithm = algorithm;
  }
  private readonly algorithm: string;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.expect && this.bytes > this.expect.size) {
      cb(validationError('oci-size-mismatch', `${this.expect.where}: more than the expected ${this.expect.size} bytes for ${this.expect.digest}`));
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    this.result = `${this.algorithm}:${this.hash.digest('hex')}`;
    if (this.expect) {
      if (this.bytes !== this.expect.size) {
        cb(validationError('oci-size-mismatch', `${this.expect.where}: expected ${this.expect.size} bytes for ${this.expect.digest}, got ${this.bytes}`));
        return;
      }
      if (this.result !== this.expect.digest) {
        cb(validationError('oci-digest-mismatch', `${this.expect.where}: content has digest ${this.result}, expected ${this.expect.digest}`));
        return;
      }
    }
    cb();
  }
  /** The digest, available once the stream has ended. */
  get digest(): string {
    if (!this.result) throw new Error('DigestStream: digest read before the end of the stream');
    return this.result;
  }
}
