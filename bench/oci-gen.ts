/**
 * A deterministic multi-layer OCI image in an OCI image layout, for push benchmarks: N layers, each a
 * gzipped tar holding one file of pseudo-random bytes (AES-CTR keystream from a fixed key, so the data
 * does not compress and the same sizes always give the same digests), an image config whose diff_ids
 * match, one manifest tagged in index.json.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface ImageStats {
  layers: number;
  layerBytes: number;
  totalBytes: number;
  manifestDigest: string;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function pseudoRandom(bytes: number, seed: number): Buffer {
  const key = createHash('sha256').update(`olmpub-bench-layer-${seed}`).digest().subarray(0, 16);
  return createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(bytes));
}

/** A POSIX ustar archive with one regular file (fixed owner and mtime). */
function tarOneFile(name: string, data: Buffer): Buffer {
  const header = Buffer.alloc(512);
  const put = (text: string, offset: number, length: number) => header.write(text, offset, length, 'ascii');
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0') + '\0';
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(data.length, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  put('        ', 148, 8); // checksum field counts as spaces while summing
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const byte of header) sum += byte;
  put(octal(sum, 7) + ' ', 148, 8);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([header, data, pad, Buffer.alloc(1024)]);
}

async function putBlob(layout: string, data: Buffer): Promise<string> {
  const digest = sha256(data);
  await writeFile(join(layout, 'blobs', 'sha256', digest), data);
  return `sha256:${digest}`;
}

/** Writes the layout at `layout` with `tag` naming the image. */
export async function generateImageLayout(layout: string, tag: string, layers: number, layerBytes: number): Promise<ImageStats> {
  await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
  const layerDescriptors: { mediaType: string; digest: string; size: number }[] = [];
  const diffIds: string[] = [];
  for (let i = 0; i < layers; i++) {
    const tar = tarOneFile(`data/layer-${i}.bin`, pseudoRandom(layerBytes, i));
    diffIds.push(`sha256:${sha256(tar)}`);
    const gz = gzipSync(tar, { level: 1 });
    layerDescriptors.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: await putBlob(layout, gz), size: gz.length });
  }
  const config = Buffer.from(JSON.stringify({
    architecture: 'amd64',
    os: 'linux',
    created: '2026-01-01T00:00:00Z',
    config: { Entrypoint: ['/bin/true'] },
    rootfs: { type: 'layers', diff_ids: diffIds },
  }));
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: await putBlob(layout, config), size: config.length },
    layers: layerDescriptors,
  }));
  const manifestDigest = await putBlob(layout, manifest);
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(join(layout, 'index.json'), JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [{
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      digest: manifestDigest,
      size: manifest.length,
      annotations: { 'org.opencontainers.image.ref.name': tag },
    }],
  }));
  return {
    layers,
    layerBytes,
    totalBytes: layerDescriptors.reduce((n, l) => n + l.size, 0) + config.length + manifest.length,
    manifestDigest,
  };
}
