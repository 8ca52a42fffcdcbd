/**
 * The operator image on a base image, from the REAL registry or an OCI layout: the node runtime layer
 * is skipped when the base has node (found through PATH, symlinks and whiteouts), added through the
 * base's symlinked directories when it has not, and the result runs under chroot either way.
 */
import assert from 'node:assert/strict';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { anonymous } from '../../../bundle/oci/credentials.js';
import { unpackImage } from '../../../bundle/image/unpack.js';
import { buildOperatorImage, buildPinnedOperatorImage } from '../../../bundle/operator-image/index.js';
import { client, mustTool, registries, tempDir, uniqueRepo } from '../oci/support.js';
import { debianLikeBase, inChroot } from './support.js';

const pkg = JSON.parse(await readFile(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('operator image: on a base image', function () {
  this.timeout(600_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  const reg = () => registries().registry;
  const baseRepo = uniqueRepo('node-base');
  before(async () => {
    work = await tempDir('operator-image-base');
  });
  after(() => work?.cleanup());

  it('reuses a registry base that has node: no runtime layer, /usr/local/bin/node links to the base node, runs under chroot', async () => {
    const { client: c } = client(reg());
    let baseDigest: string;
    try {
      const base = await debianLikeBase(c.repository(baseRepo), 'node', { node: true });
      baseDigest = base.manifest.descriptor.digest;
    } finally {
      c.close();
    }
    const layout = new OciLayoutStore(join(work.dir, 'on-node-base'));
    const r = await buildOperatorImage({ store: layout, base: `${reg()}/${baseRepo}:node`, remote: { plainHttp: true, credentials: anonymous }, created: 1_700_000_000, revision: null, gzipLevel: 1 });
    assert.deepEqual(r.layers.map((l) => l.role), ['base', 'base', 'base', 'dependencies', 'app']);
    assert.deepEqual(r.node, { from: 'base', path: '/usr/bin/node', version: process.versions.node }, 'the decoy /usr/local/bin/node is whited out, PATH finds /usr/bin/node');
    assert.deepEqual(r.base, { reference: `${reg()}/${baseRepo}:node`, digest: baseDigest, node: '/usr/bin/node' });
    assert.equal(r.built.manifest.json.annotations?.['org.opencontainers.image.base.digest'], baseDigest);
    assert.equal(r.built.manifest.json.annotations?.['org.opencontainers.image.base.name'], `${reg()}/${baseRepo}:node`);
    const cfg = r.built.config.json;
    assert.ok(cfg.config!.Env!.includes('PATH=/usr/local/bin:/usr/bin:/bin'), "the base's PATH is kept");
    assert.ok(cfg.config!.Env!.includes(`NODE_VERSION=${process.versions.node}`));
    assert.deepEqual(cfg.history!.map((h) => h.created_by!.split(':')[0]), ['skeleton', 'node', 'remove the decoy', 'olmpub image build', 'olmpub image build']);

    const root = join(work.dir, 'rootfs-node-base');
    await unpackImage(layout, pkg.version, root);
    assert.equal(await readlink(join(root, 'usr/local/bin/node')), '/usr/bin/node');
    assert.equal(await readlink(join(root, 'lib')), 'usr/lib', "the base's merged /usr is intact");
    const out = await inChroot(root, cfg.config!.Env!, [...cfg.config!.Entrypoint!, '--version']);
    assert.equal(out.stdout, `olmpub ${pkg.version}\n`);
  });

  it('adds the runtime layer through the symlinks of a layout base without node, keeping the base files', async () => {
    const baseDir = join(work.dir, 'skeleton-layout');
    await debianLikeBase(new OciLayoutStore(baseDir), 'skeleton');
    const layout = new OciLayoutStore(join(work.dir, 'on-skeleton'));
    const r = await buildOperatorImage({ store: layout, base: `oci:${baseDir}:skeleton`, created: 1_700_000_000, revision: null, gzipLevel: 1, tag: 'on-skeleton' });
    assert.deepEqual(r.layers.map((l) => l.role), ['base', 'node-runtime', 'dependencies', 'app']);
    assert.equal(r.node.from, 'runtime-layer');
    const root = join(work.dir, 'rootfs-skeleton');
    await unpackImage(layout, 'on-skeleton', root);
    assert.equal(await readlink(join(root, 'lib')), 'usr/lib');
    assert.equal(await readlink(join(root, 'lib64')), 'usr/lib64');
    assert.equal(await readFile(join(root, 'usr/lib/x86_64-linux-gnu/base-marker'), 'utf8'), 'from the base\n');
    assert.ok((await lstat(join(root, 'usr/lib/x86_64-linux-gnu/libc.so.6'))).isFile(), 'libc went through /lib → usr/lib');
    assert.ok((await lstat(join(root, 'usr/lib64/ld-linux-x86-64.so.2'))).isFile());
    const cfg = r.built.config.json.config!;
    const out = await inChroot(root, cfg.Env!, [...cfg.Entrypoint!, '--version']);
    assert.equal(out.stdout, `olmpub ${pkg.version}\n`);
  });

  it("refuses a base whose declared node does not satisfy engines.node, before writing anything", async () => {
    const { client: c } = client(reg());
    try {
      await debianLikeBase(c.repository(baseRepo), 'old-node', { nodeVersion: '18.20.0', base: { store: c.repository(baseRepo), reference: 'node' } });
    } finally {
      c.close();
    }
    const dir = join(work.dir, 'refused');
    await assert.rejects(
      buildOperatorImage({ store: new OciLayoutStore(dir), base: `${reg()}/${baseRepo}:old-node`, remote: { plainHttp: true, credentials: anonymous }, created: 0, revision: null }),
      (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-base-node-version' && /18\.20\.0/.test(e.message),
    );
    await assert.rejects(lstat(join(dir, 'index.json')), 'no layout was written');
  });

  it('pins by digest for the bundle build: repository@digest, built straight into a registry repository on a mounted base', async () => {
    const { client: c, events } = client(reg());
    const repo = uniqueRepo('pinned');
    try {
      const pinned = await buildPinnedOperatorImage({ store: c.repository(repo), base: { store: c.repository(baseRepo), reference: 'node' }, created: 1_700_000_000, revision: null, gzipLevel: 1 });
      assert.equal(pinned.repository, `${reg()}/${repo}`);
      assert.equal(pinned.image, `${reg()}/${repo}@${pinned.digest}`);
      assert.equal((await mustTool('crane', ['digest', '--insecure', pinned.image])).trim(), pinned.digest);
      assert.equal((await mustTool('crane', ['digest', '--insecure', `${reg()}/${repo}:${pkg.version}`])).trim(), pinned.digest);
      assert.ok(events.some((e) => e.method === 'POST' && e.url.includes(`${repo}/blobs/uploads`) && e.status === 201), 'base layers are mounted from the base repository');
    } finally {
      c.close();
    }
    await assert.rejects(buildPinnedOperatorImage({ store: new OciLayoutStore(join(work.dir, 'nameless')) }), (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-repository');
    await assert.rejects(buildPinnedOperatorImage({ store: new OciLayoutStore(join(work.dir, 'nameless')), repository: 'ghcr.io/acme/op:1.0' }), (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-repository');
  });
});
