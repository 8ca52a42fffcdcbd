/**
 * `olmpub publish` end to end, checked by the real reference tools: into the default OCI layout
 * (reproducible, accepted by opm validate), into the real registry (catalog read back by opm render,
 * chart pulled by helm, operator image read by crane), and failures that leave nothing half-written.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { publish, type PublishResult } from '../../../catalog/publish.js';
import { loadFromFiles, loadCatalogDir } from '../../../catalog/index.js';
import { OciLayoutStore } from '../../../bundle/oci/index.js';
import { OlmpubError } from '../../../lib/errors.js';
import { REPO_ROOT, containersEnv, testenv, toolBin } from '../../support/env.js';
import { blobSet } from '../../support/fbc.js';
import { tree } from '../../support/files.js';

const run = promisify(execFile);
const TEMPLATE = join(REPO_ROOT, 'catalog/template.yaml');

describe('olmpub publish', function () {
  this.timeout(600_000);

  describe('into the default OCI layout', () => {
    let out: string;
    let result: PublishResult;

    before(async () => {
      out = join(mkdtempSync(join(tmpdir(), 'publish-')), 'out');
      result = await publish({ template: TEMPLATE, out, created: 1_700_000_000 });
    });

    it('publishes every template version with the catalog, bundles, charts and images', async () => {
      assert.deepEqual(result.versions.map((v) => v.version), ['1.0.0', '1.0.1', '1.1.0', '1.2.0']);
      assert.equal(result.defaultChannel, 'stable-v1');
      const layout = new OciLayoutStore(join(out, 'oci'));
      const tags = await layout.tags();
      for (const t of ['operator-v1.2.0', 'bundle-v1.0.0', 'bundle-v1.2.0', 'chart-1.2.0', 'catalog-latest']) assert.ok(tags.includes(t), `tag ${t} in ${tags.join(', ')}`);
      assert.equal(`ghcr.io/olmpub/inference-operator-catalog@${(await layout.resolve('catalog-latest')).digest}`, result.catalogImage);
      assert.deepEqual((await readdir(join(out, 'bundles'))).sort(), ['1.0.0', '1.0.1', '1.1.0', '1.2.0']);
      assert.deepEqual((await readdir(join(out, 'charts'))).sort(), ['inference-operator-1.0.0.tgz', 'inference-operator-1.0.1.tgz', 'inference-operator-1.1.0.tgz', 'inference-operator-1.2.0.tgz']);
      const ce = readFileSync(join(out, 'extension/clustercatalog.yaml'), 'utf8');
      assert.ok(ce.includes(result.catalogImage), 'the ClusterCatalog pins the catalog image by digest');
      assert.match(readFileSync(join(out, 'graph.html'), 'utf8'), /<svg/);
    });

    it('writes a catalog the real opm validate accepts, holding the pushed bundle digests', async () => {
      await run(join(toolBin('opm'), 'opm'), ['validate', join(out, 'catalog')]);
      const { config } = await loadCatalogDir(join(out, 'catalog'));
      assert.deepEqual(config.bundles.map((b) => b.image).sort(), result.versions.map((v) => v.bundle).sort());
      const deprecations = config.deprecations[0]!.entries.map((e) => e.reference.name);
      assert.deepEqual(deprecations, ['inference-operator.v1.0.0']);
    });

    it('is reproducible: the same checkout gives byte-identical output', async () => {
      const again = join(mkdtempSync(join(tmpdir(), 'publish-')), 'out');
      await publish({ template: TEMPLATE, out: again, created: 1_700_000_000 });
      const [a, b] = [await tree(out), await tree(again)];
      assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
      for (const [k, v] of a) assert.ok(v.equals(b.get(k)!), `${k} differs`);
    });

    it('reuses a released bundle pinned in the template, found by digest in the target layout', async () => {
      const released = result.versions.find((v) => v.version === '1.0.1')!.bundle;
      const dir = mkdtempSync(join(tmpdir(), 'publish-pinned-'));
      copyFileSync(join(REPO_ROOT, 'catalog/icon.svg'), join(dir, 'icon.svg'));
      writeFileSync(join(dir, 'template.yaml'), readFileSync(TEMPLATE, 'utf8').replace('  - version: 1.0.1\n    stage: stable', `  - version: 1.0.1\n    image: ${released}\n    stage: stable`));
      // The image name points at a registry nobody can reach here: only the layout can answer.
      const again = await publish({ template: join(dir, 'template.yaml'), out, created: 1_700_000_000 });
      const v = again.versions.find((x) => x.version === '1.0.1')!;
      assert.equal(v.source, 'pinned');
      assert.equal(v.bundle, released);
      await run(join(toolBin('opm'), 'opm'), ['validate', join(out, 'catalog')]);
    });

    it('fails on a broken template with the place and the fix, and changes nothing', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'publish-bad-'));
      copyFileSync(join(REPO_ROOT, 'catalog/icon.svg'), join(dir, 'icon.svg'));
      writeFileSync(join(dir, 'template.yaml'), readFileSync(TEMPLATE, 'utf8').replace('    - version: 1.0.0\n      message:', '    - version: 0.9.0\n      message:'));
      const before = await tree(out);
      await assert.rejects(publish({ template: join(dir, 'template.yaml'), out, created: 1_700_000_000 }), (e: unknown) => {
        assert.ok(e instanceof OlmpubError);
        assert.equal(e.exitCode, 1);
        assert.match(JSON.stringify(e.toJSON()), /0\.9\.0/);
        assert.match(JSON.stringify(e.toJSON()), /template\.yaml:\d+/);
        return true;
      });
      const after = await tree(out);
      assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
      for (const [k, v] of before) assert.ok(v.equals(after.get(k)!), `${k} changed`);
    });
  });

  describe('into the real registry', () => {
    const ns = `publish-${randomBytes(3).toString('hex')}`;
    let out: string;
    let result: PublishResult;

    before(async () => {
      out = join(mkdtempSync(join(tmpdir(), 'publish-reg-')), 'out');
      result = await publish({ template: TEMPLATE, out, registry: `${testenv('REGISTRY')}/${ns}`, remote: { plainHttp: true }, created: 1_700_000_000 });
    });

    it('pushes a catalog image the real opm render reads back as the catalog written to disk', async () => {
      assert.ok(result.catalogImage.startsWith(`${testenv('REGISTRY')}/${ns}/inference-operator-catalog@sha256:`));
      const { stdout } = await run(join(toolBin('opm'), 'opm'), ['render', result.catalogImage, '--use-http', '-o', 'json'], { env: containersEnv(), maxBuffer: 64 << 20 });
      const rendered = loadFromFiles('opm', [{ path: 'render.json', text: stdout }]);
      assert.deepEqual(rendered.problems, []);
      assert.deepEqual(blobSet(rendered.config), blobSet((await loadCatalogDir(join(out, 'catalog'))).config));
    });

    it('pushes bundle images the real opm render reads as registry+v1 bundles', async () => {
      const v = result.versions.find((x) => x.version === '1.1.0')!;
      const { stdout } = await run(join(toolBin('opm'), 'opm'), ['render', v.bundle, '--use-http', '-o', 'json'], { env: containersEnv(), maxBuffer: 64 << 20 });
      const bundle = JSON.parse(stdout);
      assert.equal(bundle.name, 'inference-operator.v1.1.0');
      assert.ok(bundle.properties.some((p: any) => p.type === 'olm.gvk' && p.value.kind === 'InferenceService'));
    });

    it('pushes charts the real helm pulls byte-identical', async () => {
      const dest = mkdtempSync(join(tmpdir(), 'helm-pull-'));
      await run(join(toolBin('helm'), 'helm'), ['pull', `oci://${testenv('REGISTRY')}/${ns}/charts/inference-operator`, '--version', '1.2.0', '--plain-http', '-d', dest], { env: { ...process.env, HELM_CONFIG_HOME: dest, HELM_CACHE_HOME: dest } });
      assert.ok(readFileSync(join(dest, 'inference-operator-1.2.0.tgz')).equals(readFileSync(join(out, 'charts/inference-operator-1.2.0.tgz'))));
    });

    it('pushes an operator image the real crane reads with its non-root user and entrypoint', async () => {
      const { stdout } = await run(join(toolBin('crane'), 'crane'), ['config', '--insecure', result.operatorImage]);
      const config = JSON.parse(stdout);
      assert.equal(config.config.User, '65532:65532');
      assert.deepEqual(config.config.Cmd, ['operator', 'run']);
    });

    it('never moves the catalog tag when a later step fails', async () => {
      const crane = join(toolBin('crane'), 'crane');
      const latest = async () => (await run(crane, ['digest', '--insecure', `${testenv('REGISTRY')}/${ns}/inference-operator-catalog:latest`])).stdout.trim();
      const before = await latest();
      // A released version pinned to a bundle that does not exist: publish builds the others first, then fails.
      const dir = mkdtempSync(join(tmpdir(), 'publish-pin-'));
      copyFileSync(join(REPO_ROOT, 'catalog/icon.svg'), join(dir, 'icon.svg'));
      const missing = `${testenv('REGISTRY')}/${ns}/inference-operator-bundle@sha256:${'e'.repeat(64)}`;
      writeFileSync(join(dir, 'template.yaml'), readFileSync(TEMPLATE, 'utf8').replace('  - version: 1.2.0\n    stage: candidate', `  - version: 1.2.0\n    stage: candidate\n  - version: 1.3.0\n    image: ${missing}`));
      await assert.rejects(publish({ template: join(dir, 'template.yaml'), out, registry: `${testenv('REGISTRY')}/${ns}`, remote: { plainHttp: true }, created: 1_700_000_001 }), (e: unknown) => e instanceof OlmpubError && /1\.3\.0|eeee/.test(e.message + JSON.stringify(e.toJSON())));
      assert.equal(await latest(), before);
    });
  });
});
