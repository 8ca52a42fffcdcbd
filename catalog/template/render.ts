/**
 * Rendering a catalog template into FBC. Channels and edges follow opm's semver template
 * (`alpha/template/semver`) with its known bugs fixed:
 *
 * - channels `<archetype>-v<X>` (major) and/or `<archetype>-v<X>.<Y>` (minor); a version promoted to
 *   stable is in fast and candidate too; entries ascend by semver;
 * - optionally (`crossMajorUpgrades`) the first Y-stream of a major replaces the newest version of the
 *   previous major, a cross-channel edge like opm's between minor channels;
 * - within an archetype and a major version, the highest Z of each Y-stream `replaces` the highest Z of
 *   the previous Y-stream and `skips` every earlier version except that replaces target (so never
 *   `replaces` and `skips` to the same bundle, operator-registry#1749); lower Zs get no replaces/skips
 *   and are skipped by their Y-stream's top; no edges across majors or archetypes;
 * - so each channel has exactly one head (the top of its newest Y-stream) and nothing is stranded;
 * - every entry also gets a `skipRange` from the start of its major (or minor) to itself, so OLM v1 can
 *   go straight from any earlier version, including ones no longer in the catalog, and a user pinned to
 *   an intermediate version can still reach it.
 */
import { validationError } from '../../lib/errors.js';
import * as blang from '../semver/blang.js';
import { getField } from '../fbc/decode.js';
import { sortProperties } from '../fbc/properties.js';
import {
  PROPERTY_PACKAGE,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  type Bundle,
  type Channel,
  type DeclarativeConfig,
  type Deprecation,
  type Package,
  type RelatedImage,
} from '../fbc/types.js';
import { archetypeRank, type Archetype, type CatalogTemplate, type StreamKind, type TemplatePosition } from './template.js';
import { syntheticBundleInfo, type BundleInfo } from './bundleinfo.js';

export interface RenderOptions {
  /** Facts about each version's bundle (matched by version). */
  bundles?: readonly BundleInfo[];
  /** The icon's bytes, base64-encoded, when the template names an icon (the caller reads the file). */
  iconBase64?: string;
  /** Stand in `<package>.v<version>` bundles for versions without BundleInfo instead of failing. */
  allowMissingBundles?: boolean;
}

export interface PlannedEntry {
  version: string;
  bundle: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface ChannelPlan {
  name: string;
  archetype: Archetype;
  kind: StreamKind;
  major: string;
  minor?: string;
  /** Ascending by version; the last one is the head. */
  entries: PlannedEntry[];
  head: string;
}

export interface RenderResult {
  config: DeclarativeConfig;
  defaultChannel: string;
  channels: ChannelPlan[];
  /** version → bundle name */
  bundleNames: Map<string, string>;
}

interface V {
  version: string;
  parsed: blang.Version;
  image?: string;
  stage: Archetype;
  pos: TemplatePosition;
}

const cmpV = (a: V, b: V) => blang.compare(a.parsed, b.parsed);
const stripBuild = (v: blang.Version): blang.Version => ({ ...v, build: [] });
const place = (p: TemplatePosition | undefined) => (p ? `${p.file}:${p.line}` : undefined);

/** The lowest version a skipRange of `v` starts from (start of its major or minor, or an earlier prerelease). */
function skipRangeFloor(v: blang.Version, all: V[], policy: 'major' | 'minor'): blang.Version {
  let floor: blang.Version = { major: v.major, minor: policy === 'minor' ? v.minor : 0n, patch: 0n, pre: [], build: [] };
  for (const x of all) {
    if (x.parsed.major !== v.major || (policy === 'minor' && x.parsed.minor !== v.minor)) continue;
    if (blang.compare(x.parsed, floor) < 0) floor = stripBuild(x.parsed);
  }
  return floor;
}

/** Renders the template; throws a validation error tree naming template lines when it cannot. */
export function renderTemplate(tpl: CatalogTemplate, options: RenderOptions = {}): RenderResult {
  const problems: { message: string; place?: string; hint: string }[] = [];
  const pkg = tpl.package.name;
  const versions: V[] = tpl.versions.map((t) => ({ version: t.version, parsed: blang.parse(t.version), image: t.image, stage: t.stage, pos: t.pos })).sort(cmpV);

  // Bundle facts.
  const infoByVersion = new Map<string, BundleInfo>();
  for (const info of options.bundles ?? []) {
    const parsed = blang.tryParse(info.version);
    const key = parsed ? blang.format(parsed) : info.version;
    if (infoByVersion.has(key)) problems.push({ message: `two bundles have version ${info.version} (${infoByVersion.get(key)!.name}, ${info.name})`, hint: 'give the renderer one bundle per version' });
    infoByVersion.set(key, info);
  }
  const bundleNames = new Map<string, string>();
  const bundles: Bundle[] = [];
  const nameOwner = new Map<string, string>();
  for (const v of versions) {
    let info = infoByVersion.get(blang.format(v.parsed));
    if (!info) {
      if (!options.allowMissingBundles) {
        problems.push({
          message: `no bundle information for version ${v.version}`,
          place: place(v.pos),
          hint: 'build the bundle for this version (olmpub bundle build) and pass it to render (--bundle-info FILE or --bundles DIR)',
        });
        continue;
      }
      info = syntheticBundleInfo(pkg, v.version);
    }
    if (!info.name) problems.push({ message: `the bundle of version ${v.version} has no name`, place: place(v.pos), hint: "set the bundle's name to the CSV metadata.name" });
    if (info.image && v.image && info.image !== v.image) {
      problems.push({ message: `version ${v.version}: the template lists image ${v.image} but the bundle was built as ${info.image}`, place: place(v.pos), hint: 'update the template to the image that was pushed (by digest)' });
    }
    // A released version keeps its pinned image; a version built by publish uses what was pushed.
    // Previews (allowMissingBundles) only need the graph: a placeholder stands in for an unbuilt bundle.
    const image = v.image ?? info.image ?? (options.allowMissingBundles ? `unbuilt.invalid/${pkg}-bundle:v${v.version}` : undefined);
    if (!image) {
      problems.push({ message: `version ${v.version} has no bundle image`, place: place(v.pos), hint: 'pin the pushed bundle in the template (image: <repo>@sha256:<digest>), or let "olmpub publish" build and push it' });
      continue;
    }
    if (nameOwner.has(info.name)) problems.push({ message: `versions ${nameOwner.get(info.name)} and ${v.version} have the same bundle name ${info.name}`, place: place(v.pos), hint: 'each CSV needs its own metadata.name, usually <package>.v<version>' });
    nameOwner.set(info.name, v.version);
    const props = info.properties.filter((p) => p.type !== PROPERTY_PACKAGE);
    for (const p of info.properties.filter((p) => p.type === PROPERTY_PACKAGE)) {
      const name = getField(p.value, 'packageName');
      const ver = getField(p.value, 'version');
      if (name !== pkg || ver !== v.version) {
        problems.push({ message: `the bundle of version ${v.version} declares olm.package ${JSON.stringify(name)} ${JSON.stringify(ver)}`, place: place(v.pos), hint: `its olm.package property must be {packageName: ${pkg}, version: ${v.version}}` });
      }
    }
    props.push({ type: PROPERTY_PACKAGE, value: { packageName: pkg, version: v.version } });
    const related = new Map<string, RelatedImage>();
    for (const r of [...info.relatedImages, { name: '', image }]) {
      if (!r.image) continue;
      if ([...related.values()].some((x) => x.image === r.image) && r.name === '') continue;
      related.set(`${r.image}\u0000${r.name}`, { name: r.name, image: r.image });
    }
    bundleNames.set(v.version, info.name);
    bundles.push({
      schema: SCHEMA_BUNDLE,
      name: info.name,
      package: pkg,
      image,
      properties: sortProperties(props),
      relatedImages: [...related.values()].sort((a, b) => (a.image !== b.image ? (a.image < b.image ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    });
  }
  const nameOf = (v: V) => bundleNames.get(v.version) ?? `${pkg}.v${v.version}`;

  // Channels and edges.
  const plans: ChannelPlan[] = [];
  for (const arch of tpl.channels.archetypes) {
    const members = versions.filter((v) => archetypeRank(v.stage) >= archetypeRank(arch));
    const majors = new Map<string, V[]>();
    for (const v of members) {
      const k = v.parsed.major.toString();
      majors.set(k, [...(majors.get(k) ?? []), v]);
    }
    let previousMajorTop: V | undefined;
    for (const [major, lineage] of majors) {
      const groups: V[][] = [];
      for (const v of lineage) {
        const last = groups[groups.length - 1];
        if (last && last[0]!.parsed.minor === v.parsed.minor) last.push(v);
        else groups.push([v]);
      }
      const edges = new Map<string, PlannedEntry>();
      groups.forEach((g, i) => {
        g.forEach((v, j) => {
          const e: PlannedEntry = { version: v.version, bundle: nameOf(v) };
          if (j === g.length - 1) {
            const prevTop = i > 0 ? groups[i - 1]![groups[i - 1]!.length - 1]! : tpl.channels.crossMajorUpgrades ? previousMajorTop : undefined;
            if (prevTop) e.replaces = nameOf(prevTop);
            const skips = lineage.filter((x) => cmpV(x, v) < 0 && x !== prevTop).map(nameOf).sort();
            if (skips.length) e.skips = skips;
          }
          if (tpl.channels.skipRange !== 'none') {
            const floor = skipRangeFloor(v.parsed, versions, tpl.channels.skipRange);
            if (blang.compare(floor, v.parsed) < 0) e.skipRange = `>=${blang.format(floor)} <${blang.format(stripBuild(v.parsed))}`;
          }
          edges.set(v.version, e);
        });
      });
      previousMajorTop = lineage[lineage.length - 1];
      for (const kind of tpl.channels.streams) {
        const parts = kind === 'major' ? [lineage] : groups;
        for (const part of parts) {
          const minor = kind === 'minor' ? part[0]!.parsed.minor.toString() : undefined;
          const name = `${arch}-v${major}${minor !== undefined ? `.${minor}` : ''}`;
          const entries = part.map((v) => edges.get(v.version)!);
          plans.push({ name, archetype: arch, kind, major, ...(minor !== undefined ? { minor } : {}), entries, head: entries[entries.length - 1]!.version });
        }
      }
    }
  }
  plans.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  // Default channel.
  let defaultChannel = '';
  if (tpl.channels.default !== undefined) {
    defaultChannel = tpl.channels.default;
    if (!plans.some((p) => p.name === defaultChannel)) {
      problems.push({
        message: `default channel ${JSON.stringify(defaultChannel)} is not one of the channels the template generates`,
        place: place(tpl.channels.defaultPos),
        hint: `use one of: ${plans.map((p) => p.name).join(', ') || '(no channels: add versions)'}, or remove channels.default to let olmpub choose`,
      });
    }
  } else {
    const archs = [...tpl.channels.archetypes].reverse();
    for (const arch of archs) {
      const candidates = plans.filter((p) => p.archetype === arch && p.kind === tpl.channels.defaultStream);
      if (!candidates.length) continue;
      const best = candidates.reduce((a, b) => (blang.compare(blang.parse(b.head), blang.parse(a.head)) > 0 ? b : a));
      defaultChannel = best.name;
      break;
    }
  }
  if (versions.length === 0) problems.push({ message: 'the template lists no versions', place: `${tpl.file}:1`, hint: 'add at least one released version under "versions"' });

  // Deprecations.
  const depEntries: Deprecation['entries'] = [];
  if (tpl.deprecations.package) depEntries.push({ reference: { schema: SCHEMA_PACKAGE }, message: tpl.deprecations.package.message });
  for (const d of [...tpl.deprecations.channels].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!plans.some((p) => p.name === d.name)) {
      problems.push({ message: `deprecated channel ${JSON.stringify(d.name)} is not one of the channels the template generates`, place: place(d.pos), hint: `channels: ${plans.map((p) => p.name).join(', ')}` });
      continue;
    }
    depEntries.push({ reference: { schema: SCHEMA_CHANNEL, name: d.name }, message: d.message });
  }
  for (const d of [...tpl.deprecations.bundles].sort((a, b) => blang.compare(blang.parse(a.version), blang.parse(b.version)))) {
    const name = bundleNames.get(d.version) ?? (options.allowMissingBundles ? `${pkg}.v${d.version}` : undefined);
    if (!name) continue; // reported as missing bundle information
    depEntries.push({ reference: { schema: SCHEMA_BUNDLE, name }, message: d.message });
  }

  if (problems.length) {
    throw validationError('template-render-failed', `cannot render catalog template ${JSON.stringify(tpl.file)}`, {
      children: problems.map((p) => validationError('template-render', p.message, { ...(p.place ? { place: p.place } : {}), hint: p.hint })),
    });
  }

  const pkgBlob: Package = { schema: SCHEMA_PACKAGE, name: pkg, defaultChannel };
  if (options.iconBase64 !== undefined && tpl.package.icon) pkgBlob.icon = { base64data: options.iconBase64, mediatype: tpl.package.icon.mediatype };
  if (tpl.package.description) pkgBlob.description = tpl.package.description;
  const channels: Channel[] = plans.map((p) => ({
    schema: SCHEMA_CHANNEL,
    name: p.name,
    package: pkg,
    entries: p.entries.map((e) => ({
      name: e.bundle,
      ...(e.replaces ? { replaces: e.replaces } : {}),
      ...(e.skips ? { skips: e.skips } : {}),
      ...(e.skipRange ? { skipRange: e.skipRange } : {}),
    })),
  }));
  const deprecations: Deprecation[] = depEntries.length ? [{ schema: SCHEMA_DEPRECATIONS, package: pkg, entries: depEntries }] : [];
  return {
    config: { packages: [pkgBlob], channels, bundles, deprecations, others: [] },
    defaultChannel,
    channels: plans,
    bundleNames,
  };
}
