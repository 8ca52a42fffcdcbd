/**
 * Interoperability with the REAL reference tools built from the Go module proxy (crane, oras, helm):
 * what olmpub writes they read, what they write olmpub reads, on the real registries of scripts/testenv.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaType, type Descriptor, type ImageManifest } from '../../../bundle/oci/content.js';
import { sha256 } from '../../../bundle/oci/digest.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import { helmChartArtifact, pushHelmChart, readChartYaml, helmConfigJSON } from '../../../bundle/oci/helm.js';
import { RegistryClient } from '../../../bundle/oci/remote.js';
import { dockerCredentials } from '../../../bundle/oci/credentials.js';
import { bufferSource, readAll } from '../../../bundle/oci/store.js';
import { buildImage } from '../../../bundle/image/build.js';
import { unpackImage } from '../../../bundle/image/unpack.js';
import { entriesFromFiles, normalizeEntries, readTar, tarStream } from '../../../bundle/image/tar.js';
import { client, dockerConfigDir, mustTool, registries, tempDir, tool, uniqueRepo } from './support.js';

describe('oci integration: interoperability with crane, oras and helm', function () {
  this.timeout(300_000);
  let env: ReturnType<typeof registries>;
  let work: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    env = registries();
    work = await tempDir('interop');
  });
  after(() => work.cleanup());

  async function olmpubImage(name: string) {
    const layout = new OciLayoutStore(join(work.dir, name));
    const built = await buildImage({
      store: layout,
      tag: 'v1',
      index: true,
      platform: { os: 'linux', architecture: 'amd64' },
      layers: [
        { files: { '/app/main.js': 'console.log("olmpub")\n', '/app/bin/run': { content: '#!/bin/sh\nexec node /app/main.js\n', mode: 0o755 } } },
        { files: { '/etc/olmpub/config.yaml': `id: ${randomBytes(4).toString('hex')}\n` } },
      ],
      config: { entrypoint: ['/app/bin/run'], user: '65532:65532', env: { NODE_ENV: 'production' }, labels: { 'org.opencontainers.image.title': 'olmpub' } },
    });
    return { layout, built };
  }

  describe('crane', () => {
    it('reads what olmpub pushes: digest, manifest bytes, config, and the flattened filesystem', async () => {
      const { layout, built } = await olmpubImage('crane-src');
      const repoName = uniqueRepo('to-crane');
      const ref = `${env.registry}/${repoName}:v1`;
      const { client: c } = client(env.registry);
      await copy(layout, 'v1', c.repository(repoName), 'v1');
      c.close();
      assert.equal((await mustTool('crane', ['digest', ref, '--insecure'])).trim(), built.root.digest);
      assert.equal(await mustTool('crane', ['manifest', ref, '--insecure', '--platform', 'linux/amd64']), built.manifest.bytes.toString());
      assert.equal(await mustTool('crane', ['config', ref, '--insecure', '--platform', 'linux/amd64']), built.config.bytes.toString());
      const exported = join(work.dir, 'crane-export.tar');
      await mustTool('crane', ['export', ref, exported, '--insecure', '--platform', 'linux/amd64']);
      const names = (await readTar(await readFile(exported))).map((e) => e.name);
      for (const f of ['app/main.js', 'app/bin/run', 'etc/olmpub/config.yaml']) assert.ok(names.some((n) => n.replace(/^\.?\//, '') === f), `${f} in ${names.join(',')}`);
      // crane also reads the OCI layout olmpub writes, and pushes it unchanged.
      const ref2 = `${env.registry}/${uniqueRepo('crane-push-layout')}:v1`;
      await mustTool('crane', ['push', layout.root, ref2, '--insecure']);
      assert.equal((await mustTool('crane', ['digest', ref2, '--insecure'])).trim(), built.root.digest);
    });

    it('olmpub reads what crane pushes, and crane pull --format oci layouts', async () => {
      const tarPath = join(work.dir, 'crane-layer.tar');
      await writeFile(tarPath, await readAll(tarStream(await normalizeEntries(entriesFromFiles({ '/hello.txt': 'from crane\n' })), { mtime: 0 })));
      const repoName = uniqueRepo('from-crane');
      const ref = `${env.registry}/${repoName}:v1`;
      await mustTool('crane', ['append', '-f', tarPath, '-t', ref, '--insecure', '--oci-empty-base']);
      const craneDigest = (await mustTool('crane', ['digest', ref, '--insecure'])).trim();
      const { client: c } = client(env.registry);
      const repo = c.repository(repoName);
      assert.equal((await repo.resolve('v1')).digest, craneDigest);
      const layout = new OciLayoutStore(join(work.dir, 'from-crane'));
      await copy(repo, 'v1', layout, 'v1');
      c.close();
      const root = join(work.dir, 'from-crane-rootfs');
      await unpackImage(layout, 'v1', root);
      assert.equal(await readFile(join(root, 'hello.txt'), 'utf8'), 'from crane\n');
      // A layout written by crane.
      const craneLayout = join(work.dir, 'crane-layout');
      await mustTool('crane', ['pull', ref, craneLayout, '--format', 'oci', '--insecure']);
      const theirs = new OciLayoutStore(craneLayout);
      const index = await theirs.readIndex();
      assert.equal(index.manifests[0]!.digest, craneDigest);
      const root2 = join(work.dir, 'crane-layout-rootfs');
      await unpackImage(theirs, craneDigest, root2);
      assert.equal(await readFile(join(root2, 'hello.txt'), 'utf8'), 'from crane\n');
    });
  });

  describe('oras', () => {
    it('reads what olmpub pushes and the OCI layouts olmpub writes', async () => {
      const { layout, built } = await olmpubImage('oras-src');
      const repoName = uniqueRepo('to-oras');
      const { client: c } = client(env.registry);
      await copy(layout, 'v1', c.repository(repoName), 'v1');
      c.close();
      const ref = `${env.registry}/${repoName}:v1`;
      assert.equal(await mustTool('oras', ['manifest', 'fetch', '--plain-http', ref]), built.index!.bytes.toString());
      const fetched = JSON.parse(await mustTool('oras', ['manifest', 'fetch', '--plain-http', '--descriptor', ref])) as Descriptor;
      assert.equal(fetched.digest, built.root.digest);
      // oras copies olmpub's layout to the registry (reading our index.json and blobs) ...
      const ref2 = `${env.registry}/${uniqueRepo('oras-from-layout')}:v1`;
      await mustTool('oras', ['cp', '--from-oci-layout', `${layout.root}:v1`, '--to-plain-http', ref2]);
      assert.equal(JSON.parse(await mustTool('oras', ['manifest', 'fetch', '--plain-http', '--descriptor', ref2])).digest, built.root.digest);
      // ... and an artifact olmpub pushes with a titled layer is pulled as a file.
      const file = Buffer.from(`payload ${randomBytes(8).toString('hex')}\n`);
      const layer: Descriptor = { mediaType: 'text/plain', digest: sha256(file), size: file.length, annotations: { 'org.opencontainers.image.title': 'payload.txt' } };
      const empty = Buffer.from('{}');
      const config: Descriptor = { mediaType: MediaType.Empty, digest: sha256(empty), size: 2 };
      const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ImageManifest, artifactType: 'application/vnd.olmpub.test', config, layers: [layer] }));
      const mdesc: Descriptor = { mediaType: MediaType.ImageManifest, digest: sha256(manifest), size: manifest.length };
      const { client: c2 } = client(env.registry);
      const repo = c2.repository(uniqueRepo('artifact'));
      await repo.pushBlob(layer, bufferSource(file));
      await repo.pushBlob(config, bufferSource(empty));
      await repo.pushManifest(mdesc, manifest, { tag: 'a1' });
      c2.close();
      const out = join(work.dir, 'oras-pull');
      await mustTool('oras', ['pull', '--plain-http', `${env.registry}/${repo.repository}:a1`, '-o', out]);
      assert.deepEqual(await readFile(join(out, 'payload.txt')), file);
    });

    it('olmpub reads what oras pushes, including to the auth registry with docker config.json credentials', async () => {
      const cfg = await dockerConfigDir({ [env.authRegistry]: { user: env.user, password: env.password } });
      try {
        const dir = join(work.dir, 'oras-push');
        await mkdir(dir, { recursive: true });
        const content = `from oras ${randomBytes(8).toString('hex')}\n`;
        await writeFile(join(dir, 'hello.txt'), content);
        for (const host of [env.registry, env.authRegistry]) {
          const repoName = uniqueRepo('from-oras');
          const ref = `${host}/${repoName}:v1`;
          const pushed = await mustTool('oras', ['push', '--plain-http', '--artifact-type', 'application/vnd.olmpub.test', ref, 'hello.txt:text/plain'], { cwd: dir, env: { DOCKER_CONFIG: cfg.dir } });
          const digest = /Digest: (sha256:[a-f0-9]{64})/.exec(pushed)?.[1];
          assert.ok(digest, pushed);
          const c = new RegistryClient(host, { plainHttp: true, credentials: dockerCredentials({ configPath: join(cfg.dir, 'config.json') }) });
          const repo = c.repository(repoName);
          const root = await repo.resolve('v1');
          assert.equal(root.digest, digest);
          const m = JSON.parse(Buffer.from(await repo.fetchManifest(root)).toString()) as ImageManifest;
          assert.equal(m.artifactType, 'application/vnd.olmpub.test');
          assert.equal(m.layers[0]!.annotations?.['org.opencontainers.image.title'], 'hello.txt');
          assert.equal((await readAll(await repo.fetchBlob(m.layers[0]!))).toString(), content);
          const layout = new OciLayoutStore(join(work.dir, `oras-${host.split(':')[1]}`));
          await copy(repo, 'v1', layout, 'v1');
          assert.equal((await layout.resolve('v1')).digest, digest);
          c.close();
        }
        // oras reads olmpub's copy back from the auth registry with the same config.json.
        const { layout, built } = await olmpubImage('oras-auth');
        const repoName = uniqueRepo('olmpub-auth');
        const c = new RegistryClient(env.authRegistry, { plainHttp: true, credentials: dockerCredentials({ configPath: join(cfg.dir, 'config.json') }) });
        await copy(layout, 'v1', c.repository(repoName), 'v1');
        c.close();
        const d = JSON.parse(await mustTool('oras', ['manifest', 'fetch', '--plain-http', '--descriptor', `${env.authRegistry}/${repoName}:v1`], { env: { DOCKER_CONFIG: cfg.dir } })) as Descriptor;
        assert.equal(d.digest, built.root.digest);
        const denied = await tool('oras', ['manifest', 'fetch', '--plain-http', `${env.authRegistry}/${repoName}:v1`], { env: { DOCKER_CONFIG: join(work.dir, 'nowhere') } });
        assert.notEqual(denied.code, 0, 'the auth registry really requires credentials');
      } finally {
        await cfg.cleanup();
      }
    });
  });

  describe('helm', () => {
    const helmEnv = () => ({ HELM_CONFIG_HOME: join(work.dir, 'helm', 'config'), HELM_CACHE_HOME: join(work.dir, 'helm', 'cache'), HELM_DATA_HOME: join(work.dir, 'helm', 'data') });

    async function packageChart(version: string): Promise<string> {
      const src = join(work.dir, `chart-${version}`, 'demo');
      await mkdir(join(src, 'templates'), { recursive: true });
      await writeFile(
        join(src, 'Chart.yaml'),
        `apiVersion: v2\nname: demo\nversion: ${version}\nappVersion: "1.0.0"\ndescription: A demo chart for olmpub <tests> & more\nhome: https://example.com/demo\nsources: [https://example.com/src]\nmaintainers:\n  - {name: Ada, email: ada@example.com}\nkubeVersion: ">=1.28.0-0"\nkeywords: [inference, operator]\nannotations:\n  example.com/team: platform\n`,
      );
      await writeFile(join(src, 'values.yaml'), 'replicas: 1\n');
      await writeFile(join(src, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: "{{ .Values.replicas }}"\n');
      const out = join(work.dir, `pkg-${version}`);
      await mkdir(out, { recursive: true });
      await mustTool('helm', ['package', src, '-d', out], { env: helmEnv() });
      const files = await readdir(out);
      return join(out, files.find((f) => f.endsWith('.tgz'))!);
    }

    it('helm pull reads the chart olmpub pushes, byte for byte (+ in the version becomes _ in the tag)', async () => {
      const tgzPath = await packageChart('1.2.3+build.7');
      const tgz = await readFile(tgzPath);
      const ns = uniqueRepo('charts');
      const { client: c } = client(env.registry);
      const art = await pushHelmChart(tgz, c.repository(`${ns}/demo`));
      c.close();
      assert.equal(art.tag, '1.2.3_build.7');
      const out = join(work.dir, 'helm-pull');
      await mkdir(out, { recursive: true });
      await mustTool('helm', ['pull', `oci://${env.registry}/${ns}/demo`, '--version', '1.2.3+build.7', '--plain-http', '-d', out], { env: helmEnv() });
      assert.deepEqual(await readFile(join(out, 'demo-1.2.3+build.7.tgz')), tgz);
      const shown = await mustTool('helm', ['show', 'chart', `oci://${env.registry}/${ns}/demo`, '--version', '1.2.3+build.7', '--plain-http'], { env: helmEnv() });
      assert.match(shown, /name: demo/);
    });

    it('olmpub reads what helm push writes, and builds the very same manifest for the same chart', async () => {
      const tgzPath = await packageChart('0.4.0');
      const created = new Date('2025-06-01T12:00:00Z');
      await utimes(tgzPath, created, created);
      const ns = uniqueRepo('helm-push');
      await mustTool('helm', ['push', tgzPath, `oci://${env.registry}/${ns}`, '--plain-http'], { env: helmEnv() });
      const { client: c } = client(env.registry);
      const repo = c.repository(`${ns}/demo`);
      const root = await repo.resolve('0.4.0');
      const theirs = Buffer.from(await repo.fetchManifest(root));
      const m = JSON.parse(theirs.toString()) as ImageManifest;
      assert.equal(m.config.mediaType, MediaType.HelmConfig);
      assert.equal(m.layers[0]!.mediaType, MediaType.HelmChartContent);
      const tgz = await readFile(tgzPath);
      assert.deepEqual(await readAll(await repo.fetchBlob(m.layers[0]!)), tgz);
      const theirConfig = (await readAll(await repo.fetchBlob(m.config))).toString();
      assert.equal(helmConfigJSON((await readChartYaml(tgz)).metadata), theirConfig, 'config JSON identical to Helm\'s');
      const ours = await helmChartArtifact(tgz, { created });
      assert.deepEqual(m.annotations, ours.manifest.json.annotations);
      assert.equal(ours.manifest.bytes.toString(), theirs.toString(), 'manifest bytes identical to helm push');
      assert.equal(ours.manifest.descriptor.digest, root.digest);
      c.close();
    });
  });
});
