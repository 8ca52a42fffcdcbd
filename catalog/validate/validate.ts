/**
 * Catalog validation: every rule `opm validate` applies (operator-registry `declcfg.ConvertToModel` and
 * `model.Validate`, with opm's messages), the OLM v1 limits on bundles, and reachability of the channel
 * head. Pure: it looks only at the loaded model. Unlike opm it does not stop at the first conversion
 * error; it reports everything, as a tree package → channel → bundle, each node with its `file:line`.
 */
import { OlmpubError, validationError } from '../../lib/errors.js';
import * as blang from '../semver/blang.js';
import { imageReferenceError, isDigestReference } from '../fbc/reference.js';
import { csvFacts, packageProperties, propertyParseError } from '../fbc/properties.js';
import {
  formatPosition,
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CONSTRAINT,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_PACKAGE_REQUIRED,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  type Bundle,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
  type LoadedCatalog,
  type Position,
} from '../fbc/types.js';

export interface ValidateOptions {
  /**
   * `olmv1` (default): opm's rules, plus the OLM v1 bundle limits and reachability of each channel head.
   * `opm`: exactly the rules `opm validate` applies, for comparisons with opm.
   */
  rules?: 'opm' | 'olmv1';
  /** Shown as the root of the error tree (usually the catalog directory). */
  name?: string;
}

export interface ValidationReport {
  passed: boolean;
  /** The error tree when validation failed: catalog → package → channel → bundle. */
  error?: OlmpubError;
  /** Problems that do not fail validation (for example an image referenced by tag). */
  warnings: OlmpubError[];
  /** Every problem, flat, in tree order: handy for tests and machine output. */
  problems: { code: string; message: string; place?: string; path: string[] }[];
}

interface Issue {
  code: string;
  message: string;
  pos?: Position;
  hint?: string;
}

/** A node of the report tree while it is being built. */
class Node {
  readonly issues: Issue[] = [];
  readonly kids = new Map<string, Node>();
  constructor(
    readonly title: string,
    public pos?: Position,
  ) {}
  child(key: string, title: string, pos?: Position): Node {
    let n = this.kids.get(key);
    if (!n) this.kids.set(key, (n = new Node(title, pos)));
    else if (!n.pos && pos) n.pos = pos;
    return n;
  }
  add(code: string, message: string, pos?: Position, hint?: string): void {
    this.issues.push({ code, message, ...(pos ? { pos } : {}), ...(hint ? { hint } : {}) });
  }
  get empty(): boolean {
    return this.issues.length === 0 && [...this.kids.values()].every((k) => k.empty);
  }
  toError(code: string, path: string[], flat: ValidationReport['problems']): OlmpubError {
    const children: OlmpubError[] = [];
    for (const i of this.issues) {
      flat.push({ code: i.code, message: i.message, ...(i.pos ? { place: formatPosition(i.pos)! } : {}), path });
      children.push(validationError(i.code, i.message, { ...(i.pos ? { place: formatPosition(i.pos) } : {}), ...(i.hint ? { hint: i.hint } : {}) }));
    }
    for (const [, k] of [...this.kids.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (k.empty) continue;
      const kind = k.title.startsWith('invalid package') ? 'package-invalid' : k.title.startsWith('invalid channel') ? 'channel-invalid' : 'bundle-invalid';
      children.push(k.toError(kind, [...path, k.title], flat));
    }
    return validationError(code, this.title, { ...(this.pos ? { place: formatPosition(this.pos) } : {}), children });
  }
}

const q = JSON.stringify;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) {
    if (DNS1123_SUBDOMAIN.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      );
  }
  return errs;
}

/** model.NewRelease: dot-separated prerelease identifiers, at most 20 characters. */
export function releaseError(rel: string): string | undefined {
  if (rel === '') return undefined;
  if (rel.length > 20) return `invalid release ${q(rel)}: exceeds maximum length of 20 characters`;
  const errs: string[] = [];
  rel.split('.').forEach((seg, i) => {
    try {
      blang.newPRVersion(seg);
    } catch (err) {
      errs.push(`segment ${i}: ${(err as Error).message}`);
    }
  });
  return errs.length ? `invalid release ${q(rel)}: ${errs.join('\n')}` : undefined;
}

const goRef = (r: { schema: string; name?: string }) => `declcfg.PackageScopedReference{Schema:${q(r.schema)}, Name:${q(r.name ?? '')}}`;

interface ChannelModel {
  channel: Channel;
  entries: Map<string, ChannelEntry>;
  /** Placeholder for a default channel that no olm.channel defines (opm adds an empty one). */
  placeholder: boolean;
}

interface PackageModel {
  name: string;
  pos?: Position;
  defaultChannel: string;
  channels: Map<string, ChannelModel>;
  bundles: Map<string, Bundle>;
}

/**
 * Validates a loaded catalog (or a config built in memory). `passed` is false exactly when opm would
 * fail (with `rules: 'opm'`), or when an OLM v1 limit or reachability check also fails (default).
 */
export function validateCatalog(input: LoadedCatalog | DeclarativeConfig, options: ValidateOptions = {}): ValidationReport {
  const rules = options.rules ?? 'olmv1';
  const cfg = 'config' in input ? input.config : input;
  const root = new Node(`invalid catalog${options.name ? ` ${q(options.name)}` : 'config' in input ? ` ${q(input.root)}` : ''}`);
  const warnRoot = new Node('warnings');

  // Files that did not parse (opm fails on the first).
  if ('problems' in input) for (const p of input.problems) root.add(p.code, p.message, p.pos, p.hint);

  const model = new Map<string, PackageModel>();
  // Tree nodes; without an explicit position they point at the blob that defines them.
  const pkgNode = (name: string, pos?: Position) => root.child(`p/${name}`, `invalid package ${q(name)}`, pos ?? model.get(name)?.pos);
  const chNode = (pkg: string, ch: string, pos?: Position) => {
    const c = model.get(pkg)?.channels.get(ch);
    return pkgNode(pkg).child(`c/${ch}`, `invalid channel ${q(ch)}`, pos ?? (c && !c.placeholder ? c.channel.pos : undefined));
  };
  const bundleNode = (pkg: string, b: string, pos?: Position) => pkgNode(pkg).child(`b/${b}`, `invalid bundle ${q(b)}`, pos ?? model.get(pkg)?.bundles.get(b)?.pos);
  const entryNode = (pkg: string, ch: string, b: string, pos?: Position) => chNode(pkg, ch).child(`b/${b}`, `invalid bundle ${q(b)}`, pos ?? model.get(pkg)?.channels.get(ch)?.entries.get(b)?.pos);

  // ---- Phase A: conversion (declcfg_to_model.go) ------------------------------------------------
  for (const p of cfg.packages) {
    if (p.name === '') {
      root.add('package-no-name', 'config contains package with no name', p.pos, 'set "name" on the olm.package blob');
      continue;
    }
    if (model.has(p.name)) {
      pkgNode(p.name, p.pos).add('package-duplicate', `duplicate package ${q(p.name)}`, p.pos, `keep one olm.package blob named ${q(p.name)} (the first is at ${formatPosition(model.get(p.name)!.pos) ?? 'an earlier blob'})`);
      continue;
    }
    const errs = dns1123LabelErrors(p.name);
    if (errs.length) {
      pkgNode(p.name, p.pos).add('package-name-invalid', `invalid package name ${q(p.name)}: [${errs.join(' ')}]`, p.pos, 'package names are DNS-1123 labels: lowercase letters, digits and "-", at most 63 characters');
      continue;
    }
    model.set(p.name, { name: p.name, ...(p.pos ? { pos: p.pos } : {}), defaultChannel: p.defaultChannel, channels: new Map(), bundles: new Map() });
  }

  for (const c of cfg.channels) {
    const pkg = model.get(c.package);
    if (!pkg) {
      root.add('channel-unknown-package', `unknown package ${q(c.package)} for channel ${q(c.name)}`, c.pos, c.package ? `add an olm.package blob named ${q(c.package)}, or fix "package" of this channel` : 'set "package" on the olm.channel blob');
      continue;
    }
    if (c.name === '') {
      pkgNode(pkg.name).add('channel-no-name', `package ${q(c.package)} contains channel with no name`, c.pos, 'set "name" on the olm.channel blob');
      continue;
    }
    if (pkg.channels.has(c.name)) {
      chNode(pkg.name, c.name, c.pos).add('channel-duplicate', `package ${q(c.package)} has duplicate channel ${q(c.name)}`, c.pos, `merge the entries into one olm.channel blob (the first is at ${formatPosition(pkg.channels.get(c.name)!.channel.pos) ?? 'an earlier blob'})`);
      continue;
    }
    const entries = new Map<string, ChannelEntry>();
    for (const e of c.entries) {
      if (entries.has(e.name)) {
        chNode(pkg.name, c.name, c.pos).add('channel-duplicate-entry', `invalid package ${q(c.package)}, channel ${q(c.name)}: duplicate entry ${q(e.name)}`, e.pos, 'a bundle may appear once per channel: merge the two entries');
        continue;
      }
      entries.set(e.name, e);
    }
    pkg.channels.set(c.name, { channel: c, entries, placeholder: false });
  }

  const bundleVersions = new Map<string, Map<string, blang.Version>>();
  for (const b of cfg.bundles) {
    if (b.package === '') {
      root.add('bundle-no-package', `package name must be set for bundle ${q(b.name)}`, b.pos, 'set "package" on the olm.bundle blob');
      continue;
    }
    const pkg = model.get(b.package);
    if (!pkg) {
      root.add('bundle-unknown-package', `unknown package ${q(b.package)} for bundle ${q(b.name)}`, b.pos, `the catalog has no olm.package blob named ${q(b.package)}: add one (with a defaultChannel), or fix "package" of this bundle`);
      continue;
    }
    if (pkg.bundles.has(b.name)) {
      bundleNode(pkg.name, b.name, b.pos).add('bundle-duplicate', `package ${q(b.package)} has duplicate bundle ${q(b.name)}`, b.pos, `bundle names are unique in a package (the first is at ${formatPosition(pkg.bundles.get(b.name)!.pos) ?? 'an earlier blob'})`);
      continue;
    }
    pkg.bundles.set(b.name, b);
    const node = () => bundleNode(pkg.name, b.name, b.pos);
    let propsOk = true;
    b.properties.forEach((p, i) => {
      const err = propertyParseError(p, i);
      if (err) {
        propsOk = false;
        node().add('bundle-property-invalid', `parse properties for bundle ${q(b.name)}: ${err}`, p.pos ?? b.pos, 'property values must match their type (olm.package: {packageName, version}; olm.gvk: {group, kind, version})');
      }
    });
    if (!propsOk) continue;
    const pkgProps = packageProperties(b);
    if (pkgProps.length !== 1) {
      node().add(
        'bundle-package-property',
        `package ${q(b.package)} bundle ${q(b.name)} must have exactly 1 "olm.package" property, found ${pkgProps.length}`,
        b.pos,
        pkgProps.length === 0 ? `add {"type": "olm.package", "value": {"packageName": ${q(b.package)}, "version": "X.Y.Z"}} to the bundle's properties` : 'remove the extra olm.package properties',
      );
      continue;
    }
    const pp = pkgProps[0]!;
    if (pp.packageName !== b.package) {
      node().add('bundle-package-mismatch', `package ${q(b.package)} does not match "olm.package" property ${q(pp.packageName)}`, b.pos, `the olm.package property's packageName must equal the bundle's package ${q(b.package)}`);
      continue;
    }
    let imagesOk = true;
    if (b.image) {
      const err = imageReferenceError(b.image);
      if (err) {
        imagesOk = false;
        node().add('bundle-image-invalid', `package ${q(b.package)} bundle ${q(b.name)} image: invalid image pull spec ${q(b.image)}: ${err}`, b.pos, 'use a reference like registry.example.com/org/bundle@sha256:<digest>');
      }
    }
    (b.relatedImages ?? []).forEach((r, i) => {
      if (!r.image) return;
      const err = imageReferenceError(r.image);
      if (err) {
        imagesOk = false;
        node().add('bundle-related-image-invalid', `package ${q(b.package)} bundle ${q(b.name)} relatedImages[${i}].image: invalid image pull spec ${q(r.image)}: ${err}`, b.pos, 'use a reference like registry.example.com/org/image@sha256:<digest>');
      }
    });
    if (!imagesOk) continue;
    let version: blang.Version;
    try {
      version = blang.parse(pp.version);
    } catch (err) {
      node().add('bundle-version-invalid', `error parsing bundle ${q(b.name)} version ${q(pp.version)}: ${(err as Error).message}`, b.pos, 'versions are strict semver without a leading "v", e.g. 1.2.3 or 1.2.3-rc.1');
      continue;
    }
    const relErr = releaseError(pp.release ?? '');
    if (relErr) {
      node().add('bundle-release-invalid', `error parsing bundle ${q(b.name)} release version ${q(pp.release!)}: ${relErr}`, b.pos, 'a release is dot-separated alphanumeric identifiers, at most 20 characters');
      continue;
    }
    const inChannel = [...pkg.channels.values()].some((c) => c.entries.has(b.name));
    if (!inChannel) {
      node().add('bundle-not-in-channel', `package ${q(b.package)}, bundle ${q(b.name)} not found in any channel entries`, b.pos, `add {"name": ${q(b.name)}} to the entries of a channel of ${q(b.package)}, or remove the bundle`);
      continue;
    }
    let m = bundleVersions.get(pkg.name);
    if (!m) bundleVersions.set(pkg.name, (m = new Map()));
    m.set(b.name, version);
  }

  // Channel entries with no olm.bundle blob.
  for (const pkg of model.values()) {
    const missing = new Map<string, Position | undefined>();
    for (const c of pkg.channels.values()) for (const e of c.entries.values()) if (!pkg.bundles.has(e.name) && !missing.has(e.name)) missing.set(e.name, e.pos);
    if (missing.size) {
      const names = [...missing.keys()].sort();
      pkgNode(pkg.name).add(
        'channel-entry-without-bundle',
        `no olm.bundle blobs found in package ${q(pkg.name)} for olm.channel entries [${names.join(' ')}]`,
        missing.get(names[0]!),
        'every channel entry needs an olm.bundle blob with the same name in the same package',
      );
    }
  }

  // Default channel placeholders (opm adds an empty channel, which then fails as empty).
  for (const pkg of model.values()) {
    if (pkg.defaultChannel !== '' && !pkg.channels.has(pkg.defaultChannel)) {
      pkg.channels.set(pkg.defaultChannel, {
        channel: { schema: SCHEMA_CHANNEL, name: pkg.defaultChannel, package: pkg.name, entries: [] },
        entries: new Map(),
        placeholder: true,
      });
    }
  }

  // Deprecations.
  const seenDeprecationPkgs = new Set<string>();
  cfg.deprecations.forEach((d, i) => {
    if (d.package === '') {
      root.add('deprecation-no-package', `package name must be set for deprecation item ${i}`, d.pos, 'set "package" on the olm.deprecations blob');
      return;
    }
    const pkg = model.get(d.package);
    if (!pkg) {
      root.add('deprecation-unknown-package', `cannot apply deprecations to an unknown package ${q(d.package)}`, d.pos, `the catalog has no olm.package named ${q(d.package)}`);
      return;
    }
    const node = pkgNode(pkg.name);
    if (seenDeprecationPkgs.has(d.package)) {
      node.add('deprecation-duplicate', `expected a maximum of one deprecation per package: ${q(d.package)}`, d.pos, 'merge the entries into one olm.deprecations blob per package');
      return;
    }
    seenDeprecationPkgs.add(d.package);
    const refs = new Set<string>();
    d.entries.forEach((e, j) => {
      if (e.reference.schema === '') {
        node.add('deprecation-entry-no-schema', `schema must be set for deprecation entry [${j}] for package ${q(d.package)}`, e.pos, 'reference.schema is one of olm.package, olm.channel, olm.bundle');
        return;
      }
      const key = `${e.reference.schema}\u0000${e.reference.name ?? ''}`;
      if (refs.has(key)) {
        node.add('deprecation-entry-duplicate', `duplicate deprecation entry ${goRef(e.reference)} for package ${q(d.package)}`, e.pos, 'deprecate each package, channel or bundle once');
        return;
      }
      refs.add(key);
      const name = e.reference.name ?? '';
      switch (e.reference.schema) {
        case SCHEMA_BUNDLE:
          if (!pkg.bundles.has(name)) {
            node.add('deprecation-bundle-missing', `cannot deprecate bundle ${q(name)} for package ${q(d.package)}: bundle not found`, e.pos, `the package has no olm.bundle named ${q(name)}`);
            return;
          }
          if (e.message === '') entryNodeFor(pkg, name, (c) => entryNode(pkg.name, c, name, pkg.channels.get(c)?.entries.get(name)?.pos)).forEach((n) => n.add('deprecation-no-message', 'invalid deprecation: message must be set', e.pos, 'give the deprecation a message for users'));
          break;
        case SCHEMA_CHANNEL:
          if (!pkg.channels.has(name)) {
            node.add('deprecation-channel-missing', `cannot deprecate channel ${q(name)} for package ${q(d.package)}: channel not found`, e.pos, `the package has no channel named ${q(name)}`);
            return;
          }
          if (e.message === '') chNode(pkg.name, name).add('deprecation-no-message', 'invalid deprecation: message must be set', e.pos, 'give the deprecation a message for users');
          break;
        case SCHEMA_PACKAGE:
          if (name !== '') {
            node.add('deprecation-package-name', `package name must be empty for deprecated package ${q(d.package)} (specified ${q(name)})`, e.pos, 'an olm.package reference in olm.deprecations has no name: it means the package of the blob');
            return;
          }
          if (e.message === '') node.add('deprecation-no-message', 'invalid deprecation: message must be set', e.pos, 'give the deprecation a message for users');
          break;
        default:
          node.add('deprecation-unknown-schema', `cannot deprecate object ${goRef(e.reference)} referenced by entry ${j} for package ${q(d.package)}: object schema unknown`, e.pos, 'reference.schema is one of olm.package, olm.channel, olm.bundle');
      }
    });
  });

  function entryNodeFor(pkg: PackageModel, bundle: string, make: (channel: string) => Node): Node[] {
    return [...pkg.channels.values()].filter((c) => c.entries.has(bundle)).map((c) => make(c.channel.name));
  }

  // ---- Phase B: the model (model.go) --------------------------------------------------------------
  for (const pkg of model.values()) {
    const pn = pkgNode(pkg.name);
    const versions = bundleVersions.get(pkg.name) ?? new Map<string, blang.Version>();
    if (pkg.defaultChannel === '') {
      pn.add('package-no-default-channel', 'default channel must be set', pkg.pos, `set "defaultChannel" on the olm.package blob to one of its channels${pkg.channels.size ? ` (${[...pkg.channels.keys()].sort().join(', ')})` : ''}`);
    }
    if (pkg.channels.size === 0) pn.add('package-no-channels', 'package must contain at least one channel', pkg.pos, `add an olm.channel blob with "package": ${q(pkg.name)}`);

    for (const ch of pkg.channels.values()) {
      const c = ch.channel;
      const cn = () => chNode(pkg.name, c.name, ch.placeholder ? pkg.pos : c.pos);
      if (ch.entries.size === 0) {
        cn().add(
          ch.placeholder ? 'package-default-channel-missing' : 'channel-empty',
          'channel must contain at least one bundle',
          ch.placeholder ? pkg.pos : c.pos,
          ch.placeholder
            ? `defaultChannel ${q(c.name)} of package ${q(pkg.name)} names no olm.channel; add that channel or set defaultChannel to one of: ${[...pkg.channels.values()].filter((x) => !x.placeholder).map((x) => x.channel.name).sort().join(', ') || '(no channels)'}`
            : 'add at least one entry, or remove the channel',
        );
        continue;
      }
      const chain = replacesChainError(ch);
      if (chain) cn().add(chain.code, chain.message, c.pos, chain.hint);

      for (const e of ch.entries.values()) {
        const en = () => entryNode(pkg.name, c.name, e.name, e.pos);
        if (e.name === '') en().add('bundle-no-name', 'name must be set', e.pos, 'every channel entry needs a "name"');
        (e.skips ?? []).forEach((s, i) => {
          if (s === '') en().add('bundle-empty-skip', `skip[${i}] is empty`, e.pos, 'remove the empty item from "skips"');
        });
        if (e.skipRange) {
          try {
            blang.parseRange(e.skipRange);
          } catch (err) {
            en().add('bundle-skiprange-invalid', `invalid skipRange ${q(e.skipRange)}: ${(err as Error).message}`, e.pos, 'a skipRange is a blang semver range such as ">=1.0.0 <1.2.0"');
          }
        }
        const b = pkg.bundles.get(e.name);
        if (!b || !versions.has(e.name)) continue; // reported in phase A
        const pp = packageProperties(b)[0]!;
        const v = versions.get(e.name)!;
        if (pp.release) {
          const normalized = `${pkg.name}-v${blang.format(v)}-${pp.release}`;
          if (b.name !== normalized) en().add('bundle-name-not-normalized', `name ${q(b.name)} does not match normalized name ${q(normalized)}`, b.pos, 'a bundle with a release must be named <package>-v<version>-<release>');
          if (v.build.length > 0) en().add('bundle-build-and-release', 'cannot use build metadata in version with a release version', b.pos, 'drop the +build part of the version, or the release');
        }
        if (b.image === '' && !b.properties.some((p) => p.type === PROPERTY_BUNDLE_OBJECT)) {
          en().add('bundle-no-image', 'bundle image must be set', b.pos, 'set "image" to the bundle image reference');
        }
      }
    }

    // Versions unique across the package (bundle blobs in any channel).
    const byVersion = new Map<string, Set<string>>();
    for (const ch of pkg.channels.values()) {
      for (const name of ch.entries.keys()) {
        const b = pkg.bundles.get(name);
        const v = versions.get(name);
        if (!b || !v) continue;
        const rel = packageProperties(b)[0]?.release;
        const key = rel ? `${blang.format(v)}-${rel}` : blang.format(v);
        byVersion.set(key, (byVersion.get(key) ?? new Set()).add(name));
      }
    }
    const dups = [...byVersion.entries()].filter(([, s]) => s.size > 1).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (dups.length) {
      const first = pkg.bundles.get([...dups[0]![1]].sort()[1]!);
      pn.add(
        'package-duplicate-versions',
        `duplicate versions found in bundles: [${dups.map(([v, s]) => `{${v}: [${[...s].sort().join(', ')}]}`).join(' ')}]`,
        first?.pos,
        'each bundle of a package needs its own version: bump the version of one of them or remove it',
      );
    }

    // ---- olmpub: OLM v1 limits and reachability -------------------------------------------------
    if (rules === 'olmv1') {
      for (const b of pkg.bundles.values()) {
        if (!versions.has(b.name)) continue;
        for (const p of b.properties) {
          if (p.type === PROPERTY_PACKAGE_REQUIRED || p.type === PROPERTY_GVK_REQUIRED || p.type === PROPERTY_CONSTRAINT) {
            bundleNode(pkg.name, b.name, b.pos).add('olmv1-dependency', `bundle ${q(b.name)} has a dependency declared via property ${q(p.type)} which is currently not supported`, p.pos ?? b.pos, 'OLM v1 does not resolve dependencies: remove the property and document the prerequisite instead');
          }
        }
        for (const f of csvFacts(b)) {
          if (f.installModes && !f.installModes.some((m) => m.type === 'AllNamespaces' && m.supported)) {
            bundleNode(pkg.name, b.name, b.pos).add('olmv1-install-mode', `bundle ${q(b.name)} does not support the AllNamespaces install mode (${f.source} installModes)`, b.pos, 'OLM v1 installs registry+v1 bundles in AllNamespaces mode (Single/OwnNamespace need the alpha SingleOwnNamespaceInstallSupport gate): mark AllNamespaces supported in the CSV');
          }
          if (f.ownedAPIServices > 0) {
            bundleNode(pkg.name, b.name, b.pos).add('olmv1-apiservice', `bundle ${q(b.name)} owns ${f.ownedAPIServices} APIService definition(s), which OLM v1 does not support`, b.pos, 'OLM v1 rejects bundles with apiservicedefinitions ("unsupported bundle: apiServiceDefintions are not supported"); serve the API through a CRD or a webhook instead');
          }
        }
        if (b.image && !isDigestReference(b.image)) {
          warnRoot.child(`p/${pkg.name}`, `package ${q(pkg.name)}`).add('bundle-image-tag', `bundle ${q(b.name)} image ${q(b.image)} is not pinned by digest`, b.pos, 'reference bundle images by digest (image@sha256:...) so the catalog cannot change under users');
        }
      }
      for (const ch of pkg.channels.values()) {
        if (ch.placeholder || ch.entries.size === 0) continue;
        const unreachable = unreachableEntries(ch, versions);
        if (unreachable && unreachable.names.length) {
          chNode(pkg.name, ch.channel.name, ch.channel.pos).add(
            'channel-unreachable',
            `channel contains bundles that cannot upgrade to the head ${q(unreachable.head)}: ${unreachable.names.join(', ')}`,
            ch.entries.get(unreachable.names[0]!)?.pos ?? ch.channel.pos,
            'give each of them a path to the head: an entry that replaces or skips it, or a skipRange covering its version',
          );
        }
        for (const e of ch.entries.values()) {
          if (e.replaces && (e.skips ?? []).includes(e.replaces)) {
            warnRoot
              .child(`p/${pkg.name}`, `package ${q(pkg.name)}`)
              .add('entry-replaces-and-skips', `channel ${q(ch.channel.name)} entry ${q(e.name)} both replaces and skips ${q(e.replaces)}`, e.pos, 'OLM v0 drops the replaces edge in that case (operator-registry#1749); keep only one of the two');
          }
        }
      }
    }
  }

  const flat: ValidationReport['problems'] = [];
  const warnings: OlmpubError[] = [];
  for (const [, k] of warnRoot.kids) warnings.push(...k.toError('warnings', [], []).children);
  if (root.empty) return { passed: true, warnings, problems: [] };
  const error = root.toError('catalog-invalid', [], flat);
  return { passed: false, error, warnings, problems: flat };
}

/** The entries no other entry replaces or skips: a channel's heads (opm's Channel.Head wants exactly one). */
export function channelHeads(entries: Iterable<ChannelEntry>): ChannelEntry[] {
  const all = [...entries];
  const incoming = new Set<string>();
  for (const e of all) {
    if (e.replaces) incoming.add(e.replaces);
    for (const s of e.skips ?? []) incoming.add(s);
  }
  return all.filter((e) => !incoming.has(e.name));
}

/** opm's Channel.Head + validateReplacesChain (heads, cycles, stranded bundles). */
function replacesChainError(ch: ChannelModel): { code: string; message: string; hint: string } | undefined {
  const bundles = ch.entries;
  const heads = channelHeads(bundles.values());
  if (heads.length === 0) {
    return { code: 'channel-no-head', message: 'no channel head found in graph', hint: 'every entry is replaced or skipped by another, so the graph has a cycle: the newest entry must be replaced or skipped by none' };
  }
  if (heads.length > 1) {
    const names = heads.map((h) => h.name).sort();
    return {
      code: 'channel-multiple-heads',
      message: `multiple channel heads found in graph: ${names.join(', ')}`,
      hint: `exactly one entry may have no incoming replaces/skips edge (skipRange does not count): make the newest of ${names.join(', ')} replace or skip the others`,
    };
  }
  const head = heads[0]!;
  const skipped = new Set<string>();
  for (const b of bundles.values()) for (const s of b.skips ?? []) skipped.add(s);
  const chainFrom = new Map<string, string[]>();
  const chain = new Set<string>([head.name]);
  let cur: ChannelEntry | undefined = head;
  while (cur) {
    if (!chainFrom.has(cur.name)) chainFrom.set(cur.name, [cur.name]);
    const rep = cur.replaces ?? '';
    if (skipped.has(rep)) break;
    for (const list of chainFrom.values()) list.push(rep);
    if (chain.has(rep)) {
      return {
        code: 'channel-cycle',
        message: `detected cycle in replaces chain of upgrade graph: ${chainFrom.get(rep)!.join(' -> ')}`,
        hint: 'replaces edges must point from newer to older bundles and never loop',
      };
    }
    chain.add(rep);
    cur = bundles.get(rep);
  }
  const stranded = [...bundles.keys()].filter((n) => !chain.has(n) && !skipped.has(n)).sort();
  if (stranded.length) {
    return {
      code: 'channel-stranded',
      message: `channel contains one or more stranded bundles: ${stranded.join(', ')}`,
      hint: 'each entry must be on the replaces chain from the head or be skipped by some entry: add it to a "replaces" or "skips"',
    };
  }
  return undefined;
}

/** Entries with no path to the single head along replaces/skips/skipRange edges (undefined if no single head). */
function unreachableEntries(ch: ChannelModel, versions: Map<string, blang.Version>): { head: string; names: string[] } | undefined {
  const entries = [...ch.entries.values()];
  const heads = channelHeads(entries);
  if (heads.length !== 1) return undefined;
  const head = heads[0]!.name;
  // successors[x] = entries that x can upgrade to directly.
  const preds = new Map<string, Set<string>>(); // target -> sources
  const edge = (from: string, to: string) => {
    if (!ch.entries.has(from) || from === to) return;
    preds.set(to, (preds.get(to) ?? new Set()).add(from));
  };
  for (const e of entries) {
    if (e.replaces) edge(e.replaces, e.name);
    for (const s of e.skips ?? []) edge(s, e.name);
    const range = e.skipRange ? blang.tryParseRange(e.skipRange) : undefined;
    if (range) for (const x of entries) if (versions.has(x.name) && range(versions.get(x.name)!)) edge(x.name, e.name);
  }
  const reach = new Set<string>([head]);
  const queue = [head];
  while (queue.length) {
    const n = queue.shift()!;
    for (const p of preds.get(n) ?? []) if (!reach.has(p)) reach.add(p), queue.push(p);
  }
  return { head, names: entries.map((e) => e.name).filter((n) => !reach.has(n)).sort() };
}
