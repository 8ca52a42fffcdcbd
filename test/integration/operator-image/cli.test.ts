/**
 * `olmpub image build` as users run it (a child process of bin/olmpub.js): into the REAL registry (read
 * back by crane), into the default OCI layout on a base image, usage errors; and the image build wired
 * into `olmpub bundle build`, which pins the chart and the CSV to the operator image's digest.
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { copy } from '../../../bundle/oci/copy.js';
import { buildRelease, DEFAULT_IMAGE_REPOSITORY } from '../../../bundle/release.js';
import { client, mustTool, registries, tempDir, uniqueRepo } from '../oci/support.js';
import { debianLikeBase, olmpub } from './support.js';

const pkg = JSON.parse(await readFile(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('operator image: olmpub image build and bundle build', function () {
  this.timeout(600_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    work = await tempDir('operator-image-cli');
  });
  after(() => work?.cleanup());

  it('builds into the registry with -o json; crane reads the digest it reports; no progress off a TTY', async () => {
    const reg = registries().registry;
    const repo = uniqueRepo('cli');
    const r = await olmpub(['image', 'build', '--out', `${reg}/${repo}:cli`, '--plain-http', '-o', 'json'], { env: { SOURCE_DATE_EPOCH: '1700000000' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no progress output when stderr is not a terminal');
    const data = JSON.parse(r.stdout) as { reference: string; digest: string; tag: string; version: string; created: string; layers: Array<{ role: string; digest: string; size: number }>; totalSize: number };
    assert.equal(data.reference, `${reg}/${repo}:cli`);
    assert.equal(data.tag, 'cli');
    assert.equal(data.version, pkg.version);
    assert.equal(data.created, '2023-11-14T22:13:20Z', 'SOURCE_DATE_EPOCH sets the creation time');
    assert.deepEqual(data.layers.map((l) => l.role), ['node-runtime', 'dependencies', 'app']);
    assert.equal((await mustTool('crane', ['digest', '--insecure', `${reg}/${repo}:cli`])).trim(), data.digest);
    const manifest = JSON.parse(await mustTool('crane', ['manifest', '--insecure', `${reg}/${repo}@${data.digest}`])) as { layers: Array<{ digest: string; size: number }> };
    assert.deepEqual(manifest.layers.map((l) => [l.digest, l.size]), data.layers.map((l) => [l.digest, l.size]));
  });

  it('writes to out/oci under operator-v<version> by default, on a --base, with a summary for people', async () => {
    const baseDir = join(work.dir, 'base');
    const { client: c } = client(registries().registry);
    try {
      // A base with node, in an OCI layout (built in the registry, copied out as a user would).
      const repo = uniqueRepo('cli-base');
      await debianLikeBase(c.repository(repo), 'node', { node: true });
      await copy(c.repository(repo), 'node', new OciLayoutStore(baseDir), 'node');
    } finally {
      c.close();
    }
    const r = await olmpub(['image', 'build', '--base', `oci:${baseDir}:node`], { cwd: work.dir, env: { SOURCE_DATE_EPOCH: '1700000000' } });
    assert.equal(r.code, 0, r.stderr);
    const index = JSON.parse(await readFile(join(work.dir, 'out/oci/index.json'), 'utf8')) as { manifests: Array<{ digest: string; annotations: Record<string, string> }> };
    assert.deepEqual(index.manifests.map((m) => m.annotations['org.opencontainers.image.ref.name']), [`operator-v${pkg.version}`]);
    const digest = index.manifests[0]!.digest;
    assert.match(r.stdout, new RegExp(`^built inference-operator ${pkg.version.replace(/\./g, '\\.')} \\(linux/amd64\\) → oci:out/oci:operator-v`, 'm'));
    assert.match(r.stdout, new RegExp(`^  digest +${digest}$`, 'm'));
    assert.match(r.stdout, /^ {2}node +\/usr\/bin\/node of the base image/m);
    assert.match(r.stdout, /^LAYER +DIGEST +SIZE +UNPACKED +FILES$/m);
    assert.match(r.stdout, /^base +sha256:[0-9a-f]{64} /m);
    assert.match(r.stdout, /^dependencies +sha256:[0-9a-f]{64} +[\d.]+ (KiB|MiB) +[\d.]+ MiB +\d+$/m);
    assert.match(r.stdout, /^app +sha256:/m);
    assert.doesNotMatch(r.stdout, /^node runtime/m, 'the base has node: no runtime layer');
  });

  it('refuses bad usage with exit code 2 and writes nothing', async () => {
    const cases: string[][] = [
      ['image', 'build', '--node-runtime', 'sometimes'],
      ['image', 'build', '--out', `oci:${join(work.dir, 'x')}@sha256:${'a'.repeat(64)}`],
      ['image', 'build', 'extra'],
      ['image', 'build', '--node-runtime', 'never'],
    ];
    for (const args of cases) {
      const r = await olmpub(args, { cwd: join(work.dir) });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^error: /);
    }
    assert.ok(!(await readdir(work.dir)).includes('x'));
  });

  it('is what olmpub bundle build calls: the chart and the CSV pin the operator image digest in the release layout', async () => {
    await assert.rejects(
      buildRelease({ out: join(work.dir, 'never'), version: '99.0.0', created: 0 }),
      (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-version-mismatch',
      'the image of this checkout cannot be released as another version',
    );
    const out = join(work.dir, 'release');
    const result = await buildRelease({ out, version: pkg.version, created: 1_700_000_000 });
    const op = result.images.operator!;
    assert.ok(op, 'the release has an operator image');
    assert.equal(result.image, `${DEFAULT_IMAGE_REPOSITORY}@${op.digest}`);
    const layout = new OciLayoutStore(join(out, 'oci'));
    assert.equal((await layout.resolve(op.tag)).digest, op.digest);
    const csvFile = (await readdir(join(out, 'bundle/manifests'))).find((f) => f.endsWith('clusterserviceversion.yaml'))!;
    assert.ok((await readFile(join(out, 'bundle/manifests', csvFile), 'utf8')).includes(`${DEFAULT_IMAGE_REPOSITORY}@${op.digest}`), 'the CSV pins the digest');
  });
});
