/**
 * A Node.js image built without Docker from this machine's node binary and its libraries: reproducible
 * (same inputs, same digest), pushed to the REAL registry, pulled back, unpacked, and run under chroot.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import { buildImage, type BuildImageOptions } from '../../../bundle/image/build.js';
import { hostBinaryEntries } from '../../../bundle/image/host.js';
import { unpackImage } from '../../../bundle/image/unpack.js';
import { REPO_ROOT } from '../../support/env.js';
import { client, registries, tempDir, uniqueRepo } from './support.js';

const run = promisify(execFile);

describe('oci integration: a runnable image without Docker', function () {
  this.timeout(300_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    work = await tempDir('node-image');
  });
  after(() => work.cleanup());

  const options = async (store: OciLayoutStore): Promise<BuildImageOptions> => ({
    store,
    tag: '1.0.0',
    created: 1700000000,
    platform: { os: 'linux', architecture: 'amd64' },
    layers: [
      { files: await hostBinaryEntries(process.execPath, { at: '/usr/local/bin/node' }), createdBy: 'node runtime from the build host' },
      { files: { '/app/main.js': { content: 'if (process.argv[2] === "--version") console.log("olmpub-test 1.0.0 uid=" + process.getuid());\n', mode: 0o644 } }, createdBy: 'app' },
    ],
    config: { entrypoint: ['/usr/local/bin/node', '/app/main.js'], cmd: ['--version'], user: '65532:65532', env: { NODE_ENV: 'production' }, workingDir: '/app' },
  });

  it('builds the same digest twice, round-trips through the registry, and runs under chroot as 65532', async () => {
    const a = await buildImage(await options(new OciLayoutStore(join(work.dir, 'a'))));
    const b = await buildImage(await options(new OciLayoutStore(join(work.dir, 'b'))));
    assert.equal(a.manifest.descriptor.digest, b.manifest.descriptor.digest, 'reproducible');
    assert.deepEqual(a.layers.map((l) => l.diffId), b.layers.map((l) => l.diffId));

    const { client: c } = client(registries().registry);
    const repo = c.repository(uniqueRepo('node-image'));
    await copy(new OciLayoutStore(join(work.dir, 'a')), '1.0.0', repo, '1.0.0');
    const pulled = new OciLayoutStore(join(work.dir, 'pulled'));
    const r = await copy(repo, '1.0.0', pulled, '1.0.0');
    c.close();
    assert.equal(r.root.digest, a.root.digest);

    const root = join(work.dir, 'rootfs');
    const un = await unpackImage(pulled, '1.0.0', root);
    assert.deepEqual(await readFile(join(root, 'usr/local/bin/node')), await readFile(process.execPath));
    const cfg = un.config.config!;
    const { stdout } = await run('chroot', ['--userspec=65532:65532', root, ...cfg.Entrypoint!, ...cfg.Cmd!], { env: { PATH: '/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...Object.fromEntries(cfg.Env!.map((e) => e.split('='))) }, cwd: REPO_ROOT });
    assert.equal(stdout.trim(), 'olmpub-test 1.0.0 uid=65532');
  });

  it('builds on a base image read from the registry, mounting its layers into the new repository', async () => {
    const { client: c, events } = client(registries().registry);
    const baseRepo = c.repository(uniqueRepo('base'));
    const base = await buildImage({ store: baseRepo, tag: 'base', layers: [{ files: { '/etc/os-release': 'ID=olmpub-base\n', '/bin/tool': { content: 'x', mode: 0o755 } } }], config: { env: { PATH: '/bin' } } });
    const appRepo = c.repository(uniqueRepo('app'));
    const app = await buildImage({ store: appRepo, tag: 'v1', base: { store: baseRepo, reference: 'base' }, layers: [{ files: { '/app/main.js': '1' } }], config: { user: '65532' } });
    assert.equal(app.manifest.json.layers[0]!.digest, base.manifest.json.layers[0]!.digest);
    assert.deepEqual(app.config.json.rootfs.diff_ids[0], base.config.json.rootfs.diff_ids[0]);
    assert.ok(events.some((e) => e.method === 'POST' && e.url.includes(appRepo.repository)), 'an upload session in the new repository');
    assert.equal(events.filter((e) => e.method === 'PUT' && e.url.includes(`${appRepo.repository}/blobs/uploads/`)).length, 2, 'only the new layer and config are uploaded; the base layer is mounted');
    const root = join(work.dir, 'rootfs-base');
    await unpackImage(appRepo, 'v1', root);
    assert.equal(await readFile(join(root, 'etc/os-release'), 'utf8'), 'ID=olmpub-base\n');
    assert.equal(await readFile(join(root, 'app/main.js'), 'utf8'), '1');
    c.close();
  });
});
