/** Authentication against the REAL htpasswd registry of scripts/testenv. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { MediaType, type Descriptor } from '../../../bundle/oci/content.js';
import { dockerCredentials } from '../../../bundle/oci/credentials.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { RegistryClient } from '../../../bundle/oci/remote.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { FaultProxy } from './proxy.js';
import { dockerConfigDir, registries, tempDir, uniqueRepo } from './support.js';

const layer = (bytes: Buffer): Descriptor => ({ mediaType: MediaType.LayerGzip, digest: sha256(bytes), size: bytes.length });

describe('oci integration: registry authentication (htpasswd Basic)', function () {
  this.timeout(120_000);
  let env: ReturnType<typeof registries>;
  before(() => {
    env = registries();
  });

  it('asks for credentials with an environment error when none are configured', async () => {
    const { dir, cleanup } = await tempDir('noauth');
    const c = new RegistryClient(env.authRegistry, { plainHttp: true, credentials: dockerCredentials({ configPath: join(dir, 'config.json') }) });
    try {
      await assert.rejects(c.repository(uniqueRepo('noauth')).resolve('v1'), (err: unknown) => {
        assert.ok(err instanceof OlmpubError);
        assert.equal(err.code, 'oci-auth-required');
        assert.equal(err.exitCode, 3);
        assert.match(err.hint ?? '', /config\.json/);
        return true;
      });
    } finally {
      c.close();
      await cleanup();
    }
  });

  it('rejects wrong credentials with a clear environment error that never shows the password', async () => {
    const wrong = `wrong-${randomBytes(6).toString('hex')}`;
    const cfg = await dockerConfigDir({ [env.authRegistry]: { user: env.user, password: wrong } });
    const c = new RegistryClient(env.authRegistry, { plainHttp: true, credentials: dockerCredentials({ configPath: join(cfg.dir, 'config.json') }) });
    try {
      const bytes = randomBytes(100);
      await assert.rejects(c.repository(uniqueRepo('wrong')).pushBlob(layer(bytes), bufferSource(bytes)), (err: unknown) => {
        assert.ok(err instanceof OlmpubError, String(err));
        assert.equal(err.code, 'oci-auth-failed');
        assert.equal(err.exitCode, 3);
        assert.match(err.message, /rejected the credentials from .*config\.json/);
        const everything = JSON.stringify(err.toJSON()) + String(err.stack) + String(err.hint);
        assert.ok(!everything.includes(wrong), 'the password is not in the error');
        assert.ok(!everything.includes(Buffer.from(`${env.user}:${wrong}`).toString('base64')), 'nor the Authorization value');
        return true;
      });
    } finally {
      c.close();
      await cfg.cleanup();
    }
  });

  it('pushes and pulls with credentials from docker config.json ($DOCKER_CONFIG)', async () => {
    const cfg = await dockerConfigDir({ [`http://${env.authRegistry}`]: { user: env.user, password: env.password } });
    const old = process.env.DOCKER_CONFIG;
    process.env.DOCKER_CONFIG = cfg.dir;
    const c = new RegistryClient(env.authRegistry, { plainHttp: true });
    try {
      const repo = c.repository(uniqueRepo('cfg'));
      const bytes = randomBytes(50_000);
      await repo.pushBlob(layer(bytes), bufferSource(bytes));
      assert.deepEqual(await readAll(await repo.fetchBlob(layer(bytes))), bytes);
      assert.ok(await repo.exists(layer(bytes)));
    } finally {
      if (old === undefined) delete process.env.DOCKER_CONFIG;
      else process.env.DOCKER_CONFIG = old;
      c.close();
      await cfg.cleanup();
    }
  });

  it('gets credentials from a credsStore helper (docker-credential-<name> get)', async () => {
    const { dir, cleanup } = await tempDir('helper');
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const helper = join(bin, 'docker-credential-olmpubit');
    await writeFile(helper, `#!/bin/sh\nread host\n[ "$host" = "${env.authRegistry}" ] || { echo "credentials not found in native keychain"; exit 1; }\nprintf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}' "$host" "$OLMPUB_IT_USER" "$OLMPUB_IT_PASSWORD"\n`);
    await chmod(helper, 0o755);
    await writeFile(join(dir, 'config.json'), JSON.stringify({ credsStore: 'olmpubit' }));
    const saved = { PATH: process.env.PATH, U: process.env.OLMPUB_IT_USER, P: process.env.OLMPUB_IT_PASSWORD };
    process.env.PATH = `${bin}:${process.env.PATH}`;
    process.env.OLMPUB_IT_USER = env.user;
    process.env.OLMPUB_IT_PASSWORD = env.password;
    const c = new RegistryClient(env.authRegistry, { plainHttp: true, credentials: dockerCredentials({ configPath: join(dir, 'config.json') }) });
    try {
      const repo = c.repository(uniqueRepo('helper'));
      const bytes = randomBytes(1000);
      await repo.pushBlob(layer(bytes), bufferSource(bytes));
      assert.ok(await repo.exists(layer(bytes)));
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.U === undefined) delete process.env.OLMPUB_IT_USER;
      if (saved.P === undefined) delete process.env.OLMPUB_IT_PASSWORD;
      c.close();
      await cleanup();
    }
  });

  it('never forwards Authorization to another host on a redirect', async () => {
    // The blob lives in both registries; the auth registry's front redirects its GET to a front of the open
    // registry reached under another host name (localhost instead of 127.0.0.1).
    const repoName = uniqueRepo('redirect');
    const bytes = randomBytes(4000);
    const desc = layer(bytes);
    const open = new RegistryClient(env.registry, { plainHttp: true });
    await open.repository(repoName).pushBlob(desc, bufferSource(bytes));
    open.close();
    const other = new FaultProxy(env.registry);
    const otherAddr = (await other.start('localhost')).replace(/^localhost/, 'localhost');
    const front = new FaultProxy(env.authRegistry);
    front.rule = (req) => (req.method === 'GET' && req.url?.includes('/blobs/sha256:') ? { kind: 'redirect', location: `http://${otherAddr}${req.url}` } : undefined);
    const frontAddr = await front.start();
    const cfg = await dockerConfigDir({ [frontAddr]: { user: env.user, password: env.password } });
    const c = new RegistryClient(frontAddr, { plainHttp: true, credentials: dockerCredentials({ configPath: join(cfg.dir, 'config.json') }) });
    try {
      const repo = c.repository(repoName);
      await repo.pushBlob(desc, bufferSource(bytes));
      assert.deepEqual(await readAll(await repo.fetchBlob(desc)), bytes);
      assert.ok(front.seen.some((r) => r.method === 'GET' && r.authorized), 'the registry itself got credentials');
      assert.ok(other.seen.length > 0, 'the redirect was followed');
      assert.ok(other.seen.every((r) => !r.authorized), 'the other host never saw Authorization');
    } finally {
      c.close();
      await front.stop();
      await other.stop();
      await cfg.cleanup();
    }
  });
});
