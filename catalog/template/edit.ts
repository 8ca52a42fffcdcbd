/**
 * Template edits as pure functions over the template's text: promote a version, deprecate a bundle, a
 * channel or the package, add a released version. Each edit changes only the lines concerned (found with
 * the `yaml` CST ranges), so comments and layout stay as written; for layouts it does not know (flow
 * style, multi-line values) it falls back to the `yaml` Document API, which keeps comments but may
 * re-indent. Then it re-parses, re-renders and re-validates the result, and refuses a change that would
 * leave an invalid catalog (a stranded version, more than one head, a vanished channel).
 */
import YAML, { isMap, isScalar, isSeq, LineCounter, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { usageError, validationError } from '../../lib/errors.js';
import * as blang from '../semver/blang.js';
import { validateCatalog, type ValidationReport } from '../validate/validate.js';
import { archetypeRank, parseTemplate, parseTemplateDocument, type Archetype, type CatalogTemplate } from './template.js';
import { renderTemplate, type RenderOptions, type RenderResult } from './render.js';

export type TemplateEdit =
  | { kind: 'promote'; version: string; to: Archetype }
  | { kind: 'deprecate-bundle'; version: string; message: string }
  | { kind: 'deprecate-channel'; channel: string; message: string }
  | { kind: 'deprecate-package'; message: string }
  | { kind: 'add-version'; version: string; image: string; stage?: Archetype };

export interface EditResult {
  /** The template's new text (identical to the input when nothing changed). */
  text: string;
  changed: boolean;
  template: CatalogTemplate;
  rendered: RenderResult;
  report: ValidationReport;
  /** What changed, for people: one line each. */
  summary: string[];
  /** Things worth knowing that do not block the edit. */
  notes: string[];
}

function parseDoc(text: string): { doc: Document; lc: LineCounter } {
  const lc = new LineCounter();
  return { doc: YAML.parseDocument(text, { lineCounter: lc, uniqueKeys: true }), lc };
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

// ---- Targeted text edits: change only the lines concerned, so layout and comments stay as written. ----

type Splice = { at: number; del: number; insert: string };

const rangeOf = (node: unknown): [number, number] | undefined => {
  const r = (node as { range?: [number, number, number] } | null)?.range;
  return r ? [r[0], r[1]] : undefined;
};

/** Column of `offset` in its line. */
function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** Offset just after the line holding the last non-space character before `end`. */
function afterLine(text: string, end: number): number {
  let pos = end;
  while (pos > 0 && /\s/.test(text[pos - 1]!)) pos--;
  const nl = text.indexOf('\n', pos);
  return nl === -1 ? text.length : nl + 1;
}

/** A scalar written the way YAML would, on one line; undefined when it needs several. */
function inlineScalar(value: string): string | undefined {
  if (value.includes('\n')) return undefined;
  const out = YAML.stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
  return out.includes('\n') ? undefined : out;
}

/** Block YAML for `value`, indented by `indent` spaces; `dash` makes it a sequence item. */
function block(value: Record<string, unknown>, indent: number, dash = false): string | undefined {
  const lines = YAML.stringify(value, { lineWidth: 0 }).replace(/\n$/, '').split('\n');
  if (Object.values(value).some((v) => typeof v === 'string' && v.includes('\n'))) return undefined;
  const pad = ' '.repeat(indent);
  return lines.map((l, i) => (dash ? (i === 0 ? `${pad}- ${l}` : `${pad}  ${l}`) : `${pad}${l}`)).join('\n') + '\n';
}

const isBlockMap = (n: unknown): n is YAMLMap => isMap(n) && !(n as YAMLMap).flow && !!rangeOf(n);
const isBlockSeq = (n: unknown): n is YAMLSeq => isSeq(n) && !(n as YAMLSeq).flow && !!rangeOf(n) && (n as YAMLSeq).items.length > 0;

/** Column of the `-` of a block sequence's first item. */
function dashColumn(text: string, seq: YAMLSeq): number | undefined {
  const first = rangeOf(seq.items[0]);
  if (!first) return undefined;
  const lineStart = text.lastIndexOf('\n', first[0] - 1) + 1;
  const m = /^(\s*)-\s/.exec(text.slice(lineStart, first[0] + 1));
  return m ? m[1]!.length : undefined;
}

/** Sets `key` of a block mapping to a scalar: replaces the value in place, or adds a line after the mapping. */
function setInMap(text: string, map: YAMLMap, key: string, value: string): Splice | undefined {
  const pair = map.items.find((p) => scalarValue(p.key) === key);
  const inline = inlineScalar(value);
  if (inline === undefined) return undefined;
  if (pair) {
    const r = rangeOf(pair.value);
    if (!r || !isScalar(pair.value)) return undefined;
    return { at: r[0], del: r[1] - r[0], insert: inline };
  }
  const firstKey = rangeOf(map.items[0]?.key);
  const end = rangeOf(map);
  if (!firstKey || !end) return undefined;
  return { at: afterLine(text, end[1]), del: 0, insert: `${' '.repeat(columnOf(text, firstKey[0]))}${key}: ${inline}\n` };
}

/** Adds an item to a block sequence, after `after` (an item) or at the end. */
function addToSeq(text: string, seq: YAMLSeq, item: Record<string, unknown>, before?: unknown): Splice | undefined {
  const col = dashColumn(text, seq);
  const body = col === undefined ? undefined : block(item, col, true);
  if (body === undefined) return undefined;
  if (before !== undefined) {
    const r = rangeOf(before);
    if (!r) return undefined;
    return { at: text.lastIndexOf('\n', r[0] - 1) + 1, del: 0, insert: body };
  }
  return { at: afterLine(text, rangeOf(seq)![1]), del: 0, insert: body };
}

/** Adds `key:` with a block value to a block mapping (or to the top level). */
function addBlockToMap(text: string, map: YAMLMap, key: string, value: unknown): Splice | undefined {
  const firstKey = rangeOf(map.items[0]?.key);
  const end = rangeOf(map);
  if (!firstKey || !end) return undefined;
  const col = columnOf(text, firstKey[0]);
  const body = YAML.stringify({ [key]: value }, { lineWidth: 0 });
  if (/\|/.test(body)) return undefined;
  const at = afterLine(text, end[1]);
  const prefix = at === text.length && !text.endsWith('\n') ? '\n' : '';
  return { at, del: 0, insert: prefix + body.replace(/\n$/, '').split('\n').map((l) => ' '.repeat(col) + l).join('\n') + '\n' };
}

const applySplice = (text: string, s: Splice) => text.slice(0, s.at) + s.insert + text.slice(s.at + s.del);

// ---- Document edits: the fallback when the layout is not one the targeted edits understand (flow style, multi-line values). ----

function seqAt(doc: Document, path: string[]): YAMLSeq {
  let parent: YAMLMap = doc.contents as YAMLMap;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    let child: unknown = parent.get(key, true);
    const last = i === path.length - 1;
    if (last) {
      if (!isSeq(child)) {
        child = doc.createNode([]) as YAMLSeq;
        parent.set(key, child);
      }
      return child as YAMLSeq;
    }
    if (!isMap(child)) {
      child = doc.createNode({}) as YAMLMap;
      parent.set(key, child);
    }
    parent = child as YAMLMap;
  }
  throw new Error('unreachable');
}

function findItem(seq: YAMLSeq, key: string, value: string): YAMLMap | undefined {
  return seq.items.find((it) => isMap(it) && String(scalarValue((it as YAMLMap).get(key, true))) === value) as YAMLMap | undefined;
}

/** Finds `deprecations.<kind>` as a block sequence, or says how to add it. */
function deprecationTarget(text: string, doc: Document, kind: 'bundles' | 'channels', item: Record<string, unknown>, matchKey: string, matchValue: string): Splice | undefined {
  const top = doc.contents as YAMLMap;
  const dep = top.get('deprecations', true);
  if (dep === undefined || (isScalar(dep) && dep.value === null && !top.items.find((p) => scalarValue(p.key) === 'deprecations'))) {
    return addBlockToMap(text, top, 'deprecations', { [kind]: [item] });
  }
  if (!isBlockMap(dep)) return undefined;
  const seq = dep.get(kind, true);
  if (seq === undefined) return addBlockToMap(text, dep, kind, [item]);
  if (!isBlockSeq(seq)) return undefined;
  const existing = findItem(seq, matchKey, matchValue);
  if (existing) return isBlockMap(existing) ? setInMap(text, existing, 'message', String(item.message)) : undefined;
  return addToSeq(text, seq, item);
}

/** Applies one edit to the text; returns the new text and what changed (empty when nothing did). */
function applyEdit(text: string, tpl: CatalogTemplate, edit: TemplateEdit, notes: string[]): { text: string; summary: string[] } {
  const { doc } = parseDoc(text);
  const done = (splice: Splice | undefined, fallback: () => void, summary: string[]) => {
    if (splice) return { text: applySplice(text, splice), summary };
    fallback();
    return { text: doc.toString(), summary };
  };
  /** Adds `{<key>: value, message}` to deprecations.<list>, or updates the message of the entry already there. */
  const deprecateEntry = (list: 'bundles' | 'channels', key: string, value: string, what: string, existing: { message: string } | undefined, message: string) => {
    if (existing?.message === message) {
      notes.push(`${what} is already deprecated with that message`);
      return { text, summary: [] };
    }
    return done(
      deprecationTarget(text, doc, list, { [key]: value, message }, key, value),
      () => {
        const seq = seqAt(doc, ['deprecations', list]);
        const item = findItem(seq, key, value);
        if (item) item.set('message', message);
        else seq.add(doc.createNode({ [key]: value, message }));
      },
      [existing ? `${what}: deprecation message updated` : `${what} deprecated`],
    );
  };
  switch (edit.kind) {
    case 'promote': {
      const v = tpl.versions.find((x) => x.version === edit.version);
      if (!v) throw usageError('unknown-version', `version ${edit.version} is not in the template`, { hint: `promote one of: ${tpl.versions.map((x) => x.version).join(', ') || '(none)'}` });
      if (archetypeRank(v.stage) > archetypeRank(edit.to)) {
        throw validationError('demotion-refused', `version ${edit.version} is in ${v.stage}; moving it back to ${edit.to} would strand users subscribed to ${v.stage}`, {
          place: `${tpl.file}:${v.pos.line}`,
          hint: `deprecate it instead: olmpub catalog deprecate --bundle ${edit.version} --message "..."`,
        });
      }
      if (v.stage === edit.to) {
        notes.push(`version ${edit.version} is already in ${edit.to}`);
        return { text, summary: [] };
      }
      const item = findItem(seqAt(doc, ['versions']), 'version', edit.version)!;
      return done(isBlockMap(item) ? setInMap(text, item, 'stage', edit.to) : undefined, () => item.set('stage', edit.to), [`version ${edit.version}: ${v.stage} → ${edit.to}`]);
    }
    case 'deprecate-bundle': {
      if (!tpl.versions.some((x) => x.version === edit.version)) {
        throw usageError('unknown-version', `version ${edit.version} is not in the template`, { hint: `deprecate one of: ${tpl.versions.map((x) => x.version).join(', ') || '(none)'}` });
      }
      const existing = tpl.deprecations.bundles.find((d) => d.version === edit.version);
      return deprecateEntry('bundles', 'version', edit.version, `version ${edit.version}`, existing, edit.message);
    }
    case 'deprecate-channel': {
      const existing = tpl.deprecations.channels.find((d) => d.name === edit.channel);
      return deprecateEntry('channels', 'name', edit.channel, `channel ${edit.channel}`, existing, edit.message);
    }
    case 'deprecate-package': {
      if (tpl.deprecations.package?.message === edit.message) {
        notes.push('the package is already deprecated with that message');
        return { text, summary: [] };
      }
      const top = doc.contents as YAMLMap;
      const dep = top.get('deprecations', true);
      let splice: Splice | undefined;
      if (dep === undefined) splice = addBlockToMap(text, top, 'deprecations', { package: { message: edit.message } });
      else if (isBlockMap(dep)) {
        const pkg = dep.get('package', true);
        if (pkg === undefined) splice = addBlockToMap(text, dep, 'package', { message: edit.message });
        else if (isBlockMap(pkg)) splice = setInMap(text, pkg, 'message', edit.message);
      }
      return done(
        splice,
        () => {
          let d: unknown = top.get('deprecations', true);
          if (!isMap(d)) {
            d = doc.createNode({}) as YAMLMap;
            top.set('deprecations', d);
          }
          (d as YAMLMap).set('package', doc.createNode({ message: edit.message }));
        },
        [tpl.deprecations.package ? 'package: deprecation message updated' : `package ${tpl.package.name} deprecated`],
      );
    }
    case 'add-version': {
      const parsed = blang.tryParse(edit.version);
      if (!parsed) throw usageError('bad-version', `version ${JSON.stringify(edit.version)} is not valid semver`, { hint: 'write MAJOR.MINOR.PATCH without a leading "v"' });
      const existing = tpl.versions.find((x) => x.version === edit.version);
      if (existing) {
        if (existing.image === edit.image) {
          notes.push(`version ${edit.version} is already in the template with that image`);
          return { text, summary: [] };
        }
        throw validationError('version-exists', `version ${edit.version} is already released as ${existing.image}`, {
          place: `${tpl.file}:${existing.pos.line}`,
          hint: 'released versions are immutable: release a new version instead',
        });
      }
      const item = { version: edit.version, image: edit.image, stage: edit.stage ?? 'candidate' };
      const seq = (doc.contents as YAMLMap).get('versions', true);
      const later = isSeq(seq)
        ? seq.items.find((it) => {
            const v = blang.tryParse(String(scalarValue(isMap(it) ? (it as YAMLMap).get('version', true) : undefined)));
            return v !== undefined && blang.compare(v, parsed) > 0;
          })
        : undefined;
      return done(
        isBlockSeq(seq) ? addToSeq(text, seq, item, later) : undefined,
        () => {
          const s = seqAt(doc, ['versions']);
          const node = doc.createNode(item);
          const idx = later ? s.items.indexOf(later) : -1;
          if (idx < 0) s.items.push(node);
          else s.items.splice(idx, 0, node);
        },
        [`version ${edit.version} added (${edit.stage ?? 'candidate'})`],
      );
    }
  }
}

/**
 * Applies `edits` to the template text; pure. Throws an OlmpubError when an edit does not apply or when
 * the result would not be a valid catalog; nothing is written in that case.
 */
export function editTemplate(text: string, file: string, edits: TemplateEdit | TemplateEdit[], options: RenderOptions = {}): EditResult {
  const before = parseTemplate(text, file);
  const renderOpts: RenderOptions = { allowMissingBundles: true, ...options };
  const beforeRender = renderTemplate(before, renderOpts);
  const notes: string[] = [];
  const summary: string[] = [];
  let current = before;
  let newText = text;
  for (const edit of Array.isArray(edits) ? edits : [edits]) {
    const step = applyEdit(newText, current, edit, notes);
    summary.push(...step.summary);
    newText = step.text;
    const { doc: again, lc } = parseDoc(newText);
    current = parseTemplateDocument(again, file, lc);
  }
  if (!summary.length) newText = text;
  const template = current;
  const rendered = renderTemplate(template, renderOpts);
  const report = validateCatalog(rendered.config, { name: file });
  if (!report.passed) {
    throw validationError('edit-refused', `refusing the change: the rendered catalog would be invalid`, {
      children: [report.error!],
      hint: 'the template was not changed',
    });
  }
  // A channel that existed must still exist, with every version it had (users subscribed to it).
  const lost: string[] = [];
  for (const ch of beforeRender.channels) {
    const after = rendered.channels.find((c) => c.name === ch.name);
    if (!after) lost.push(`channel ${ch.name} would disappear`);
    else for (const e of ch.entries) if (!after.entries.some((x) => x.version === e.version)) lost.push(`version ${e.version} would leave channel ${ch.name}`);
  }
  if (lost.length) {
    throw validationError('edit-refused', 'refusing the change: it would strand users', {
      children: lost.map((l) => validationError('edit-strands', l, { hint: 'deprecate instead of removing' })),
      hint: 'the template was not changed',
    });
  }
  // Heads that moved, and deprecation of what users get by default, are worth a note.
  for (const ch of rendered.channels) {
    const was = beforeRender.channels.find((c) => c.name === ch.name);
    if (!was) summary.length && notes.push(`new channel ${ch.name} (head ${ch.head})`);
    else if (was.head !== ch.head) notes.push(`channel ${ch.name}: head ${was.head} → ${ch.head}`);
  }
  if (rendered.defaultChannel !== beforeRender.defaultChannel) notes.push(`default channel: ${beforeRender.defaultChannel} → ${rendered.defaultChannel}`);
  const defaultPlan = rendered.channels.find((c) => c.name === rendered.defaultChannel);
  if (template.deprecations.channels.some((d) => d.name === rendered.defaultChannel)) notes.push(`the default channel ${rendered.defaultChannel} is deprecated: set channels.default to a supported channel`);
  if (defaultPlan && template.deprecations.bundles.some((d) => d.version === defaultPlan.head)) notes.push(`the head of the default channel (${defaultPlan.head}) is deprecated: new installs still get it`);
  return { text: newText, changed: summary.length > 0, template, rendered, report, summary, notes };
}
