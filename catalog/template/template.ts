/**
 * The catalog template (schema `olmpub.catalog.v1`, documented in docs/catalog-template.md): what the
 * publisher decides (package metadata, channel policy, released versions and how far each is promoted,
 * deprecations), from which olmpub renders the FBC. Parsing is strict: unknown keys, wrong types, bad
 * versions or images are errors naming `file:line` and the fix.
 */
import YAML, { isMap, isScalar, isSeq, LineCounter, type Document, type Node as YamlNode, type YAMLMap } from 'yaml';
import { validationError } from '../../lib/errors.js';
import * as blang from '../semver/blang.js';
import { parseNormalizedNamed } from '../fbc/reference.js';

export const TEMPLATE_SCHEMA = 'olmpub.catalog.v1';

/** Channel archetypes, from least to most stable. A version promoted to one is in every lower one too. */
export const ARCHETYPES = ['candidate', 'fast', 'stable'] as const;
export type Archetype = (typeof ARCHETYPES)[number];
export const archetypeRank = (a: Archetype) => ARCHETYPES.indexOf(a);

export type StreamKind = 'major' | 'minor';

export interface TemplatePosition {
  file: string;
  line: number;
}

export interface TemplateVersion {
  version: string;
  /**
   * The released bundle image, pinned by digest. Absent for a version `olmpub publish` builds from this
   * source tree: the digest it pushes is used instead.
   */
  image?: string;
  /** The most stable archetype the version is promoted to (default candidate). */
  stage: Archetype;
  pos: TemplatePosition;
}

export interface TemplateDeprecation {
  message: string;
  pos: TemplatePosition;
}

export interface CatalogTemplate {
  schema: typeof TEMPLATE_SCHEMA;
  file: string;
  package: {
    name: string;
    /** Markdown shown by catalogs' UIs. */
    description?: string;
    /** Icon file, relative to the template file; the caller reads it. */
    icon?: { path: string; mediatype: string; pos: TemplatePosition };
  };
  channels: {
    /** Which archetypes get channels (default all three). */
    archetypes: Archetype[];
    /** Channel naming: `stable-v1` (major), `stable-v1.2` (minor), or both sets. Default major. */
    streams: StreamKind[];
    /** Explicit default channel; otherwise the most stable archetype's channel holding the highest version. */
    default?: string;
    defaultPos?: TemplatePosition;
    /** With both streams, which kind the computed default channel uses (default: major). */
    defaultStream: StreamKind;
    /** skipRange on every entry: from the start of its major (default), of its minor, or none. */
    skipRange: 'major' | 'minor' | 'none';
    /**
     * Whether the first Y-stream of a major replaces the newest version of the previous major (in the
     * same archetype), so CatalogProvided upgrades can cross majors. Default false, as opm's template.
     */
    crossMajorUpgrades: boolean;
  };
  versions: TemplateVersion[];
  deprecations: {
    package?: TemplateDeprecation;
    channels: (TemplateDeprecation & { name: string })[];
    bundles: (TemplateDeprecation & { version: string })[];
  };
}

const ICON_TYPES: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
};

export function iconMediaType(path: string): string | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : ICON_TYPES[path.slice(dot).toLowerCase()];
}

interface Problem {
  message: string;
  line: number;
  hint?: string;
}

class Reader {
  readonly problems: Problem[] = [];
  constructor(
    readonly file: string,
    private readonly lc: LineCounter,
  ) {}
  line(node: unknown, fallback = 1): number {
    const r = (node as { range?: [number, number, number] } | null)?.range;
    return r ? this.lc.linePos(r[0]).line : fallback;
  }
  pos(node: unknown, fallback = 1): TemplatePosition {
    return { file: this.file, line: this.line(node, fallback) };
  }
  fail(node: unknown, message: string, hint?: string, fallback = 1): void {
    this.problems.push({ message, line: this.line(node, fallback), ...(hint ? { hint } : {}) });
  }
  /** A mapping with only `allowed` keys; returns key → value node. */
  map(node: unknown, what: string, allowed: string[], parentLine = 1): Map<string, { key: YamlNode; value: YamlNode | null }> | undefined {
    const out = new Map<string, { key: YamlNode; value: YamlNode | null }>();
    if (!isMap(node)) {
      this.fail(node, `${what} must be a mapping`, `write ${what} as "key: value" lines (allowed keys: ${allowed.join(', ')})`, parentLine);
      return undefined;
    }
    for (const pair of (node as YAMLMap).items) {
      const key = pair.key as YamlNode;
      const name = isScalar(key) ? String(key.value) : '';
      if (!allowed.includes(name)) {
        const close = allowed.find((a) => a.toLowerCase() === name.toLowerCase());
        this.fail(key, `unknown field ${JSON.stringify(name)} in ${what}`, close ? `did you mean ${JSON.stringify(close)}? (keys are case-sensitive)` : `allowed keys: ${allowed.join(', ')}`);
        continue;
      }
      out.set(name, { key, value: (pair.value as YamlNode | null) ?? null });
    }
    return out;
  }
  string(entry: { key: YamlNode; value: YamlNode | null } | undefined, what: string, hint?: string): string | undefined {
    if (!entry) return undefined;
    const v = entry.value;
    if (!isScalar(v) || typeof v.value !== 'string') {
      const shown = isScalar(v) ? ` (got ${JSON.stringify(v.value)})` : '';
      this.fail(v ?? entry.key, `${what} must be a string${shown}`, hint ?? 'quote the value', this.line(entry.key));
      return undefined;
    }
    return v.value;
  }
  oneOf<T extends string>(entry: { key: YamlNode; value: YamlNode | null } | undefined, what: string, values: readonly T[]): T | undefined {
    const s = this.string(entry, what, `use one of: ${values.join(', ')}`);
    if (s === undefined) return undefined;
    if (!values.includes(s as T)) {
      this.fail(entry!.value, `${what} must be one of ${values.join(', ')} (got ${JSON.stringify(s)})`, `use one of: ${values.join(', ')}`);
      return undefined;
    }
    return s as T;
  }
  seq(entry: { key: YamlNode; value: YamlNode | null } | undefined, what: string): YamlNode[] {
    if (!entry) return [];
    if (entry.value === null || (isScalar(entry.value) && entry.value.value === null)) return [];
    if (!isSeq(entry.value)) {
      this.fail(entry.value, `${what} must be a list`, 'write each item on its own line starting with "- "', this.line(entry.key));
      return [];
    }
    return entry.value.items as YamlNode[];
  }
}

/** Parses the YAML document of a template (as `parseTemplateDocument`), throwing one error tree. */
export function parseTemplate(text: string, file: string): CatalogTemplate {
  const lc = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  return parseTemplateDocument(doc, file, lc);
}

export function parseTemplateDocument(doc: Document, file: string, lc: LineCounter): CatalogTemplate {
  const r = new Reader(file, lc);
  for (const e of doc.errors) r.problems.push({ message: e.message.split('\n')[0]!, line: e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line, hint: 'fix the YAML syntax' });
  const tpl: CatalogTemplate = {
    schema: TEMPLATE_SCHEMA,
    file,
    package: { name: '' },
    channels: { archetypes: [...ARCHETYPES], streams: ['major'], defaultStream: 'major', skipRange: 'major', crossMajorUpgrades: false },
    versions: [],
    deprecations: { channels: [], bundles: [] },
  };
  if (doc.errors.length === 0) {
    const top = r.map(doc.contents, 'the template', ['schema', 'package', 'channels', 'versions', 'deprecations']);
    if (top) readTop(r, top, tpl);
  }
  if (r.problems.length) {
    const children = r.problems
      .sort((a, b) => a.line - b.line)
      .map((p) => validationError('template-invalid-field', p.message, { place: `${file}:${p.line}`, ...(p.hint ? { hint: p.hint } : {}) }));
    throw validationError('template-invalid', `invalid catalog template ${JSON.stringify(file)}`, { children, hint: 'see docs/catalog-template.md for the schema' });
  }
  return tpl;
}

function readTop(r: Reader, top: NonNullable<ReturnType<Reader['map']>>, tpl: CatalogTemplate): void {
  const schema = r.string(top.get('schema'), 'schema');
  if (!top.has('schema')) r.fail(null, `missing "schema"`, `start the template with "schema: ${TEMPLATE_SCHEMA}"`);
  else if (schema !== undefined && schema !== TEMPLATE_SCHEMA) r.fail(top.get('schema')!.value, `unknown schema ${JSON.stringify(schema)}`, `this olmpub reads "schema: ${TEMPLATE_SCHEMA}"`);

  // package
  const pkgEntry = top.get('package');
  if (!pkgEntry) r.fail(null, 'missing "package"', 'add "package: {name: <package name>}"');
  else {
    const pkg = r.map(pkgEntry.value, 'package', ['name', 'description', 'icon'], r.line(pkgEntry.key));
    if (pkg) {
      const name = r.string(pkg.get('name'), 'package.name');
      if (!pkg.has('name')) r.fail(pkgEntry.key, 'missing package.name', 'set package.name to the OLM package name (a DNS-1123 label)');
      else if (name !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
        r.fail(pkg.get('name')!.value, `package.name ${JSON.stringify(name)} is not a DNS-1123 label`, 'use lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters');
      } else if (name !== undefined && name.length > 63) r.fail(pkg.get('name')!.value, 'package.name is longer than 63 characters', 'shorten the package name');
      if (name) tpl.package.name = name;
      const description = r.string(pkg.get('description'), 'package.description', 'use a YAML block scalar ("description: |") for markdown');
      if (description !== undefined) tpl.package.description = description;
      const iconEntry = pkg.get('icon');
      if (iconEntry) {
        const icon = r.map(iconEntry.value, 'package.icon', ['path', 'mediatype'], r.line(iconEntry.key));
        if (icon) {
          const path = r.string(icon.get('path'), 'package.icon.path');
          if (!icon.has('path')) r.fail(iconEntry.key, 'missing package.icon.path', 'set path to the icon file, relative to the template');
          const explicit = r.string(icon.get('mediatype'), 'package.icon.mediatype');
          if (path !== undefined) {
            const mediatype = explicit ?? iconMediaType(path);
            if (!mediatype) r.fail(icon.get('path')!.value, `cannot tell the media type of icon ${JSON.stringify(path)}`, 'set package.icon.mediatype (image/svg+xml, image/png, image/jpeg or image/gif)');
            else tpl.package.icon = { path, mediatype, pos: r.pos(icon.get('path')!.value) };
          }
        }
      }
    }
  }

  // channels
  const chEntry = top.get('channels');
  if (chEntry && chEntry.value !== null) {
    const ch = r.map(chEntry.value, 'channels', ['archetypes', 'streams', 'default', 'defaultStream', 'skipRange', 'crossMajorUpgrades'], r.line(chEntry.key));
    if (ch) {
      if (ch.has('archetypes')) {
        const items = r.seq(ch.get('archetypes'), 'channels.archetypes');
        const list: Archetype[] = [];
        for (const it of items) {
          if (!isScalar(it) || !ARCHETYPES.includes(it.value as Archetype)) r.fail(it, `unknown archetype ${JSON.stringify(isScalar(it) ? it.value : null)}`, `archetypes are ${ARCHETYPES.join(', ')}`);
          else if (list.includes(it.value as Archetype)) r.fail(it, `archetype ${JSON.stringify(it.value)} is listed twice`, 'list each archetype once');
          else list.push(it.value as Archetype);
        }
        if (items.length && !list.length) r.fail(ch.get('archetypes')!.value, 'channels.archetypes is empty', `list at least one of ${ARCHETYPES.join(', ')}`);
        if (list.length) tpl.channels.archetypes = ARCHETYPES.filter((a) => list.includes(a));
      }
      const streams = r.oneOf(ch.get('streams'), 'channels.streams', ['major', 'minor', 'both'] as const);
      if (streams) tpl.channels.streams = streams === 'both' ? ['major', 'minor'] : [streams];
      const def = r.string(ch.get('default'), 'channels.default');
      if (def !== undefined) {
        tpl.channels.default = def;
        tpl.channels.defaultPos = r.pos(ch.get('default')!.value);
      }
      const ds = r.oneOf(ch.get('defaultStream'), 'channels.defaultStream', ['major', 'minor'] as const);
      if (ds) {
        if (!tpl.channels.streams.includes(ds)) r.fail(ch.get('defaultStream')!.value, `channels.defaultStream is ${ds} but no ${ds} channels are generated`, `set channels.streams to ${ds} or both, or drop defaultStream`);
        tpl.channels.defaultStream = ds;
      } else tpl.channels.defaultStream = tpl.channels.streams[0]!;
      const sr = r.oneOf(ch.get('skipRange'), 'channels.skipRange', ['major', 'minor', 'none'] as const);
      if (sr) tpl.channels.skipRange = sr;
      const cm = ch.get('crossMajorUpgrades');
      if (cm) {
        if (!isScalar(cm.value) || typeof cm.value.value !== 'boolean') r.fail(cm.value ?? cm.key, 'channels.crossMajorUpgrades must be true or false', 'write crossMajorUpgrades: true', r.line(cm.key));
        else tpl.channels.crossMajorUpgrades = cm.value.value;
      }
    }
  }

  // versions
  const seen = new Map<string, number>();
  const seenStripped = new Map<string, string>();
  for (const item of r.seq(top.get('versions'), 'versions')) {
    const v = r.map(item, 'a versions item', ['version', 'image', 'stage']);
    if (!v) continue;
    const line = r.line(item);
    const version = r.string(v.get('version'), 'version', 'quote the version ("1.2.0"), or YAML reads 1.2 as a number');
    if (!v.has('version')) r.fail(item, 'missing version', 'add "version: X.Y.Z"');
    const image = v.has('image') ? r.string(v.get('image'), 'image') : undefined;
    const stage = v.has('stage') ? r.oneOf(v.get('stage'), 'stage', ARCHETYPES) : 'candidate';
    if (version === undefined || (v.has('image') && image === undefined) || stage === undefined) continue;
    let parsed: blang.Version;
    try {
      parsed = blang.parse(version);
    } catch (err) {
      r.fail(v.get('version')!.value, `version ${JSON.stringify(version)} is not valid semver: ${(err as Error).message}`, version.startsWith('v') ? `drop the leading "v": ${version.slice(1)}` : 'write MAJOR.MINOR.PATCH, e.g. 1.2.0 or 1.3.0-rc.1');
      continue;
    }
    if (seen.has(version)) {
      r.fail(v.get('version')!.value, `version ${version} is listed twice (first at line ${seen.get(version)})`, 'list each released version once; promote it by changing its stage');
      continue;
    }
    const stripped = blang.format({ ...parsed, build: [] });
    if (seenStripped.has(stripped)) {
      r.fail(v.get('version')!.value, `versions ${seenStripped.get(stripped)} and ${version} differ only in build metadata, which cannot be ordered`, 'bump the patch version or use a prerelease instead of build metadata');
      continue;
    }
    seen.set(version, line);
    seenStripped.set(stripped, version);
    if (image !== undefined) {
      let ref: ReturnType<typeof parseNormalizedNamed> | undefined;
      try {
        ref = parseNormalizedNamed(image);
      } catch (err) {
        r.fail(v.get('image')!.value, `image ${JSON.stringify(image)} of version ${version} is not a valid image reference: ${(err as Error).message}`, 'use <registry>/<repo>@sha256:<64 hex digits>');
        continue;
      }
      if (!ref.digest) {
        r.fail(v.get('image')!.value, `image ${JSON.stringify(image)} of version ${version} is not pinned by digest`, 'push the bundle, then reference it as <registry>/<repo>@sha256:<digest> so the catalog cannot change under users');
        continue;
      }
    }
    if (!tpl.channels.archetypes.includes(stage)) {
      r.fail(v.get('stage')?.value ?? item, `version ${version} has stage ${stage}, which is not among channels.archetypes (${tpl.channels.archetypes.join(', ')})`, `add ${stage} to channels.archetypes or use one of them`);
      continue;
    }
    tpl.versions.push({ version, ...(image !== undefined ? { image } : {}), stage, pos: { file: r.file, line } });
  }
  if (!top.has('versions')) r.fail(null, 'missing "versions"', 'list the released versions: "versions: [{version: 1.0.0, image: ...@sha256:..., stage: candidate}]"');

  // deprecations
  const depEntry = top.get('deprecations');
  if (depEntry && depEntry.value !== null) {
    const dep = r.map(depEntry.value, 'deprecations', ['package', 'channels', 'bundles'], r.line(depEntry.key));
    if (dep) {
      const message = (m: Map<string, { key: YamlNode; value: YamlNode | null }>, node: YamlNode, what: string) => {
        const msg = r.string(m.get('message'), `${what} message`);
        if (!m.has('message')) r.fail(node, `missing message in ${what}`, 'say why, and what to use instead');
        else if (msg !== undefined && msg.trim() === '') r.fail(m.get('message')!.value, `empty message in ${what}`, 'say why, and what to use instead');
        return msg && msg.trim() ? msg : undefined;
      };
      const p = dep.get('package');
      if (p && p.value !== null) {
        const m = r.map(p.value, 'deprecations.package', ['message'], r.line(p.key));
        const msg = m && message(m, p.value!, 'deprecations.package');
        if (msg) tpl.deprecations.package = { message: msg, pos: r.pos(p.key) };
      }
      const chSeen = new Set<string>();
      for (const it of r.seq(dep.get('channels'), 'deprecations.channels')) {
        const m = r.map(it, 'a deprecations.channels item', ['name', 'message']);
        if (!m) continue;
        const name = r.string(m.get('name'), 'deprecated channel name');
        if (!m.has('name')) r.fail(it, 'missing name in deprecations.channels item', 'name the channel, e.g. "candidate-v0"');
        const msg = message(m, it, `deprecation of channel ${name ?? ''}`);
        if (name && chSeen.has(name)) r.fail(it, `channel ${name} is deprecated twice`, 'keep one entry');
        else if (name && msg) {
          chSeen.add(name);
          tpl.deprecations.channels.push({ name, message: msg, pos: r.pos(it) });
        }
      }
      const bSeen = new Set<string>();
      for (const it of r.seq(dep.get('bundles'), 'deprecations.bundles')) {
        const m = r.map(it, 'a deprecations.bundles item', ['version', 'message']);
        if (!m) continue;
        const version = r.string(m.get('version'), 'deprecated bundle version', 'quote the version');
        if (!m.has('version')) r.fail(it, 'missing version in deprecations.bundles item', 'name the deprecated version, e.g. "1.0.0"');
        const msg = message(m, it, `deprecation of version ${version ?? ''}`);
        if (version && !seen.has(version)) r.fail(m.get('version')!.value, `deprecated version ${version} is not among the template's versions`, `deprecate one of: ${[...seen.keys()].join(', ') || '(none)'}`);
        else if (version && bSeen.has(version)) r.fail(it, `version ${version} is deprecated twice`, 'keep one entry');
        else if (version && msg) {
          bSeen.add(version);
          tpl.deprecations.bundles.push({ version, message: msg, pos: r.pos(it) });
        }
      }
    }
  }
}
