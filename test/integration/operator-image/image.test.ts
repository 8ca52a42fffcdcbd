/**
 * The operator image, built without Docker, proven to run: reproducible digest, a round trip through the
 * REAL registry of scripts/testenv, read back by the REAL crane, unpacked and run under chroot as 65532
 * (--version, --help, operator crds, and client-node reaching the REAL apiserver over TLS with in-cluster
 * credentials), writing nothing outside /tmp.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { cp, lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import YAML from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import { unpackImage } from '../../../bundle/image/unpack.js';
import { APP_DIRS, buildOperatorImage, gitHead, type OperatorImage, type OperatorImageOptions } from '../../../bundle/operator-image/index.js';
import { REPO_ROOT, eventually, testenv } from '../../support/env.js';
import { client, mustTool, registries, tempDir, uniqueRepo } from '../oci/support.js';
import { inChroot } from './support.js';

const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; license: string };

/** path → mode:size:mtime for everything under root except /tmp. */
async function treeState(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, rel: string) => {
    for (const name of await readdir(dir)) {
      const r = `${rel}/${name}`;
      if (r === '/tmp') continue;
      const st = await lstat(join(dir, name));
      out.set(r, `${st.mode.toString(8)}:${st.size}:${st.mtimeMs}:${st.uid}`);
      if (st.isDirectory()) await walk(join(dir, name), r);
    }
  };
  await walk(root, '');
  return out;
}

describe('operator image: built without Docker, run under chroot', function () {
  this.timeout(600_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  let snapshot: string;
  let revision: string;
  let a: OperatorImage;
  let b: OperatorImage;
  let env: string[];
  const root = () => join(work.dir, 'rootfs');
  const repo = uniqueRepo('operator-image');
  const created = 1_700_000_000;

  // The inputs, frozen: other work in this tree recompiles dist/ and commits at any time.
  const options = (store: OciLayoutStore): OperatorImageOptions => ({ store, distDir: snapshot, revision, created });

  before(async () => {
    work = await tempDir('operator-image');
    snapshot = join(work.dir, 'dist');
    for (const d of APP_DIRS) await cp(join(REPO_ROOT, 'dist', d), join(snapshot, d), { recursive: true, preserveTimestamps: true });
    revision = (await gitHead(REPO_ROOT))!.revision;
  });
  after(() => work?.cleanup());

  it('builds the same manifest digest twice from the same inputs, with the config the operator needs', async () => {
    a = await buildOperatorImage(options(new OciLayoutStore(join(work.dir, 'a'))));
    b = await buildOperatorImage(options(new OciLayoutStore(join(work.dir, 'b'))));
    assert.equal(a.digest, b.digest, 'reproducible');
    assert.deepEqual(a.layers, b.layers);
    assert.match(a.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(a.tag, pkg.version);
    assert.deepEqual(a.layers.map((l) => l.role), ['node-runtime', 'dependencies', 'app']);
    assert.equal(a.totalSize, a.size + a.config.size + a.layers.reduce((n, l) => n + l.size, 0));
    // The layout holds what the result says.
    const layout = new OciLayoutStore(join(work.dir, 'a'));
    const desc = await layout.resolve(pkg.version);
    assert.equal(desc.digest, a.digest);
    assert.equal(desc.size, a.size);

    const cfg = a.built.config.json;
    const c = cfg.config!;
    assert.deepEqual(c.Entrypoint, ['/usr/local/bin/node', '/app/bin/olmpub.js']);
    assert.deepEqual(c.Cmd, ['operator', 'run']);
    assert.equal(c.User, '65532:65532');
    assert.equal(c.WorkingDir, '/app');
    assert.ok(c.Env!.includes('NODE_ENV=production'));
    assert.ok(c.Env!.some((e) => e.startsWith('PATH=') && e.split(':').includes('/usr/local/bin')));
    assert.deepEqual(Object.keys(c.ExposedPorts ?? {}).sort(), ['8081/tcp', '8443/tcp', '9443/tcp']);
    assert.deepEqual(c.Labels, {
      'org.opencontainers.image.title': 'inference-operator',
      'org.opencontainers.image.description': c.Labels!['org.opencontainers.image.description'],
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.source': 'https://github.com/olmpub/olmpub',
      'org.opencontainers.image.url': 'https://github.com/olmpub/olmpub',
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.created': '2023-11-14T22:13:20Z',
    });
    assert.equal(cfg.created, '2023-11-14T22:13:20Z');
    assert.deepEqual(cfg.rootfs.diff_ids, a.layers.map((l) => l.diffId));
    assert.equal(cfg.history!.length, 3);
    assert.ok(cfg.history!.every((h) => h.created === cfg.created && /^olmpub image build: /.test(h.created_by ?? '')));
    env = c.Env!;
  });

  it('round-trips through the registry; crane reads the same manifest, user, entrypoint and diff_ids', async () => {
    const reg = registries().registry;
    const { client: c } = client(reg);
    try {
      await copy(new OciLayoutStore(join(work.dir, 'a')), pkg.version, c.repository(repo), pkg.version);
      const back = await copy(c.repository(repo), pkg.version, new OciLayoutStore(join(work.dir, 'pulled')), pkg.version);
      assert.equal(back.root.digest, a.digest);
    } finally {
      c.close();
    }
    const ref = `${reg}/${repo}:${pkg.version}`;
    assert.equal((await mustTool('crane', ['digest', '--insecure', ref])).trim(), a.digest);
    const manifest = JSON.parse(await mustTool('crane', ['manifest', '--insecure', ref])) as { config: { digest: string }; layers: Array<{ digest: string; size: number }> };
    assert.equal(manifest.config.digest, a.config.digest);
    assert.deepEqual(manifest.layers.map((l) => [l.digest, l.size]), a.layers.map((l) => [l.digest, l.size]));
    const config = JSON.parse(await mustTool('crane', ['config', '--insecure', ref])) as { config: { User: string; Entrypoint: string[]; Cmd: string[]; WorkingDir: string }; rootfs: { diff_ids: string[] }; os: string; architecture: string };
    assert.equal(config.config.User, '65532:65532');
    assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/node', '/app/bin/olmpub.js']);
    assert.deepEqual(config.config.Cmd, ['operator', 'run']);
    assert.equal(config.config.WorkingDir, '/app');
    assert.deepEqual(config.rootfs.diff_ids, a.layers.map((l) => l.diffId));
    assert.equal(`${config.os}/${config.architecture}`, 'linux/amd64');
  });

  it('unpacks to a root filesystem with node, the production dependencies and the app, and nothing of the dev tooling', async () => {
    await unpackImage(new OciLayoutStore(join(work.dir, 'pulled')), pkg.version, root());
    assert.deepEqual(await readFile(join(root(), 'usr/local/bin/node')), await readFile(process.execPath));
    assert.match(await readFile(join(root(), 'etc/passwd'), 'utf8'), /^nonroot:x:65532:65532:/m);
    assert.deepEqual(await readFile(join(root(), 'etc/ssl/certs/ca-certificates.crt')), await readFile('/etc/ssl/certs/ca-certificates.crt'));
    assert.equal((await lstat(join(root(), 'tmp'))).mode & 0o7777, 0o1777);
    const modules = await readdir(join(root(), 'app/node_modules'));
    for (const dep of ['@kubernetes', 'ajv', 'prom-client', 'semver', 'tar-stream', 'yaml']) assert.ok(modules.includes(dep), dep);
    for (const dev of ['typescript', 'mocha', '@typescript', '.bin']) assert.ok(!modules.includes(dev), `${dev} must not be in the image`);
    assert.deepEqual((await readdir(join(root(), 'app/dist'))).sort(), [...APP_DIRS].sort());
    assert.deepEqual(await readFile(join(root(), 'app/package.json')), await readFile(join(REPO_ROOT, 'package.json')));
    // Only /tmp and the user's home are writable by 65532; everything else is root's.
    const writable: string[] = [];
    const walk = async (dir: string, rel: string) => {
      for (const name of await readdir(dir)) {
        const st = await lstat(join(dir, name));
        const r = `${rel}/${name}`;
        if (st.isSymbolicLink()) continue;
        if (st.uid === 65532 || st.mode & 0o002) writable.push(r);
        if (st.isDirectory()) await walk(join(dir, name), r);
      }
    };
    await walk(root(), '');
    assert.deepEqual(writable.sort(), ['/home/nonroot', '/tmp']);
  });

  it('runs the entrypoint as 65532 under chroot: --version is the package version, --help and operator crds work, nothing is written outside /tmp', async () => {
    const before = await treeState(root());
    const version = await inChroot(root(), env, ['/usr/local/bin/node', '/app/bin/olmpub.js', '--version']);
    assert.equal(version.stdout, `olmpub ${pkg.version}\n`);
    const help = await inChroot(root(), env, ['/usr/local/bin/node', '/app/bin/olmpub.js', '--help']);
    assert.match(help.stdout, /^Usage: olmpub <noun> <verb>/m);
    assert.match(help.stdout, /^ {2}image build +build the operator image/m);
    const crds = await inChroot(root(), env, ['/usr/local/bin/node', '/app/bin/olmpub.js', 'operator', 'crds']);
    const docs = YAML.parseAllDocuments(crds.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { versions: Array<{ name: string; storage: boolean }> } });
    assert.deepEqual(docs.map((d) => `${d.kind}/${d.metadata.name}`), ['CustomResourceDefinition/inferenceservices.inference.olmpub.dev']);
    assert.deepEqual(docs[0]!.spec.versions.map((v) => `${v.name}${v.storage ? '*' : ''}`).sort(), ['v1*', 'v1alpha1']);
    const uid = await inChroot(root(), env, ['/usr/local/bin/node', '-p', 'process.getuid() + ":" + process.getgid() + " " + require("os").userInfo().username + " " + require("os").tmpdir()']);
    assert.equal(uid.stdout.trim(), '65532:65532 nonroot /tmp');
    assert.deepEqual(await treeState(root()), before, 'the root filesystem is unchanged outside /tmp');
  });

  it('reaches the REAL apiserver over TLS from inside the image with in-cluster credentials (client-node from the image)', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(testenv('KUBECONFIG'));
    const token = await kc.makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({ name: 'default', namespace: 'default', body: { spec: { audiences: [], expirationSeconds: 600 } } });
    const cluster = kc.getCurrentCluster()!;
    const sa = join(root(), 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), token.status!.token);
    await writeFile(join(sa, 'ca.crt'), Buffer.from(cluster.caData!, 'base64'));
    await writeFile(join(sa, 'namespace'), 'default');
    const server = new URL(cluster.server);
    const script = `
      const k8s = await import('/app/node_modules/@kubernetes/client-node/dist/index.js');
      const kc = new k8s.KubeConfig();
      kc.loadFromCluster();
      const version = await kc.makeApiClient(k8s.VersionApi).getCode();
      const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
      console.log(JSON.stringify({ gitVersion: version.gitVersion, user: review.status.userInfo.username }));`;
    const out = await inChroot(root(), env, ['/usr/local/bin/node', '--input-type=module', '-e', script], { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port });
    const got = JSON.parse(out.stdout) as { gitVersion: string; user: string };
    assert.match(got.gitVersion, /^v1\.\d+\.\d+/);
    assert.equal(got.user, 'system:serviceaccount:default:default');
  });

  it("runs the image's default command, operator run, as 65532: /healthz answers, SIGTERM stops it cleanly, nothing written outside /tmp", async () => {
    // Admin credentials in /tmp (as a mounted kubeconfig would be); a namespace nobody uses, so the operator
    // reconciles nothing of the other tests sharing this cluster.
    await writeFile(join(root(), 'tmp/kubeconfig'), await readFile(testenv('KUBECONFIG')), { mode: 0o644 });
    const port = await freePort();
    const before = await treeState(root());
    const chroot = (process.env.PATH ?? '').split(':').map((d) => join(d, 'chroot')).find((p) => existsSync(p)) ?? '/usr/sbin/chroot';
    const cfg = a.built.config.json.config!;
    const args = [...cfg.Entrypoint!, ...cfg.Cmd!, '--kubeconfig', '/tmp/kubeconfig', `--health-probe-bind-address=127.0.0.1:${port}`, '--metrics-bind-address=0', '--webhook-bind-address=0', '--watch-namespace', `olmpub-image-${randomBytes(4).toString('hex')}`];
    const child = spawn(chroot, ['--userspec=65532:65532', root(), ...args], { env: Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])), stdio: ['ignore', 'pipe', 'pipe'] });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
    child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the operator\'s /healthz', async () => {
        if (child.exitCode !== null) throw new Error(`the operator exited with ${child.exitCode}:\n${logs}`);
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        return res.status === 200;
      }, 120_000, 250);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, logs);
    const lines = logs.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string });
    assert.ok(lines.some((l) => l.msg === 'the operator stopped'), logs);
    assert.deepEqual(await treeState(root()), before, 'the root filesystem is unchanged outside /tmp');
  });
});

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
