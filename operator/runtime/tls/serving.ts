/**
 * HTTPS servers for metrics and webhooks: the certificate comes from `<certDir>/<certName>` and
 * `<certDir>/<keyName>` and is hot-reloaded when the files change (CertWatcher), or, with no
 * certDir, from a self-signed certificate generated in memory. TLS 1.2 minimum, HTTP/1.1 only
 * (the scaffold's default of disabling HTTP/2).
 */
import https from 'node:https';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics/registry.js';
import { CertWatcher } from './certwatcher.js';
import { generateSelfSigned } from './selfsigned.js';

export interface ServingCertOptions {
  /** Directory with the pair; undefined: self-signed in memory. */
  certDir?: string;
  /** Default `tls.crt`. */
  certName?: string;
  /** Default `tls.key`. */
  keyName?: string;
  /** Poll interval of the watcher. Default 10 s. */
  pollIntervalMs?: number;
}

export interface SecureServer {
  server: https.Server;
  /** undefined with a self-signed certificate. */
  watcher?: CertWatcher;
  /** The PEM certificate in service (at creation); handy as a CA bundle for self-signed servers. */
  certificate: string;
}

export async function createSecureServer(
  options: ServingCertOptions,
  handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void,
  context: { logger?: Logger; metrics?: RuntimeMetrics } = {},
): Promise<SecureServer> {
  const tlsBase = { minVersion: 'TLSv1.2' as const, ALPNProtocols: ['http/1.1'] };
  if (!options.certDir) {
    const pair = generateSelfSigned();
    return { server: https.createServer({ ...tlsBase, cert: pair.cert, key: pair.key }, handler), certificate: pair.cert };
  }
  let server: https.Server | undefined;
  const watcher = new CertWatcher({
    certFile: join(options.certDir, options.certName ?? 'tls.crt'),
    keyFile: join(options.certDir, options.keyName ?? 'tls.key'),
    pollIntervalMs: options.pollIntervalMs,
    logger: context.logger,
    metrics: context.metrics,
    onReload: (pair) => server?.setSecureContext({ ...tlsBase, cert: pair.cert, key: pair.key }),
  });
  await watcher.start();
  server = https.createServer({ ...tlsBase, ...watcher.pair }, handler);
  return { server, watcher, certificate: watcher.pair.cert.toString() };
}
