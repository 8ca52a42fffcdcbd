/**
 * The product's claim, end to end through real OLM v1 (scripts/testenv olm: catalogd and
 * operator-controller v1.11.0, KWOK nodes, a real registry): `olmpub publish` pushes the operator image,
 * every version's registry+v1 bundle and the catalog image to a registry namespace of its own; the
 * extension folder it writes is applied as a platform team would (`kubectl apply -k`); OLM v1 installs
 * the highest non-deprecated version of stable-v1, and each time the ClusterExtension moves to another
 * channel it installs exactly the version olmpub's resolver predicted. A downgrade is refused by OLM
 * (CatalogProvided), SelfCertified is denied by our guardrail policy, and deleting the ClusterExtension
 * uninstalls the operator.
 *
 * The package, its CRD and the guardrail policies are cluster singletons (one inference-operator per
 * cluster), so this suite refuses to start while another ClusterExtension of the package exists. The
 * images go to a registry namespace unique to the run, and every object the run created is removed
 * afterwards, whatever happened.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import YAML from 'yaml';
import { publish, type PublishResult } from '../../catalog/publish.js';
import { loadCatalogDir, type DeclarativeConfig } from '../../catalog/index.js';
import { resolveUpgrade } from '../../catalog/resolve/resolve.js';
import { CRD_NAME } from '../../operator/api/meta.js';
import { KubeClient } from '../../operator/runtime/kube/client.js';
import { isNotFound } from '../../operator/runtime/kube/errors.js';
import type { KubeObject } from '../../operator/runtime/kube/types.js';
import { REPO_ROOT, eventually, testenv, toolBin } from '../support/env.js';

const run = promisify(execFile);
const kubectl = (args: string[]) => run(join(toolBin('k8s'), 'kubectl'), ['--kubeconfig', testenv('KUBECONFIG'), ...args], { maxBuffer: 16 << 20 });

const CE = { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension' } as const;
const CATALOG = { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog' } as const;
const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as const;
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
const CERTIFICATE = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate' } as const;
const ISVC = { apiVersion: 'inference.olmpub.dev/v1', kind: 'InferenceService' } as const;
const OWNER_NAME = 'olm.operatorframework.io/owner-name';
const VERSION_LABEL = 'app.kubernetes.io/version';

interface Condition { type: string; status: string; reason: string; message: string; observedGeneration?: number }
type Obj = KubeObject & { spec?: any; status?: any };
interface ClusterExtension extends Obj {
  spec: { namespace: string; source: { catalog: { packageName: string; channels?: string[]; version?: string; upgradeConstraintPolicy?: string } } };
  status?: { conditions?: Condition[]; install?: { bundle: { name: string; version: string } } };
}

const condition = (o: Obj | undefined, type: string): Condition | undefined => (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('OLM v1 installs and upgrades the published operator (real catalogd and operator-controller)', function () {
  this.timeout(300_000);
  const id = randomBytes(3).toString('hex');
  const registryNamespace = `olmpub-e2e-olm-${id}`;
  const timings: string[] = [];
  let kube: KubeClient;
  let out: string;
  let result: PublishResult | undefined;
  let catalog: DeclarativeConfig;
  let applied = false;
  let failed: string | undefined;
  // From the written extension folder and bundles, not hard-coded: what a platform team applies.
  let ce: ClusterExtension;
  let catalogName: string;
  let namespace: string;
  let deploymentName: string;
  let selfCertifiedMessage: string;
  let extensionPolicy: string;

  const getCE = () => kube.tryGet<ClusterExtension>(CE, ce.metadata!.name!);
  const patchCatalogSource = (catalogSpec: Record<string, unknown>, dryRun = false) =>
    kube.patch<ClusterExtension>(CE, ce.metadata!.name!, undefined, { spec: { source: { catalog: catalogSpec } } }, 'merge', { dryRun });
  const bundleOf = (version: string) => result!.versions.find((v) => v.version === version)!.bundle;

  /** Installed=True and Progressing=True/Succeeded for the current generation, with `bundle` installed. */
  const installed = (bundle: string) =>
    eventually(`the ClusterExtension to have installed ${bundle}`, async () => {
      const x = await getCE();
      const inst = condition(x, 'Installed');
      const prog = condition(x, 'Progressing');
      const current = prog?.observedGeneration === x?.metadata?.generation;
      return current && inst?.status === 'True' && prog?.status === 'True' && prog.reason === 'Succeeded' && x?.status?.install?.bundle.name === bundle ? x : undefined;
    }, 180_000, 250);

  /** The operator's Deployment runs `version`'s pod template on every replica, all available, no old pods left. */
  const rolledOut = (version: string) =>
    eventually(`the operator Deployment to roll out ${version}`, async () => {
      const d = await kube.tryGet<Obj>(DEPLOYMENT, deploymentName, namespace);
      if (!d) return undefined;
      const want = d.spec.replicas ?? 1;
      const s = d.status ?? {};
      const available = condition(d, 'Available')?.status === 'True';
      return d.spec.template.metadata.labels?.[VERSION_LABEL] === version && s.observedGeneration >= d.metadata!.generation! &&
        s.updatedReplicas === want && s.availableReplicas === want && s.replicas === want && available ? d : undefined;
    }, 180_000, 250);

  before(async function () {
    this.timeout(180_000);
    const kc = new KubeConfig();
    kc.loadFromFile(testenv('KUBECONFIG'));
    kube = new KubeClient({ kubeConfig: kc, userAgent: 'olmpub-e2e-olm-upgrade' });
    testenv('OPERATOR_CONTROLLER'); // fails loudly when `scripts/testenv olm` has not run
    testenv('CERT_MANAGER_CRDS');
    out = await mkdtemp(join(tmpdir(), 'olmpub-e2e-olm-'));

    // One inference-operator per cluster: never take over an install that is not ours.
    const others = (await kube.list<ClusterExtension>(CE)).items.filter((x) => x.spec.source.catalog?.packageName === 'inference-operator');
    if (others.length) {
      throw new Error(`ClusterExtension ${others.map((x) => x.metadata!.name).join(', ')} already installs inference-operator (another run, or one that was killed): ` +
        'delete it first (kubectl delete clusterextension NAME)');
    }
    // The CRD is cluster-scoped and other tiers install it without OLM (the Helm chart's crds/, the
    // operator tests): OLM refuses to adopt it ("already exists ... cannot be managed by
    // operator-controller"). A leftover nobody owns and no InferenceService uses is removed; those of
    // namespaces that earlier tests are still deleting get a moment to go.
    const crd = await kube.tryGet<Obj>(CRD, CRD_NAME);
    if (crd) {
      let left: Obj[] = [];
      await eventually(`no InferenceService to use the leftover ${CRD_NAME} CRD`, async () => {
        left = (await kube.list<Obj>(ISVC, {}).catch((err) => (isNotFound(err) ? { items: [] } : Promise.reject(err)))).items;
        return left.length === 0;
      }, 90_000, 1000).catch(() => {
        throw new Error(`the ${CRD_NAME} CRD exists (installed outside OLM, which cannot install over it) and InferenceServices use it: ` +
          `${left.slice(0, 5).map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`).join(', ')}; delete them and the CRD first`);
      });
      await kube.delete(CRD, CRD_NAME, undefined, { ignoreNotFound: true });
      await eventually(`the leftover ${CRD_NAME} CRD to be gone`, async () => !(await kube.tryGet(CRD, CRD_NAME)), 60_000);
      timings.push(`removed a leftover ${CRD_NAME} CRD nobody used (installed outside OLM)`);
    }
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed ??= this.currentTest.title;
  });
  // Each step starts from the state the previous one left: after a failure the rest fail at once
  // (never skipped, so CI cannot go green), naming the step that broke the chain.
  const step = () => {
    if (failed) throw new Error(`not run: the earlier step "${failed}" failed`);
  };

  after(async function () {
    this.timeout(300_000);
    const problems: string[] = [];
    const attempt = async (what: string, f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        problems.push(`${what}: ${(err as Error).message}`);
      }
    };
    if (kube) {
      if (applied) {
        // The ClusterExtension first: what it installed (Deployment, RBAC, CRD) is owned by it and garbage-collected.
        await attempt('deleting the ClusterExtension', async () => {
          await kube.delete(CE, ce.metadata!.name!, undefined, { ignoreNotFound: true });
          await eventually('the ClusterExtension to be gone', async () => !(await getCE()), 120_000, 500);
        });
        await attempt('deleting the extension folder', () => kubectl(['delete', '-k', join(out, 'extension'), '--ignore-not-found', '--wait=true', '--timeout=120s']));
      }
      // The CRD the install created, if operator-controller did not remove it (only ever ours: labelled by OLM for our extension).
      await attempt('deleting the CRD', async () => {
        const crd = await kube.tryGet<Obj>(CRD, CRD_NAME);
        if (crd && ce && crd.metadata?.labels?.[OWNER_NAME] === ce.metadata!.name) await kube.delete(CRD, CRD_NAME, undefined, { ignoreNotFound: true });
      });
      await kube.close();
    }
    if (out) await rm(out, { recursive: true, force: true });
    if (timings.length) console.log(`      timings (${registryNamespace}):\n${timings.map((t) => `        ${t}`).join('\n')}`);
    assert.deepEqual(problems, [], 'clean-up');
  });

  it('publishes every version, its bundle and the catalog to the registry', async function () {
    this.timeout(900_000);
    const t0 = Date.now();
    result = await publish({ template: join(REPO_ROOT, 'catalog/template.yaml'), registry: `${testenv('REGISTRY')}/${registryNamespace}`, remote: { plainHttp: true }, out });
    timings.push(`olmpub publish: ${seconds(Date.now() - t0)}`);
    assert.deepEqual(result.versions.map((v) => v.version), ['1.0.0', '1.0.1', '1.1.0', '1.2.0']);
    assert.ok(result.catalogImage.startsWith(`${testenv('REGISTRY')}/${registryNamespace}/inference-operator-catalog@sha256:`), result.catalogImage);
    for (const v of result.versions) assert.ok(v.bundle.startsWith(`${testenv('REGISTRY')}/${registryNamespace}/inference-operator-bundle@sha256:`), v.bundle);
    catalog = (await loadCatalogDir(result.files.catalog)).config;

    const objects = async (file: string) => YAML.parseAllDocuments(await readFile(join(result!.files.extension, file), 'utf8')).map((d) => d.toJSON() as Obj).filter(Boolean);
    ce = (await objects('clusterextension.yaml')).find((o) => o.kind === 'ClusterExtension') as ClusterExtension;
    const clusterCatalog = (await objects('clustercatalog.yaml')).find((o) => o.kind === 'ClusterCatalog')!;
    assert.equal(clusterCatalog.spec.source.image.ref, result.catalogImage, 'the ClusterCatalog is pinned to the catalog image just pushed');
    assert.deepEqual(ce.spec.source.catalog.channels, ['stable-v1']);
    catalogName = clusterCatalog.metadata!.name!;
    namespace = ce.spec.namespace;
    const policy = (await objects('guardrails.yaml')).find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.spec.matchConstraints.resourceRules[0].resources.includes('clusterextensions'))!;
    extensionPolicy = policy.metadata!.name!;
    selfCertifiedMessage = (policy.spec.validations as { expression: string; message: string }[]).find((v) => v.expression.includes('SelfCertified'))!.message;
    const manifests = join(result.files.bundles, '1.0.1', 'manifests');
    const csvFile = (await readdir(manifests)).find((f) => f.endsWith('.clusterserviceversion.yaml'))!;
    deploymentName = YAML.parse(await readFile(join(manifests, csvFile), 'utf8')).spec.install.spec.deployments[0].name;
  });

  it('the applied extension folder makes catalogd serve the catalog image pinned by digest', async function () {
    step();
    applied = true; // from here on, clean up even after a partial apply
    await kubectl(['apply', '-k', result!.files.extension]);
    const t0 = Date.now();
    const served = await eventually('the ClusterCatalog to be Serving', async () => {
      const c = await kube.tryGet<Obj>(CATALOG, catalogName);
      return condition(c, 'Serving')?.status === 'True' ? c : undefined;
    }, 180_000, 250);
    timings.push(`ClusterCatalog Serving: ${seconds(Date.now() - t0)}`);
    assert.equal(served.status.resolvedSource.image.ref, result!.catalogImage);
  });

  it('installs the highest non-deprecated version of stable-v1 (1.0.1), as olmpub resolves it', async function () {
    step();
    const predicted = resolveUpgrade(catalog, { packageName: 'inference-operator', channels: ['stable-v1'] });
    assert.equal(predicted.selected?.bundle, 'inference-operator.v1.0.1', 'olmpub skips the deprecated 1.0.0');
    assert.ok(predicted.candidates.some((c) => c.bundle === 'inference-operator.v1.0.0' && c.deprecated), '1.0.0 is a deprecated candidate');

    const t0 = Date.now();
    const x = await installed(predicted.selected!.bundle);
    timings.push(`install of ${predicted.selected!.version}: ${seconds(Date.now() - t0)} to Installed`);
    assert.equal(x.status!.install!.bundle.version, '1.0.1');
    assert.match(condition(x, 'Installed')!.message, new RegExp(`Installed bundle ${bundleOf('1.0.1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} successfully`));
    assert.equal(condition(x, 'BundleDeprecated')?.status, 'False');

    await rolledOut('1.0.1');
    timings.push(`install of 1.0.1: ${seconds(Date.now() - t0)} to the Deployment Available`);
    const crd = await kube.get<Obj>(CRD, CRD_NAME);
    assert.equal(condition(crd, 'Established')?.status, 'True');
    assert.equal(crd.metadata?.labels?.[OWNER_NAME], ce.metadata!.name, 'the CRD is managed by our ClusterExtension');
    assert.ok(crd.metadata?.ownerReferences?.some((r) => r.kind === 'ClusterExtension' && r.name === ce.metadata!.name && r.controller), 'the CRD is owned by our ClusterExtension');
    assert.deepEqual(crd.spec.versions.map((v: { name: string; storage: boolean }) => `${v.name}${v.storage ? '*' : ''}`).sort(), ['v1*', 'v1alpha1']);
    // The webhooks go through OLM's cert-manager provider: a Certificate and a CRD conversion webhook
    // with CA injection (no cert-manager runs here; see scripts/testenv cert_manager_crds).
    assert.equal(crd.spec.conversion.strategy, 'Webhook');
    assert.ok(crd.metadata?.annotations?.['cert-manager.io/inject-ca-from'], 'CA injection requested on the CRD');
    assert.ok((await kube.list(CERTIFICATE, { namespace })).items.length > 0, 'OLM rendered a cert-manager Certificate');
  });

  for (const [from, channel, to] of [['1.0.1', 'fast-v1', '1.1.0'], ['1.1.0', 'candidate-v1', '1.2.0']] as const) {
    it(`upgrades ${from} → ${to} when the ClusterExtension follows ${channel}, as olmpub resolves it`, async function () {
      step();
      const before = await getCE();
      assert.equal(before?.status?.install?.bundle.version, from);
      const predicted = resolveUpgrade(catalog, { packageName: 'inference-operator', installed: before!.status!.install!.bundle.name, channels: [channel] });
      assert.equal(predicted.selected?.version, to, `olmpub's resolver: ${JSON.stringify(predicted.selected ?? predicted.error)}`);
      assert.equal(predicted.selected!.direction, 'upgrade');

      const t0 = Date.now();
      await patchCatalogSource({ channels: [channel] });
      const x = await installed(predicted.selected!.bundle);
      timings.push(`upgrade ${from} → ${to} (${channel}): ${seconds(Date.now() - t0)} to Installed`);
      assert.equal(x.status!.install!.bundle.version, to);
      assert.ok(condition(x, 'Installed')!.message.includes(bundleOf(to)), condition(x, 'Installed')!.message);
      await rolledOut(to);
      timings.push(`upgrade ${from} → ${to} (${channel}): ${seconds(Date.now() - t0)} to the Deployment rolled out`);
    });
  }

  it('refuses a downgrade to 1.0.1 (CatalogProvided) and stays on 1.2.0', async function () {
    step();
    const predicted = resolveUpgrade(catalog, { packageName: 'inference-operator', installed: '1.2.0', channels: ['candidate-v1'], versionRange: '1.0.1' });
    assert.equal(predicted.selected, undefined);
    assert.ok(predicted.rejected.some((r) => r.version === '1.0.1' && /downgrade needs upgradeConstraintPolicy: SelfCertified/.test(r.reason)));

    const t0 = Date.now();
    const patched = await patchCatalogSource({ version: '1.0.1' });
    const x = await eventually('operator-controller to refuse the downgrade', async () => {
      const c = await getCE();
      const prog = condition(c, 'Progressing');
      return prog && prog.observedGeneration === patched.metadata!.generation && prog.reason === 'Retrying' ? c : undefined;
    }, 120_000, 250);
    timings.push(`downgrade refused: ${seconds(Date.now() - t0)}`);
    const prog = condition(x, 'Progressing')!;
    assert.equal(prog.status, 'True');
    assert.match(prog.message, /no bundles found for package "inference-operator" matching version "1\.0\.1"/);
    assert.ok(prog.message.includes(predicted.error!), `OLM says what olmpub predicted:\n  OLM:    ${prog.message}\n  olmpub: ${predicted.error}`);
    assert.equal(condition(x, 'Installed')?.status, 'True');
    assert.equal(x.status!.install!.bundle.name, 'inference-operator.v1.2.0');
    await rolledOut('1.2.0');
  });

  it('the guardrail policy denies SelfCertified (the way to force that downgrade)', async function () {
    step();
    const denial = (err: unknown) => (err as Error).message.includes(`ValidatingAdmissionPolicy '${extensionPolicy}'`) && (err as Error).message.includes(selfCertifiedMessage);
    // Policies take effect once the apiserver has loaded them: dry runs until the denial shows (never
    // a real write that could slip through and downgrade).
    await eventually('the guardrail to deny SelfCertified', async () => {
      try {
        await patchCatalogSource({ upgradeConstraintPolicy: 'SelfCertified' }, true);
        return false;
      } catch (err) {
        if (denial(err)) return true;
        throw err;
      }
    }, 60_000, 500);
    await assert.rejects(patchCatalogSource({ upgradeConstraintPolicy: 'SelfCertified' }), denial);
    const x = await getCE();
    assert.equal(x?.spec.source.catalog.upgradeConstraintPolicy, 'CatalogProvided');

    // Back to following candidate-v1 without a version: 1.2.0 is current again.
    await patchCatalogSource({ version: null });
    await installed('inference-operator.v1.2.0');
  });

  it('deleting the ClusterExtension uninstalls the operator', async function () {
    step();
    const t0 = Date.now();
    await kube.delete(CE, ce.metadata!.name!);
    await eventually('the operator Deployment to be removed', async () => !(await kube.tryGet(DEPLOYMENT, deploymentName, namespace)), 120_000, 250);
    timings.push(`uninstall: ${seconds(Date.now() - t0)} to the Deployment removed`);
    await eventually('the ClusterExtension to be gone', async () => !(await getCE()), 120_000, 250);
    // The release's objects carry a controller ownerReference to the ClusterExtension (operator-controller's
    // own finalizers only clear its caches), so the garbage collector removes them: the CRD too, and with
    // it every InferenceService in the cluster.
    await eventually(`the ${CRD_NAME} CRD to be removed`, async () => !(await kube.tryGet(CRD, CRD_NAME)), 120_000, 250);
    timings.push(`uninstall: ${seconds(Date.now() - t0)} to the CRD removed`);
  });
});
