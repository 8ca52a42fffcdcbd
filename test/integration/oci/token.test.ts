/**
 * Bearer token authentication against a REAL docker-registry 2.8.2 configured with `auth.token`, with a
 * small token service of the test's own (the registry verifies its RS256 JWTs against a certificate
 * bundle). Covers realm/service/scope challenges, token caching per host and scope set, `token` and
 * `access_token` answers, anonymous pulls, identity tokens (refresh_token grant) and mount scopes.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSign, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OlmpubError } from '../../../lib/errors.js';
import { MediaType, type Descriptor } from '../../../bundle/oci/content.js';
import { copy } from '../../../bundle/oci/copy.js';
import { staticCredentials } from '../../../bundle/oci/credentials.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { RegistryClient } from '../../../bundle/oci/remote.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { eventually } from '../../support/env.js';
import { tempDir } from './support.js';

const run = promisify(execFile);
const SERVICE = 'olmpub-token-test';
const ISSUER = 'olmpub-token-issuer';
const USER = 'alice';
const PASSWORD = randomBytes(8).toString('hex');
const REFRESH = `rt-${randomBytes(8).toString('hex')}`;

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

interface TokenRequest {
  method: string;
  scopes: string[];
  basic: boolean;
  grant?: string;
  clientId?: string;
}

describe('oci integration: Bearer token auth on a real token-auth registry', function () {
  this.timeout(120_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  let registry: ChildProcess | undefined;
  let tokenServer: http.Server;
  let host: string;
  const requests: TokenRequest[] = [];

  before(async () => {
    work = await tempDir('token');
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(work.dir, 'key.pem'), '-out', join(work.dir, 'cert.pem'), '-days', '2', '-subj', '/CN=olmpub-token-test']);
    const key = await readFile(join(work.dir, 'key.pem'), 'utf8');
    const certDer = Buffer.from((await readFile(join(work.dir, 'cert.pem'), 'utf8')).replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const sign = (claims: object) => {
      const head = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
      const body = b64url(JSON.stringify(claims));
      const s = createSign('RSA-SHA256');
      s.update(`${head}.${body}`);
      return `${head}.${body}.${b64url(s.sign(key))}`;
    };
    tokenServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const scopes = req.method === 'POST' ? (form.get('scope') ?? '').split(' ').filter(Boolean) : url.searchParams.getAll('scope');
        const auth = req.headers.authorization;
        const basic = auth?.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : undefined;
        requests.push({ method: req.method ?? '', scopes, basic: !!basic, ...(form.get('grant_type') ? { grant: form.get('grant_type')!, clientId: form.get('client_id') ?? '' } : {}) });
        let user: string | undefined;
        if (req.method === 'POST') {
          if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === REFRESH) user = USER;
          else return void res.writeHead(401).end('{"error":"invalid_grant"}');
        } else if (basic !== undefined) {
          if (basic === `${USER}:${PASSWORD}`) user = USER;
          else return void res.writeHead(401).end('{"details":"bad credentials"}');
        }
        // Anyone may pull public/*; alice may do anything.
        const access = scopes.map((s) => {
          const [type, ...rest] = s.split(':');
          const actions = rest.pop()!.split(',');
          const name = rest.join(':');
          const allowed = user ? actions : name.startsWith('public/') ? actions.filter((a) => a === 'pull') : [];
          return { type, name, actions: allowed };
        });
        const now = Math.floor(Date.now() / 1000);
        const token = sign({ iss: ISSUER, sub: user ?? '', aud: SERVICE, exp: now + 300, nbf: now - 10, iat: now, jti: randomBytes(8).toString('hex'), access });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        // GET answers carry `token`, POST (OAuth2) answers `access_token`, as real token services do.
        res.end(JSON.stringify(req.method === 'POST' ? { access_token: token, expires_in: 300 } : { token, expires_in: 300 }));
      });
    });
    await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
    const tokenPort = (tokenServer.address() as AddressInfo).port;
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    await writeFile(
      join(work.dir, 'registry.yml'),
      [
        'version: 0.1',
        'log: {level: warn}',
        `storage: {filesystem: {rootdirectory: ${join(work.dir, 'data')}}, delete: {enabled: true}}`,
        `http: {addr: ${host}}`,
        `auth: {token: {realm: "http://127.0.0.1:${tokenPort}/token", service: ${SERVICE}, issuer: ${ISSUER}, rootcertbundle: ${join(work.dir, 'cert.pem')}}}`,
      ].join('\n') + '\n',
    );
    registry = spawn('docker-registry', ['serve', join(work.dir, 'registry.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    registry.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    await eventually(`docker-registry with token auth on ${host} (${log})`, async () => {
      const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
      return res?.status === 401;
    }, 30_000);
  });

  after(async () => {
    if (registry?.pid) {
      registry.kill('SIGTERM');
      await new Promise((r) => registry!.once('exit', r));
    }
    await new Promise<void>((r) => tokenServer.close(() => r()));
    await work.cleanup();
  });

  const blob = (bytes: Buffer): Descriptor => ({ mediaType: MediaType.LayerGzip, digest: sha256(bytes), size: bytes.length });

  it('fetches a token per scope set with Basic credentials and caches it', async () => {
    requests.length = 0;
    const c = new RegistryClient(host, { plainHttp: true, credentials: staticCredentials({ [host]: { username: USER, password: PASSWORD } }) });
    const repo = c.repository('team/app');
    for (let i = 0; i < 3; i++) {
      const bytes = randomBytes(2000);
      assert.equal(await repo.exists(blob(bytes)), false);
      await repo.pushBlob(blob(bytes), bufferSource(bytes));
      assert.deepEqual(await readAll(await repo.fetchBlob(blob(bytes))), bytes);
    }
    assert.deepEqual(
      requests.map((r) => `${r.method} ${r.scopes.join(' ')} ${r.basic ? 'basic' : 'anonymous'}`),
      ['GET repository:team/app:pull basic', 'GET repository:team/app:pull,push basic'],
      'one token per scope set, reused afterwards',
    );
    c.close();
  });

  it('pulls anonymously where the token service allows it, and explains a refused push', async () => {
    const owner = new RegistryClient(host, { plainHttp: true, credentials: staticCredentials({ [host]: { username: USER, password: PASSWORD } }) });
    const bytes = randomBytes(500);
    await owner.repository('public/base').pushBlob(blob(bytes), bufferSource(bytes));
    owner.close();
    const anon = new RegistryClient(host, { plainHttp: true, credentials: async () => undefined });
    assert.deepEqual(await readAll(await anon.repository('public/base').fetchBlob(blob(bytes))), bytes);
    await assert.rejects(anon.repository('public/base').pushBlob(blob(randomBytes(10)), bufferSource(randomBytes(10))), (err: unknown) => err instanceof OlmpubError && err.exitCode === 3);
    anon.close();
  });

  it('rejects a wrong password at the token service with an environment error', async () => {
    const c = new RegistryClient(host, { plainHttp: true, credentials: staticCredentials({ [host]: { username: USER, password: 'nope-nope' } }) });
    await assert.rejects(c.repository('team/app').resolve('v1'), (err: unknown) => {
      assert.ok(err instanceof OlmpubError);
      assert.equal(err.code, 'oci-auth-failed');
      assert.ok(!JSON.stringify(err.toJSON()).includes('nope-nope'));
      return true;
    });
    c.close();
  });

  it('exchanges an identity token with the refresh_token grant', async () => {
    requests.length = 0;
    const c = new RegistryClient(host, { plainHttp: true, credentials: staticCredentials({ [host]: { identityToken: REFRESH } }) });
    const bytes = randomBytes(300);
    await c.repository('team/idt').pushBlob(blob(bytes), bufferSource(bytes));
    assert.ok(requests.length > 0 && requests.every((r) => r.method === 'POST' && r.grant === 'refresh_token' && r.clientId === 'olmpub'));
    c.close();
  });

  it('asks for pull on the source repository when mounting', async () => {
    const c = new RegistryClient(host, { plainHttp: true, credentials: staticCredentials({ [host]: { username: USER, password: PASSWORD } }) });
    const src = c.repository('team/src');
    const bytes = randomBytes(1000);
    const config = Buffer.from('{}');
    const cdesc: Descriptor = { mediaType: MediaType.ImageConfig, digest: sha256(config), size: 2 };
    const m = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ImageManifest, config: cdesc, layers: [blob(bytes)] }));
    const mdesc: Descriptor = { mediaType: MediaType.ImageManifest, digest: sha256(m), size: m.length };
    await src.pushBlob(blob(bytes), bufferSource(bytes));
    await src.pushBlob(cdesc, bufferSource(config));
    await src.pushManifest(mdesc, m, { tag: 'v1' });
    requests.length = 0;
    const r = await copy(src, 'v1', c.repository('team/dst'), 'v1');
    assert.equal(r.mounted, 2);
    assert.ok(requests.some((q) => q.scopes.join(' ') === 'repository:team/dst:pull,push repository:team/src:pull'), JSON.stringify(requests));
    c.close();
  });
});
