import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { DOCKER_HUB_CONFIG_KEY, dockerConfigPath, dockerCredentials, lookupDockerConfig, normalizeConfigKey, staticCredentials } from '../../../bundle/oci/credentials.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('oci/credentials: docker config.json resolution', () => {
  it('finds config.json through DOCKER_CONFIG, else in ~/.docker', () => {
    assert.equal(dockerConfigPath({ DOCKER_CONFIG: '/etc/dc' }, '/home/u'), '/etc/dc/config.json');
    assert.equal(dockerConfigPath({}, '/home/u'), '/home/u/.docker/config.json');
  });
  it('decodes auths[host].auth (user:password, password may hold colons)', () => {
    const r = lookupDockerConfig({ auths: { 'reg.io:5000': { auth: b64('alice:pa:ss') } } }, 'reg.io:5000', 'cfg');
    assert.deepEqual(r, { kind: 'credential', credential: { username: 'alice', password: 'pa:ss', source: 'cfg' } });
  });
  it('reads legacy username/password, identitytoken and registrytoken', () => {
    assert.deepEqual(lookupDockerConfig({ auths: { h: { username: 'u', password: 'p' } } }, 'h'), {
      kind: 'credential',
      credential: { username: 'u', password: 'p', source: 'docker config.json' },
    });
    assert.deepEqual(lookupDockerConfig({ auths: { h: { auth: b64('<token>:'), identitytoken: 'refresh' } } }, 'h'), {
      kind: 'credential',
      credential: { username: '<token>', password: '', identityToken: 'refresh', source: 'docker config.json' },
    });
    assert.deepEqual(lookupDockerConfig({ auths: { h: { registrytoken: 'bearer' } } }, 'h'), {
      kind: 'credential',
      credential: { registryToken: 'bearer', source: 'docker config.json' },
    });
  });
  it('matches keys written with a scheme or path by host, and Docker Hub by its legacy key', () => {
    assert.equal(normalizeConfigKey('https://Reg.IO:5000/v1/'), 'reg.io:5000');
    const cfg = { auths: { 'https://reg.io/v2/': { auth: b64('a:b') }, [DOCKER_HUB_CONFIG_KEY]: { auth: b64('hub:pw') } } };
    assert.equal(lookupDockerConfig(cfg, 'reg.io').kind, 'credential');
    const hub = lookupDockerConfig(cfg, 'registry-1.docker.io');
    assert.ok(hub.kind === 'credential' && hub.credential.username === 'hub');
    assert.deepEqual(lookupDockerConfig(cfg, 'other.io'), { kind: 'none' });
    assert.deepEqual(lookupDockerConfig(cfg, 'reg.io:5000'), { kind: 'none' }, 'a port is part of the host');
  });
  it('prefers credHelpers[host], then credsStore, over auths', () => {
    const cfg = { auths: { 'reg.io': { auth: b64('a:b') } }, credHelpers: { 'reg.io': 'ecr-login' }, credsStore: 'pass' };
    assert.deepEqual(lookupDockerConfig(cfg, 'reg.io'), { kind: 'helper', helper: 'ecr-login', serverUrl: 'reg.io' });
    assert.deepEqual(lookupDockerConfig(cfg, 'other.io'), { kind: 'helper', helper: 'pass', serverUrl: 'other.io' });
    assert.deepEqual(lookupDockerConfig({ credsStore: 'desktop' }, 'docker.io'), { kind: 'helper', helper: 'desktop', serverUrl: DOCKER_HUB_CONFIG_KEY });
  });
  it('rejects a malformed auth entry without echoing it', () => {
    assert.throws(
      () => lookupDockerConfig({ auths: { h: { auth: b64('nocolon-secret') } } }, 'h'),
      (err: unknown) => err instanceof OlmpubError && !err.message.includes('nocolon-secret'),
    );
  });
});

describe('oci/credentials: providers', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-cred-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads config.json and runs helpers (Username "<token>" means an identity token)', async () => {
    const path = join(dir, 'config.json');
    await writeFile(path, JSON.stringify({ auths: { 'a.io': { auth: b64('u:p') } }, credHelpers: { 'b.io': 'fake', 'c.io': 'fake' } }));
    const calls: string[] = [];
    const provider = dockerCredentials({
      configPath: path,
      runHelper: async (helper, server) => {
        calls.push(`${helper} ${server}`);
        return server === 'b.io' ? { Username: 'bob', Secret: 's' } : { Username: '<token>', Secret: 'rt' };
      },
    });
    assert.deepEqual(await provider('a.io'), { username: 'u', password: 'p', source: path });
    assert.deepEqual(await provider('b.io'), { username: 'bob', password: 's', source: 'docker-credential-fake' });
    assert.deepEqual(await provider('c.io'), { identityToken: 'rt', source: 'docker-credential-fake' });
    assert.equal(await provider('d.io'), undefined);
    assert.deepEqual(calls, ['fake b.io', 'fake c.io']);
  });
  it('is anonymous without a config file, and reports a broken one with its path', async () => {
    assert.equal(await dockerCredentials({ configPath: join(dir, 'missing.json') })('a.io'), undefined);
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{not json');
    await assert.rejects(dockerCredentials({ configPath: broken })('a.io'), (err: unknown) => err instanceof OlmpubError && err.place === broken);
  });
  it('runs a real docker-credential-<name> helper from PATH', async () => {
    const bin = join(dir, 'bin');
    await rm(bin, { recursive: true, force: true });
    const { mkdir, chmod } = await import('node:fs/promises');
    await mkdir(bin);
    const helper = join(bin, 'docker-credential-olmpubtest');
    await writeFile(helper, '#!/bin/sh\nread host\nif [ "$host" = "x.io" ]; then echo "{\\"ServerURL\\":\\"x.io\\",\\"Username\\":\\"hu\\",\\"Secret\\":\\"hs\\"}"; else echo "credentials not found in native keychain"; exit 1; fi\n');
    await chmod(helper, 0o755);
    const path = join(dir, 'helper.json');
    await writeFile(path, JSON.stringify({ credsStore: 'olmpubtest' }));
    const old = process.env.PATH;
    process.env.PATH = `${bin}:${old}`;
    try {
      const provider = dockerCredentials({ configPath: path });
      assert.deepEqual(await provider('x.io'), { username: 'hu', password: 'hs', source: 'docker-credential-olmpubtest' });
      assert.equal(await provider('y.io'), undefined);
    } finally {
      process.env.PATH = old;
    }
  });
  it('staticCredentials answers per host and falls back', async () => {
    const p = staticCredentials({ 'a.io': { username: 'x', password: 'y' } }, async () => ({ registryToken: 't', source: 'f' }));
    assert.deepEqual(await p('a.io'), { username: 'x', password: 'y', source: 'explicit credentials' });
    assert.deepEqual(await p('b.io'), { registryToken: 't', source: 'f' });
  });
});
