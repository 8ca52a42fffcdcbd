/**
 * A chart archive laid out as `helm package` writes it (helm pkg/chartutil/save.go): entries under
 * `<name>/`, regular files only (no directory entries), mode 0644, one modification time for all,
 * in Helm's order (Chart.yaml, Chart.lock, values.yaml, values.schema.json, templates/*, other files),
 * gzip with Helm's header (extra field `+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=`, comment `Helm`).
 * Deterministic: bundle/image's tar writer and gzip, a fixed mtime. The deflate stream is zlib's, so the
 * bytes differ from Helm's (Go's compress/flate); the tar content is the same.
 */
import { validationError } from '../../lib/errors.js';
import { gzipBytes, GZIP_HEADER } from '../image/gzip.js';
import { readTar, sourceDateEpoch, tarStream, type LayerEntry, type TarEntry } from '../image/tar.js';
import { readAll } from '../oci/store.js';

/** The extra field and comment `helm package` puts in the gzip header. */
export const HELM_GZIP_EXTRA = Buffer.from('+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=', 'latin1');
export const HELM_GZIP_COMMENT = 'Helm';

/** A file of a chart, by its path inside the chart directory (`templates/deployment.yaml`). */
export interface ChartFile {
  path: string;
  content: string | Uint8Array;
}

const rank = (path: string): number => {
  if (path === 'Chart.yaml') return 0;
  if (path === 'Chart.lock') return 1;
  if (path === 'values.yaml') return 2;
  if (path === 'values.schema.json') return 3;
  if (path.startsWith('templates/')) return 4;
  if (path.startsWith('charts/')) return 6;
  return 5;
};

/** Helm's archive order: the fixed files first, then templates, then other files, each group by path (bytewise). */
export function helmArchiveOrder(files: readonly ChartFile[]): ChartFile[] {
  return [...files].sort((a, b) => rank(a.path) - rank(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Replaces the fixed gzip header of bundle/image's gzip with Helm's (FEXTRA | FCOMMENT). */
export function withHelmGzipHeader(gz: Buffer): Buffer {
  if (!gz.subarray(0, GZIP_HEADER.length).equals(GZIP_HEADER)) throw new Error('internal: unexpected gzip header');
  const header = Buffer.from(GZIP_HEADER);
  header[3] = 0x04 | 0x10; // FEXTRA | FCOMMENT
  const xlen = Buffer.alloc(2);
  xlen.writeUInt16LE(HELM_GZIP_EXTRA.length, 0);
  return Buffer.concat([header, xlen, HELM_GZIP_EXTRA, Buffer.from(`${HELM_GZIP_COMMENT}\0`, 'latin1'), gz.subarray(GZIP_HEADER.length)]);
}

export interface PackageOptions {
  /** Seconds since the epoch for every entry. @default SOURCE_DATE_EPOCH, else 0 */
  mtime?: number;
}

/** The `.tgz` of a chart named `name`: same files and mtime, same bytes. */
export async function packageChart(name: string, files: readonly ChartFile[], options: PackageOptions = {}): Promise<Buffer> {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) throw validationError('chart-bad-name', `chart name "${name}" is not a DNS-1123 label`);
  const seen = new Set<string>();
  for (const f of files) {
    if (!f.path || f.path.startsWith('/') || f.path.split('/').some((p) => p === '..' || p === '.' || p === '')) {
      throw validationError('chart-bad-path', `chart file path "${f.path}" is not a relative path inside the chart`);
    }
    if (seen.has(f.path)) throw validationError('chart-duplicate-file', `chart file "${f.path}" appears twice`);
    seen.add(f.path);
  }
  if (!seen.has('Chart.yaml')) throw validationError('chart-no-chart-yaml', 'a chart needs Chart.yaml');
  const entries: LayerEntry[] = helmArchiveOrder(files).map((f) => ({ path: `${name}/${f.path}`, type: 'file', content: f.content, mode: 0o644 }));
  const tarBytes = await readAll(tarStream(entries, { mtime: options.mtime ?? sourceDateEpoch(), uid: 0, gid: 0 }));
  return withHelmGzipHeader(await gzipBytes(tarBytes));
}

/** Reads a chart archive's entries (for checks and tests). */
export const readChartArchive = (tgz: Uint8Array): Promise<TarEntry[]> => readTar(tgz, { gzip: true });
