/**
 * `olmpub publish`: the whole chain from this checkout to something an OLM v1 cluster can install.
 *
 *   operator image → per version: Helm chart + registry+v1 bundle (+ their images) → FBC from the
 *   catalog template → catalog image → ClusterCatalog/ClusterExtension manifests → upgrade graph
 *
 * Everything is validated before the catalog is written or its tag moved: the operator's RBAC (least
 * privilege), CRD upgrade safety between consecutive versions, every OLM v1 bundle limit, and the catalog
 * with every `opm validate` rule plus reachability. Images go to one store: the on-disk OCI layout
 * `<out>/oci` by default (no registry needed), or a registry namespace. Files under `<out>` are staged
 * and moved into place only when everything succeeded; in a store, blobs come before manifests and
 * the catalog's tag is written last, so a failed run never moves what users pull.
 */
import { mkdtemp, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, dirname } from 'node:path';
import YAML from 'yaml';
import { canonicalJSON } from '../lib/canonical.js';
import { usageError, validationError, OlmpubError } from '../lib/errors.js';
import { replaceDirAtomic, writeFileAtomic } from '../lib/fsx.js';
import { buildOperatorImage } from '../bundle/operator-image/index.js';
import { renderReleaseArtifacts, pushReleaseArtifacts, releaseTags, type ReleaseArtifacts } from '../bundle/release.js';
import { operatorRbacObjects } from '../bundle/manifests/index.js';
import { lintRules } from '../bundle/rbac/index.js';
import { diffCRDSets, formatFinding, type CRD } from '../bundle/crddiff/index.js';
import { OciLayoutStore, RegistryClient, openStore, type Store, type RemoteOptions } from '../bundle/oci/index.js';
import { unpackImage } from '../bundle/image/index.js';
import { sourceDateEpoch } from '../bundle/image/tar.js';
import { readTemplateFile, readTemplateIcon } from './io.js';
import { renderTemplate, type ChannelPlan } from './template/render.js';
import { bundleInfoFromFiles, type BundleInfo } from './template/bundleinfo.js';
import { validateCatalog } from './validate/validate.js';
import { renderCatalogFiles } from './fbc/write.js';
import { buildCatalogImage } from './image/catalog-image.js';
import { extensionManifests, needsServiceAccount } from './extension/manifests.js';
import { renderMermaid } from './graph/mermaid.js';
import { buildGraph, renderHtml, renderSvg } from './graph/svg.js';
import * as blang from './semver/blang.js';

export interface PublishOptions {
  /** The catalog template. @default 'catalog/template.yaml' */
  template?: string;
  /** Output folder for files (bundles, charts, catalog, extension, graph) and, without `registry`, the OCI layout `<out>/oci`. @default 'out' */
  out?: string;
  /** `HOST[:PORT]/NAMESPACE`: push the images there instead of the OCI layout. @default none */
  registry?: string;
  /** How the registry is reached (plainHttp, credentials). @default HTTPS with docker config.json credentials */
  remote?: RemoteOptions;
  /** Repository prefix written into the CSV, chart and catalog when publishing to the layout. @default 'ghcr.io/olmpub' */
  imagePrefix?: string;
  /** OLM v1 version the extension manifests target. @default '1.11' */
  olmVersion?: string;
  /** Seconds since the epoch for every timestamp. @default SOURCE_DATE_EPOCH, else 0 */
  created?: number;
  /** The checkout's version; versions built from source must include it. @default package.json's */
  checkoutVersion?: string;
  /** Progress, one line per step. @default none */
  onStep?: (message: string) => void;
}

export interface PublishedVersion {
  version: string;
  bundle: string;
  /** Built from this checkout, or a released bundle pinned in the template. */
  source: 'built' | 'pinned';
  channels: string[];
  chart?: string;
  deprecated?: string;
}

export interface PublishResult {
  package: string;
  store: string;
  operatorImage: string;
  versions: PublishedVersion[];
  catalogImage: string;
  defaultChannel: string;
  channels: { name: string; head: string; versions: string[]; deprecated?: string }[];
  files: { catalog: string; bundles: string; charts: string; extension: string; graph: string; summary: string };
  checks: { rbac: string; crdUpgrades: string[]; catalog: string; warnings: string[] };
  mermaid: string;
}

const PUBLISH_MARKER = '.olmpub-publish.json';

interface Target {
  describe: string;
  /** Store and the repository name written into references, per artifact kind. */
  operator: { store: Store; name: string };
  bundle: { store: Store; name: string };
  chart: { store: Store; name: string };
  catalog: { store: Store; name: string };
  layout: boolean;
  close(): void;
}

function openTarget(o: Required<Pick<PublishOptions, 'out' | 'imagePrefix'>> & PublishOptions, pkg: string): Target {
  if (!o.registry) {
    const store = new OciLayoutStore(join(o.out, 'oci'));
    const name = (suffix: string) => `${o.imagePrefix}/${pkg}${suffix}`;
    return {
      describe: `oci:${join(o.out, 'oci')}`,
      operator: { store, name: name('') },
      bundle: { store, name: name('-bundle') },
      chart: { store, name: `${o.imagePrefix}/charts/${pkg}` },
      catalog: { store, name: name('-catalog') },
      layout: true,
      close: () => undefined,
    };
  }
  const slash = o.registry.indexOf('/');
  if (slash <= 0 || slash === o.registry.length - 1) {
    throw usageError('bad-registry', `--registry "${o.registry}" is not HOST/NAMESPACE`, { hint: 'for example --registry quay.io/acme or --registry 127.0.0.1:5000/olmpub' });
  }
  const host = o.registry.slice(0, slash);
  const ns = o.registry.slice(slash + 1).replace(/\/+$/, '');
  const client = new RegistryClient(host, o.remote ?? {});
  const repo = (path: string) => ({ store: client.repository(`${ns}/${path}`), name: `${host}/${ns}/${path}` });
  return {
    describe: `${host}/${ns}`,
    operator: repo(pkg),
    bundle: repo(`${pkg}-bundle`),
    chart: repo(`charts/${pkg}`),
    catalog: repo(`${pkg}-catalog`),
    layout: false,
    close: () => client.close(),
  };
}

/** `<out>` is replaced piecewise, so refuse a folder that holds something olmpub did not write. */
async function checkOut(out: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(out);
  } catch {
    return;
  }
  const ours = new Set(['oci', 'bundles', 'charts', 'catalog', 'extension', 'graph.html', 'graph.svg', 'graph.mmd', PUBLISH_MARKER]);
  const foreign = entries.filter((e) => !ours.has(e) && !e.startsWith('.'));
  if (foreign.length) {
    throw usageError('publish-out-not-ours', `${out} holds files publish did not write: ${foreign.slice(0, 5).join(', ')}`, {
      hint: 'pick another --out, or move those files away (publish replaces bundles/, charts/, catalog/, extension/ and graph.* and adds images to oci/)',
    });
  }
}

const crdsOf = (files: readonly { path: string; content: string | Uint8Array }[]): CRD[] =>
  files
    .filter((f) => f.path.startsWith('manifests/'))
    .flatMap((f) => YAML.parseAllDocuments(typeof f.content === 'string' ? f.content : Buffer.from(f.content).toString('utf8')).map((d) => d.toJSON() as Record<string, unknown>))
    .filter((o) => o?.kind === 'CustomResourceDefinition') as unknown as CRD[];

async function readTree(root: string): Promise<{ path: string; content: Buffer }[]> {
  const out: { path: string; content: Buffer }[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) out.push({ path: relative(root, full).split('\\').join('/'), content: await readFile(full) });
    }
  };
  await walk(root);
  return out;
}

/** A released bundle pinned in the template: read from the target store when it has it, else from its own registry. */
async function fetchPinnedBundle(image: string, target: Target, remote: RemoteOptions, work: string): Promise<{ path: string; content: Buffer }[]> {
  const digest = image.slice(image.indexOf('@') + 1);
  const dir = await mkdtemp(join(work, 'pinned-'));
  const local = target.bundle.store;
  if (await local.resolve(digest).then(() => true, () => false)) {
    await unpackImage(local, digest, dir);
  } else {
    const opened = openStore(image, remote);
    try {
      await unpackImage(opened.store, digest, dir);
    } catch (err) {
      if (err instanceof OlmpubError) throw err;
      throw new OlmpubError('pinned-bundle-unavailable', 'environment', `cannot read the released bundle ${image}: ${(err as Error).message}`, {
        hint: 'check that the registry is reachable and you are logged in (docker config.json), or copy the image into the target first (olmpub image copy)',
      });
    } finally {
      opened.close();
    }
  }
  return readTree(dir);
}

export async function publish(options: PublishOptions = {}): Promise<PublishResult> {
  const o = { template: 'catalog/template.yaml', out: 'out', imagePrefix: 'ghcr.io/olmpub', olmVersion: '1.11', ...options };
  const created = o.created ?? sourceDateEpoch();
  const step = o.onStep ?? (() => undefined);
  const warnings: string[] = [];

  const { template } = await readTemplateFile(o.template);
  const pkg = template.package.name;
  const iconBase64 = await readTemplateIcon(template);
  await checkOut(o.out);
  // The graph alone (versions and stages) fixes channels, edges and skipRanges: plan before building.
  const plan = renderTemplate(template, { allowMissingBundles: true, ...(iconBase64 ? { iconBase64 } : {}) });
  const channelsOf = (version: string) => plan.channels.filter((c) => c.entries.some((e) => e.version === version)).map((c) => c.name);
  const skipRangeOf = (version: string) => plan.channels.flatMap((c) => c.entries).find((e) => e.version === version && e.skipRange)?.skipRange ?? null;
  const toBuild = template.versions.filter((v) => !v.image);
  const checkout = o.checkoutVersion ?? JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version;
  if (toBuild.length && !toBuild.some((v) => v.version === checkout)) {
    throw usageError('publish-checkout-not-in-template', `this checkout is version ${checkout}, but the template builds ${toBuild.map((v) => v.version).join(', ')} and not ${checkout}`, {
      place: o.template,
      hint: `add "- version: ${checkout}" to versions (stage: candidate), or pin the released images of the others`,
    });
  }

  const target = openTarget(o, pkg);
  const work = await mkdtemp(join(tmpdir(), 'olmpub-publish-'));
  try {
    // 1. Least privilege of the operator's own RBAC, from the model every packaging is a view of.
    const rbacObjects = operatorRbacObjects();
    const findings = lintRules(rbacObjects.map((object) => ({ object, place: `model ${object.kind}/${(object.metadata as { name?: string })?.name}` })));
    if (findings.length) {
      throw validationError('publish-rbac', `the operator's RBAC is not least-privilege (${findings.length} finding(s))`, {
        children: findings.map((f) => validationError(f.code, f.message, { place: f.place, hint: f.hint })),
        hint: 'narrow the requires(...) declarations in operator/ (run olmpub rbac check for details)',
      });
    }
    const rbacSummary = `${rbacObjects.length} RBAC objects, no wildcards, no escalate/bind/impersonate, no cluster-wide secrets`;

    // 2. The operator image, once, from this checkout.
    let operatorImage = '';
    if (toBuild.length) {
      step(`building the operator image ${checkout} (node runtime, dependencies, app)`);
      const tags = releaseTags(checkout);
      const built = await buildOperatorImage({ store: target.operator.store, tag: target.layout ? tags.operator : `v${checkout.replace(/\+/g, '_')}`, created, expectVersion: checkout });
      operatorImage = `${target.operator.name}@${built.digest}`;
      const older = toBuild.filter((v) => v.version !== checkout).map((v) => v.version);
      if (older.length) warnings.push(`${older.join(', ')}: no released bundle pinned in the template, so built from this checkout (operator image ${checkout})`);
    }

    // 3. Per version: chart + bundle built from the model, or the pinned released bundle.
    const infos: BundleInfo[] = [];
    const bundleFiles = new Map<string, { path: string; content: string | Uint8Array }[]>();
    const built = new Map<string, ReleaseArtifacts>();
    const versions: PublishedVersion[] = [];
    const sorted = [...template.versions].sort((a, b) => blang.compare(blang.parse(a.version), blang.parse(b.version)));
    for (const v of sorted) {
      const channels = channelsOf(v.version);
      const deprecated = template.deprecations.bundles.find((d) => d.version === v.version)?.message;
      if (v.image) {
        step(`reading the released bundle ${v.version} (${v.image})`);
        const files = await fetchPinnedBundle(v.image, target, o.remote ?? {}, work);
        const info = { ...bundleInfoFromFiles(files, v.image), image: v.image };
        infos.push(info);
        bundleFiles.set(v.version, files);
        versions.push({ version: v.version, bundle: v.image, source: 'pinned', channels, ...(deprecated ? { deprecated } : {}) });
        continue;
      }
      step(`building chart and bundle ${v.version}`);
      const artifacts = await renderReleaseArtifacts({
        version: v.version,
        image: operatorImage,
        channels,
        defaultChannel: channels.includes(plan.defaultChannel) ? plan.defaultChannel : channels[0]!,
        skipRange: skipRangeOf(v.version),
        created,
      });
      warnings.push(...artifacts.warnings);
      const tags = target.layout ? releaseTags(v.version) : { bundle: `v${v.version.replace(/\+/g, '_')}`, chart: v.version.replace(/\+/g, '_') };
      const pushed = await pushReleaseArtifacts(artifacts, target.bundle.store, { chartStore: target.chart.store, created, tags });
      const bundleRef = `${target.bundle.name}@${pushed.bundle.digest}`;
      infos.push({ ...bundleInfoFromFiles(artifacts.bundle.files), image: bundleRef });
      bundleFiles.set(v.version, artifacts.bundle.files);
      built.set(v.version, artifacts);
      versions.push({ version: v.version, bundle: bundleRef, source: 'built', channels, chart: `${target.chart.name}@${pushed.chart.digest}`, ...(deprecated ? { deprecated } : {}) });
    }

    // 4. CRD upgrade safety between each release and its predecessor (OLM v1's crdify rules).
    const crdUpgrades: string[] = [];
    for (let i = 1; i < sorted.length; i++) {
      const [prev, next] = [sorted[i - 1]!.version, sorted[i]!.version];
      const diff = diffCRDSets(crdsOf(bundleFiles.get(prev)!), crdsOf(bundleFiles.get(next)!));
      if (!diff.passed) {
        throw validationError('publish-crd-unsafe', `upgrading from ${prev} to ${next} changes CRDs unsafely`, {
          children: diff.crds.flatMap((c) => c.findings.map((f) => validationError('crd-unsafe-change', formatFinding(f), { place: `${next}/${c.name}` }))),
          hint: 'make the change compatible (new optional fields, new versions with conversion), or release it as a new major with a migration',
        });
      }
      crdUpgrades.push(`${prev} → ${next}: safe`);
    }

    // 5. The catalog: render with the real bundle facts, validate like opm (plus OLM v1 limits and reachability).
    step('rendering and validating the catalog');
    const rendered = renderTemplate(template, { bundles: infos, ...(iconBase64 ? { iconBase64 } : {}) });
    const report = validateCatalog(rendered.config);
    if (!report.passed) throw report.error!;
    warnings.push(...report.warnings.map((w) => w.message));

    // 6. The catalog image; its tag moves last.
    step('building the catalog image');
    const catalogTag = target.layout ? 'catalog-latest' : 'latest';
    const catalogImage = await buildCatalogImage(rendered.config, { store: target.catalog.store, tag: catalogTag, created });
    const catalogRef = `${target.catalog.name}@${catalogImage.root.digest}`;

    // 7. Files: staged in a temp folder, moved into place together at the end.
    const stage = await mkdtemp(join(work, 'out-'));
    for (const [version, a] of built) {
      for (const f of a.bundle.files) await put(join(stage, 'bundles', version, f.path), f.content);
      await put(join(stage, 'charts', a.chart.archiveName), a.chart.tgz);
    }
    for (const [rel, content] of renderCatalogFiles(rendered.config, 'json')) await put(join(stage, 'catalog', rel), content);
    // OLM ≤ 1.10 installs with a ServiceAccount: its RBAC is derived from what OLM renders from the newest
    // built bundle (OLM's generated names), or the newest pinned one when nothing was built.
    const newest = [...(built.size ? built.keys() : bundleFiles.keys())].sort((a, b) => blang.compare(blang.parse(a), blang.parse(b))).at(-1);
    const ext = extensionManifests({
      catalogImage: catalogRef,
      packageName: pkg,
      channels: [rendered.defaultChannel],
      olmVersion: o.olmVersion,
      ...(needsServiceAccount(o.olmVersion) && newest ? { bundleFiles: bundleFiles.get(newest)! } : {}),
    });
    warnings.push(...ext.warnings);
    for (const [name, text] of ext.rendered) await put(join(stage, 'extension', name), text);
    const mermaid = renderMermaid(rendered.config);
    const graph = buildGraph(rendered.config);
    await put(join(stage, 'graph.mmd'), mermaid);
    await put(join(stage, 'graph.svg'), renderSvg(graph, `Upgrade graph: ${pkg}`));
    await put(join(stage, 'graph.html'), renderHtml(rendered.config, `Upgrade graph: ${pkg}`));

    const channelSummary = plan.channels.map((c: ChannelPlan) => {
      const deprecated = template.deprecations.channels.find((d) => d.name === c.name)?.message;
      return { name: c.name, head: c.head, versions: c.entries.map((e) => e.version), ...(deprecated ? { deprecated } : {}) };
    });
    const result: PublishResult = {
      package: pkg,
      store: target.describe,
      operatorImage,
      versions,
      catalogImage: catalogRef,
      defaultChannel: rendered.defaultChannel,
      channels: channelSummary,
      files: {
        catalog: join(o.out, 'catalog'),
        bundles: join(o.out, 'bundles'),
        charts: join(o.out, 'charts'),
        extension: join(o.out, 'extension'),
        graph: join(o.out, 'graph.html'),
        summary: join(o.out, PUBLISH_MARKER),
      },
      checks: { rbac: rbacSummary, crdUpgrades, catalog: 'every opm validate rule, the OLM v1 bundle limits and reachability: passed', warnings },
      mermaid,
    };
    // Paths relative to <out>, so the folder is the same wherever it is written.
    const rel = Object.fromEntries(Object.entries(result.files).map(([k, v]) => [k, relative(o.out, v)]));
    await put(join(stage, PUBLISH_MARKER), canonicalJSON({ ...result, mermaid: undefined, files: rel, store: target.layout ? 'oci:oci' : target.describe }, 2) + '\n');

    step(`writing ${o.out}/`);
    await mkdir(o.out, { recursive: true });
    for (const name of ['bundles', 'charts', 'catalog', 'extension']) {
      await replaceDirAtomic(join(o.out, name), async (tmp) => {
        const from = join(stage, name);
        if (await stat(from).then(() => true, () => false)) {
          await rm(tmp, { recursive: true, force: true });
          await rename(from, tmp);
        }
      });
    }
    for (const name of ['graph.mmd', 'graph.svg', 'graph.html', PUBLISH_MARKER]) await writeFileAtomic(join(o.out, name), await readFile(join(stage, name)));
    return result;
  } finally {
    target.close();
    await rm(work, { recursive: true, force: true });
  }
}

async function put(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, data);
}
