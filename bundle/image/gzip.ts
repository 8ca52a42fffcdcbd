/**
 * Deterministic gzip: a fixed 10-byte header (no mtime, no file name, OS "unknown" = 255, as Go's
 * compress/gzip writes it), raw deflate from node:zlib, then CRC-32 and size. The same input gives the
 * same bytes on every run (for one Node.js build: the deflate implementation is Node's bundled zlib).
 */
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);

export interface GzipOptions {
  /** zlib level 0–9 (default 6, zlib's default). */
  level?: number;
}

/** A stream that gzips what is written to it, deterministically. */
export function deterministicGzip(options: GzipOptions = {}): Transform {
  const deflate = zlib.createDeflateRaw({ level: options.level ?? 6, memLevel: 8, windowBits: 15, strategy: zlib.constants.Z_DEFAULT_STRATEGY });
  let crc = 0;
  let size = 0;
  let headerSent = false;
  const out = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      crc = zlib.crc32(chunk, crc);
      size = (size + chunk.length) % 0x100000000;
      if (!deflate.write(chunk)) deflate.once('drain', () => cb());
      else cb();
    },
    flush(cb: TransformCallback) {
      deflate.once('end', () => {
        const trailer = Buffer.alloc(8);
        trailer.writeUInt32LE(crc >>> 0, 0);
        trailer.writeUInt32LE(size >>> 0, 4);
        if (!headerSent) {
          headerSent = true;
          this.push(GZIP_HEADER);
        }
        this.push(trailer);
        cb();
      });
      deflate.end();
    },
  });
  deflate.on('data', (data: Buffer) => {
    if (!headerSent) {
      headerSent = true;
      out.push(GZIP_HEADER);
    }
    out.push(data);
  });
  deflate.on('error', (err) => out.destroy(err));
  return out;
}

/** Gzips bytes in memory, deterministically. */
export async function gzipBytes(data: Uint8Array, options: GzipOptions = {}): Promise<Buffer> {
  const gz = deterministicGzip(options);
  const chunks: Buffer[] = [];
  gz.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  gz.end(Buffer.from(data));
  await done;
  return Buffer.concat(chunks);
}
