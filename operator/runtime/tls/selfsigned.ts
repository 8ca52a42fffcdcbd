/**
 * A self-signed ECDSA P-256 serving certificate, built with node:crypto and a few lines of DER, for
 * servers started without a certificate directory (controller-runtime's SecureServing does the same
 * for the metrics server). Production webhooks use certificates from cert-manager instead.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
};
const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);
const int = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const oid = (dotted: string) => {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const enc: number[] = [p & 0x7f];
    for (let v = p >> 7; v > 0; v >>= 7) enc.unshift((v & 0x7f) | 0x80);
    out.push(...enc);
  }
  return tlv(0x06, Buffer.from(out));
};
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const explicit = (n: number, c: Buffer) => tlv(0xa0 | n, c);

function time(d: Date): Buffer {
  const y = d.getUTCFullYear();
  const p = (n: number) => String(n).padStart(2, '0');
  const rest = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return y < 2050 ? tlv(0x17, Buffer.from(`${String(y).slice(2)}${rest}`)) : tlv(0x18, Buffer.from(`${y}${rest}`));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(groups.map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
}

export interface SelfSignedOptions {
  commonName?: string;
  /** Subject alternative DNS names. Default ['localhost']. */
  dnsNames?: string[];
  /** Subject alternative IPs. Default ['127.0.0.1', '::1']. */
  ipAddresses?: string[];
  /** Default 365. */
  validDays?: number;
  /** Default now. */
  now?: Date;
}

export interface PemPair {
  cert: string;
  key: string;
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export function generateSelfSigned(options: SelfSignedOptions = {}): PemPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const cn = options.commonName ?? 'olmpub-operator';
  const dns = options.dnsNames ?? ['localhost'];
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 5 * 60_000);
  const notAfter = new Date(now.getTime() + (options.validDays ?? 365) * 86_400_000);
  const name = seq(set(seq(oid('2.5.4.3'), utf8(cn))));
  const alg = seq(oid('1.2.840.10045.4.3.2'));
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f || 1;
  const san = seq(...dns.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))), ...ips.map((ip) => tlv(0x87, ipBytes(ip))));
  const extensions = seq(
    seq(oid('2.5.29.19'), bool(true), octets(seq(bool(true)))), // basicConstraints CA:TRUE (its own trust anchor)
    seq(oid('2.5.29.15'), bool(true), octets(bits(Buffer.from([0x84]), 2))), // keyUsage digitalSignature, keyCertSign
    seq(oid('2.5.29.37'), octets(seq(oid('1.3.6.1.5.5.7.3.1')))), // extKeyUsage serverAuth
    seq(oid('2.5.29.17'), octets(san)),
  );
  const tbs = seq(explicit(0, int(Buffer.from([2]))), int(serial), alg, name, seq(time(notBefore), time(notAfter)), name, spki, explicit(3, extensions));
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, alg, bits(signature));
  return { cert: pem('CERTIFICATE', cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
