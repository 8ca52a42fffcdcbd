/**
 * The real catalogd v1.11.0 (scripts/testenv olm) pulls olmpub's catalog image from the real registry by
 * digest and serves exactly the catalog we built.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { loadCatalogDir, loadFromFiles } from '../../catalog/index.js';
import { buildCatalogImage } from '../../catalog/image/index.js';
import { extensionManifests } from '../../catalog/extension/index.js';
import { RegistryClient } from '../../bundle/oci/index.js';
import { REPO_ROOT, eventually, testenv, toolBin } from '../support/env.js';
import { blobSet } from '../support/fbc.js';

const run = promisify(execFile);
const kubectl = (args: string[], input?: string) => {
  const p = run(join(toolBin('k8s'), 'kubectl'), ['--kubeconfig', testenv('KUBECONFIG'), ...args], { maxBuffer: 16 << 20 });
  if (input !== undefined) p.child.stdin!.end(input);
  return p;
};

function get(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

describe('catalogd serves the olmpub catalog image (real OLM v1)', function () {
  this.timeout(240_000);
  const name = `olmpub-e2e-${randomBytes(3).toString('hex')}`;

  after(() => kubectl(['delete', 'clustercatalog', name, '--ignore-not-found']).catch(() => undefined));

  it('unpacks the image pinned by digest and serves the same FBC', async () => {
    const { config } = await loadCatalogDir(join(REPO_ROOT, 'test/fixtures/catalogs/valid/two-channels-json'));
    const client = new RegistryClient(testenv('REGISTRY'), { plainHttp: true });
    let digest: string;
    try {
      digest = (await buildCatalogImage(config, { store: client.repository(`olmpub/${name}`), tag: 'latest' })).root.digest;
    } finally {
      client.close();
    }
    const ref = `${testenv('REGISTRY')}/olmpub/${name}@${digest}`;
    const catalog = extensionManifests({ catalogImage: ref, catalogName: name }).files.flatMap((f) => f.objects).find((o) => o.kind === 'ClusterCatalog')!;
    await kubectl(['apply', '-f', '-'], JSON.stringify(catalog));

    const status = await eventually('the ClusterCatalog to be Serving', async () => {
      const c = JSON.parse((await kubectl(['get', 'clustercatalog', name, '-o', 'json'])).stdout);
      const serving = c.status?.conditions?.find((x: any) => x.type === 'Serving');
      return serving?.status === 'True' ? c.status : undefined;
    }, 180_000);
    assert.equal(status.resolvedSource.image.ref, ref);

    const served = await get(`${status.urls.base}/api/v1/all`, readFileSync(testenv('CATALOGD_CA')));
    assert.equal(served.status, 200);
    const loaded = loadFromFiles('catalogd', [{ path: 'all.jsonl', text: served.body }]);
    assert.deepEqual(loaded.problems, []);
    assert.deepEqual(blobSet(loaded.config), blobSet(config));
  });
});
