/**
 * Template edits as pure functions over the template's text: promote a version, deprecate a bundle, a
 * channel or the package, add a released version. Each edit keeps comments and layout (the `yaml`
 * Document API), then re-parses, re-renders and re-validates the result, and refuses a change that
 * would leave an invalid catalog (a stranded version, more than one head, a vanished channel).
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

/** Applies one edit to the document; returns what changed (empty when nothing did). */
function applyEdit(doc: Document, tpl: CatalogTemplate, edit: TemplateEdit, notes: string[]): string[] {
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
        return [];
      }
      const item = findItem(seqAt(doc, ['versions']), 'version', edit.version)!;
      item.set('stage', edit.to);
      return [`version ${edit.version}: ${v.stage} → ${edit.to}`];
    }
    case 'deprecate-bundle': {
      if (!tpl.versions.some((x) => x.version === edit.version)) {
        throw usageError('unknown-version', `version ${edit.version} is not in the template`, { hint: `deprecate one of: ${tpl.versions.map((x) => x.version).join(', ') || '(none)'}` });
      }
      const existing = tpl.deprecations.bundles.find((d) => d.version === edit.version);
      if (existing?.message === edit.message) {
        notes.push(`version ${edit.version} is already deprecated with that message`);
        return [];
      }
      const seq = seqAt(doc, ['deprecations', 'bundles']);
      const item = findItem(seq, 'version', edit.version);
      if (item) item.set('message', edit.message);
      else seq.add(doc.createNode({ version: edit.version, message: edit.message }));
      return [existing ? `version ${edit.version}: deprecation message updated` : `version ${edit.version} deprecated`];
    }
    case 'deprecate-channel': {
      const existing = tpl.deprecations.channels.find((d) => d.name === edit.channel);
      if (existing?.message === edit.message) {
        notes.push(`channel ${edit.channel} is already deprecated with that message`);
        return [];
      }
      const seq = seqAt(doc, ['deprecations', 'channels']);
      const item = findItem(seq, 'name', edit.channel);
      if (item) item.set('message', edit.message);
      else seq.add(doc.createNode({ name: edit.channel, message: edit.message }));
      return [existing ? `channel ${edit.channel}: deprecation message updated` : `channel ${edit.channel} deprecated`];
    }
    case 'deprecate-package': {
      if (tpl.deprecations.package?.message === edit.message) {
        notes.push('the package is already deprecated with that message');
        return [];
      }
      const top = doc.contents as YAMLMap;
      let dep: unknown = top.get('deprecations', true);
      if (!isMap(dep)) {
        dep = doc.createNode({}) as YAMLMap;
        top.set('deprecations', dep);
      }
      (dep as YAMLMap).set('package', doc.createNode({ message: edit.message }));
      return [tpl.deprecations.package ? 'package: deprecation message updated' : `package ${tpl.package.name} deprecated`];
    }
    case 'add-version': {
      const parsed = blang.tryParse(edit.version);
      if (!parsed) throw usageError('bad-version', `version ${JSON.stringify(edit.version)} is not valid semver`, { hint: 'write MAJOR.MINOR.PATCH without a leading "v"' });
      const existing = tpl.versions.find((x) => x.version === edit.version);
      if (existing) {
        if (existing.image === edit.image) {
          notes.push(`version ${edit.version} is already in the template with that image`);
          return [];
        }
        throw validationError('version-exists', `version ${edit.version} is already released as ${existing.image}`, {
          place: `${tpl.file}:${existing.pos.line}`,
          hint: 'released versions are immutable: release a new version instead',
        });
      }
      const seq = seqAt(doc, ['versions']);
      const node = doc.createNode({ version: edit.version, image: edit.image, stage: edit.stage ?? 'candidate' });
      const idx = seq.items.findIndex((it) => {
        const v = blang.tryParse(String(scalarValue(isMap(it) ? (it as YAMLMap).get('version', true) : undefined)));
        return v !== undefined && blang.compare(v, parsed) > 0;
      });
      if (idx < 0) seq.items.push(node);
      else seq.items.splice(idx, 0, node);
      return [`version ${edit.version} added (${edit.stage ?? 'candidate'})`];
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
  const { doc } = parseDoc(text);
  const notes: string[] = [];
  const summary: string[] = [];
  let current = before;
  for (const edit of Array.isArray(edits) ? edits : [edits]) {
    summary.push(...applyEdit(doc, current, edit, notes));
    const { doc: again, lc } = parseDoc(doc.toString());
    current = parseTemplateDocument(again, file, lc);
  }
  const newText = summary.length ? doc.toString() : text;
  const template = summary.length ? parseTemplate(newText, file) : before;
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
