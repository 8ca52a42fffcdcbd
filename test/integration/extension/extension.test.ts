/**
 * The extension manifests applied to the real kube-apiserver with the real operator-controller v1.11.0
 * CRDs (from the Go module cache): the ClusterCatalog and ClusterExtension pass the CRDs' CEL rules,
 * the 1.11 guardrails deny what they should on the real admission chain and leave other packages alone,
 * and the 1.10 installer RBAC applies.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { extensionManifests, writeExtensionDir } from '../../../catalog/extension/index.js';
import { testenv, toolBin, eventually, olmCrdDir } from '../../support/env.js';

const run = promisify(execFile);
const kubectl = (args: string[], input?: string) => {
  const p = run(join(toolBin('k8s'), 'kubectl'), ['--kubeconfig', testenv('KUBECONFIG'), ...args]);
  if (input !== undefined) p.child.stdin!.end(input);
  return p;
};
const DIGEST = 'sha256:' + 'b'.repeat(64);

describe('extension manifests on the real apiserver with the real OLM v1 CRDs', function () {
  this.timeout(180_000);
  const id = randomBytes(3).toString('hex');
  const pkg = `ext-${id}`;
  const created: string[] = [];

  before(async () => {
    const crds = olmCrdDir();
    await kubectl(['apply', '--server-side', '-f', join(crds, 'catalogd/crd/standard/olm.operatorframework.io_clustercatalogs.yaml'),
      '-f', join(crds, 'operator-controller/crd/standard/olm.operatorframework.io_clusterextensions.yaml')]);
    await kubectl(['wait', '--for=condition=Established', 'crd/clustercatalogs.olm.operatorframework.io', 'crd/clusterextensions.olm.operatorframework.io', '--timeout=60s']);
  });

  after(async () => {
    for (const dir of created.reverse()) await kubectl(['delete', '-k', dir, '--wait=false', '--ignore-not-found']).catch(() => undefined);
  });

  it('applies for OLM 1.11 and the guardrails deny an unsafe ClusterExtension of our package only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'olmpub-ext-'));
    const m = extensionManifests({ catalogImage: `${testenv('REGISTRY')}/olmpub/${pkg}-catalog@${DIGEST}`, packageName: pkg, channels: ['stable-v1'] });
    await writeExtensionDir(dir, m);
    await kubectl(['apply', '-k', dir]);
    created.push(dir);
    const ce = JSON.parse((await kubectl(['get', 'clusterextension', pkg, '-o', 'json'])).stdout);
    assert.equal(ce.spec.source.catalog.packageName, pkg);
    assert.equal(ce.spec.source.catalog.upgradeConstraintPolicy, 'CatalogProvided');

    const unsafe = (name: string, packageName: string) => JSON.stringify({
      apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', metadata: { name },
      spec: { namespace: `${pkg}-system`, source: { sourceType: 'Catalog', catalog: { packageName, upgradeConstraintPolicy: 'SelfCertified',
        selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': `${pkg}-catalog` } } } } },
    });
    // Policies take effect once the apiserver has loaded them: poll for the denial.
    const denial = await eventually('the guardrail to deny SelfCertified', async () => {
      try {
        await kubectl(['create', '--dry-run=server', '-f', '-'], unsafe(`${pkg}-selfcert`, pkg));
        return undefined;
      } catch (err) {
        return (err as { stderr: string }).stderr;
      }
    }, 60_000);
    assert.match(denial, /SelfCertified upgrades .* are not allowed/);
    // Another package is not ours to police.
    await kubectl(['create', '--dry-run=server', '-f', '-'], unsafe(`${pkg}-other`, `other-${id}`));

    const foreignCatalog = JSON.stringify({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog', metadata: { name: `${pkg}-catalog` },
      spec: { source: { type: 'Image', image: { ref: `evil.example.com/catalog@${DIGEST}` } } } });
    await assert.rejects(kubectl(['apply', '--dry-run=server', '-f', '-'], foreignCatalog), (e: any) => /may only serve images from/.test(e.stderr));
  });

  it('applies for OLM 1.10 with the installer ServiceAccount and its RBAC', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'olmpub-ext-'));
    const name = `${pkg}-old`;
    const m = extensionManifests({
      catalogImage: `${testenv('REGISTRY')}/olmpub/${pkg}-catalog:v1`, packageName: name, olmVersion: '1.10',
      bundleObjects: [
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op' }, spec: {} },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${name}-op` }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
      ],
    });
    await writeExtensionDir(dir, m);
    await kubectl(['apply', '-k', dir]);
    created.push(dir);
    const ce = JSON.parse((await kubectl(['get', 'clusterextension', name, '-o', 'json'])).stdout);
    const sa = ce.spec.serviceAccount.name;
    await kubectl(['get', 'serviceaccount', sa, '-n', `${name}-system`]);
    const can = (verb: string, resource: string) =>
      kubectl(['auth', 'can-i', verb, resource, '-n', `${name}-system`, `--as=system:serviceaccount:${name}-system:${sa}`]).then(() => true, () => false);
    assert.equal(await eventually('the installer RBAC to apply', () => can('create', 'deployments'), 30_000), true);
    assert.equal(await can('create', 'secrets'), false, 'nothing beyond what the bundle needs');
  });
});
