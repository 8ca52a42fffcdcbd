/**
 * Watches a certificate and key on disk and keeps a TLS secure context current
 * (controller-runtime pkg/certwatcher): fs.watch on the directory for prompt reloads (Secret volumes
 * swap a `..data` symlink, which fs.watch sees as a directory change) plus a poll every 10 s as the
 * fallback. A pair that fails to load (half-written, mismatched) is counted and ignored: the
 * previous certificate stays in service.
 */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import tls from 'node:tls';
import { silentLogger, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics/registry.js';

export interface CertWatcherOptions {
  certFile: string;
  keyFile: string;
  /** Poll interval. Default 10 s. */
  pollIntervalMs?: number;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /** Called with the new pair after each successful reload (not the first read). */
  onReload?: (pair: { cert: Buffer; key: Buffer }) => void;
}

export class CertWatcher {
  private current?: { cert: Buffer; key: Buffer; digest: string };
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private readonly log: Logger;
  reloads = 0;

  constructor(private readonly options: CertWatcherOptions) {
    this.log = (options.logger ?? silentLogger).child('certwatcher', { cert: options.certFile });
  }

  /** The pair in service. */
  get pair(): { cert: Buffer; key: Buffer } {
    if (!this.current) throw new Error('certificate not loaded yet');
    return { cert: this.current.cert, key: this.current.key };
  }

  /** Reads the pair once (throws when it cannot) and starts watching. */
  async start(): Promise<void> {
    const ok = await this.read();
    if (!ok) throw new Error(`cannot load the TLS certificate ${this.options.certFile} and key ${this.options.keyFile}`);
    try {
      this.watcher = watch(dirname(this.options.certFile), () => this.scheduleRead());
      this.watcher.on('error', (err) => this.log.warn('file watch failed; polling only', { err }));
    } catch (err) {
      this.log.warn('cannot watch the certificate directory; polling only', { err: err as Error });
    }
    this.timer = setInterval(() => void this.read(), this.options.pollIntervalMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    this.watcher = undefined;
    this.timer = undefined;
  }

  private scheduleRead(): void {
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.read(), 100);
    this.debounce.unref();
  }

  /** Reads the files; swaps the pair in when it changed and is valid. Returns whether a valid pair is in service. */
  async read(): Promise<boolean> {
    this.options.metrics?.certwatcherReads.inc();
    let cert: Buffer;
    let key: Buffer;
    try {
      [cert, key] = await Promise.all([readFile(this.options.certFile), readFile(this.options.keyFile)]);
      const digest = createHash('sha256').update(cert).update('\0').update(key).digest('hex');
      if (this.current?.digest === digest) return true;
      tls.createSecureContext({ cert, key }); // throws on a mismatched or partial pair
      const first = !this.current;
      this.current = { cert, key, digest };
      if (!first) {
        this.reloads++;
        this.log.info('updated the TLS certificate');
        this.options.onReload?.({ cert, key });
      }
      return true;
    } catch (err) {
      this.options.metrics?.certwatcherReadErrors.inc();
      this.log.warn('failed to load the TLS certificate; keeping the previous one', { err: err as Error });
      return this.current !== undefined;
    }
  }
}
