/** `olmpub image copy` and `olmpub image inspect` as a user runs them, against the REAL registries. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { OciLayoutStore } from '../../../bundle/oci/layout.js';
import { buildImage } from '../../../bundle/image/build.js';
import { REPO_ROOT } from '../../support/env.js';
import { dockerConfigDir, registries, tempDir, uniqueRepo } from './support.js';

function olmpub(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(REPO_ROOT, 'bin/olmpub.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('oci integration: olmpub image copy / inspect', function () {
  this.timeout(120_000);
  let work: Awaited<ReturnType<typeof tempDir>>;
  let env: ReturnType<typeof registries>;
  before(async () => {
    env = registries();
    work = await tempDir('cli');
    await buildImage({ store: new OciLayoutStore(join(work.dir, 'src')), tag: '1.0.0', layers: [{ files: { '/hello': 'hi\n' } }], config: { cmd: ['/hello'], labels: { tier: 'cli' } } });
  });
  after(() => work.cleanup());

  it('copies layout → registry → layout and inspects both, as text and JSON', async () => {
    const ref = `${env.registry}/${uniqueRepo('cli')}`;
    const up = await olmpub(['image', 'copy', `oci:${join(work.dir, 'src')}:1.0.0`, ref, '--plain-http', '-o', 'json']);
    assert.equal(up.code, 0, up.stderr);
    const result = JSON.parse(up.stdout);
    assert.equal(result.tag, '1.0.0');
    assert.equal(up.stderr, '', 'no progress bar when stderr is not a TTY');
    const down = await olmpub(['image', 'copy', `${ref}:1.0.0`, `oci:${join(work.dir, 'dst')}`, '--plain-http']);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, new RegExp(result.digest));
    const inspect = await olmpub(['image', 'inspect', `oci:${join(work.dir, 'dst')}:1.0.0`, '-o', 'json']);
    assert.equal(inspect.code, 0, inspect.stderr);
    const data = JSON.parse(inspect.stdout);
    assert.equal(data.descriptor.digest, result.digest);
    assert.deepEqual(data.config.config.Labels, { tier: 'cli' });
    const text = await olmpub(['image', 'inspect', `${ref}:1.0.0`, '--plain-http']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /label +tier=cli/);
  });

  it('exits 3 with a clear message on auth failures, never printing the password, and 2 on bad references', async () => {
    const cfg = await dockerConfigDir({ [env.authRegistry]: { user: env.user, password: 'definitely-wrong-secret' } });
    try {
      const r = await olmpub(['image', 'copy', `oci:${join(work.dir, 'src')}:1.0.0`, `${env.authRegistry}/${uniqueRepo('cli-auth')}:1`, '--plain-http'], { DOCKER_CONFIG: cfg.dir });
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /rejected the credentials/);
      assert.ok(!(r.stderr + r.stdout).includes('definitely-wrong-secret'));
      const good = await dockerConfigDir({ [env.authRegistry]: { user: env.user, password: env.password } });
      const ok = await olmpub(['image', 'copy', `oci:${join(work.dir, 'src')}:1.0.0`, `${env.authRegistry}/${uniqueRepo('cli-auth')}:1`, '--plain-http'], { DOCKER_CONFIG: good.dir });
      await good.cleanup();
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      await cfg.cleanup();
    }
    const bad = await olmpub(['image', 'inspect', 'Reg.io/UPPER:1']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid reference/);
    const missing = await olmpub(['image', 'inspect', `oci:${join(work.dir, 'src')}:nope`]);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /tag "nope" not found/);
  });
});
