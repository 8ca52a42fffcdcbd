/**
 * The catalog image: reproducible, and what the real `opm render` reads back from the real registry is
 * the catalog we put in.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { loadCatalogDir, loadFromFiles } from '../../../catalog/index.js';
import { buildCatalogImage, CONFIGS_LABEL } from '../../../catalog/image/index.js';
import { OciLayoutStore, RegistryClient } from '../../../bundle/oci/index.js';
import { REPO_ROOT, containersEnv, testenv, toolBin } from '../../support/env.js';
import { blobSet } from '../../support/fbc.js';

const run = promisify(execFile);
const FIXTURE = join(REPO_ROOT, 'test/fixtures/catalogs/valid/two-channels-json');

describe('catalog image', function () {
  this.timeout(120_000);

  it('is reproducible: the same catalog gives the same digest', async () => {
    const { config } = await loadCatalogDir(FIXTURE);
    const a = await buildCatalogImage(config, { store: new OciLayoutStore(mkdtempSync(join(tmpdir(), 'cat-a-'))), tag: 'v1' });
    const b = await buildCatalogImage(config, { store: new OciLayoutStore(mkdtempSync(join(tmpdir(), 'cat-b-'))), tag: 'v1' });
    assert.equal(a.root.digest, b.root.digest);
    assert.equal(a.config.json.config?.Labels?.[CONFIGS_LABEL], '/configs');
    assert.equal(a.layers.length, 1);
  });

  it('is read back by the real opm render from the real registry', async () => {
    const { config } = await loadCatalogDir(FIXTURE);
    const repo = `olmpub/catalog-image-${randomBytes(3).toString('hex')}`;
    const client = new RegistryClient(testenv('REGISTRY'), { plainHttp: true });
    try {
      await buildCatalogImage(config, { store: client.repository(repo), tag: 'v1' });
    } finally {
      client.close();
    }
    const { stdout } = await run(join(toolBin('opm'), 'opm'), ['render', `${testenv('REGISTRY')}/${repo}:v1`, '--use-http', '-o', 'json'], { maxBuffer: 64 << 20, env: containersEnv() });
    const rendered = loadFromFiles('opm-render', [{ path: 'render.json', text: stdout }]);
    assert.deepEqual(rendered.problems, []);
    assert.deepEqual(blobSet(rendered.config), blobSet(config));
  });
});
