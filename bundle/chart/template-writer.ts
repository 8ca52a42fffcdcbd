/**
 * Writes a model object that holds chart references (bundle/manifests/knobs.ts) as a Helm template:
 * block-style YAML in which
 * - a string with `⟪expr⟫` marks becomes a double-quoted string with `{{ expr }}` actions;
 * - a RawValue becomes `{{ expr }}` unquoted (numbers, booleans);
 * - a BlockValue becomes `{{- toYaml expr | nindent N }}` (inside `{{- with }}` when empty means absent);
 * - a Guarded value gets `{{- if cond }}` … `{{- end }}` around its key or list item;
 * - a splice key becomes `{{- include "name" . | nindent N }}` or `{{- with expr }}{{- toYaml . | nindent N }}{{- end }}`.
 * Pure; the output is the same for the same object.
 */
import YAML from 'yaml';
import { BlockValue, Guarded, RawValue, TEMPLATE_CLOSE, TEMPLATE_OPEN, ValueCondition, hasTemplate, parseSpliceKey } from '../manifests/knobs.js';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Guarded) && !(v instanceof RawValue) && !(v instanceof BlockValue) && !(v instanceof ValueCondition);

/** A string with template marks as a double-quoted YAML string holding template actions. */
export function templatedString(s: string): string {
  let out = '';
  let rest = s;
  for (;;) {
    const open = rest.indexOf(TEMPLATE_OPEN);
    if (open < 0) break;
    const close = rest.indexOf(TEMPLATE_CLOSE, open);
    if (close < 0) throw new Error(`internal: unbalanced template mark in "${s}"`);
    out += JSON.stringify(rest.slice(0, open)).slice(1, -1) + `{{ ${rest.slice(open + 1, close)} }}`;
    rest = rest.slice(close + 1);
  }
  return `"${out}${JSON.stringify(rest).slice(1, -1)}"`;
}

/** A plain scalar as YAML (quoted when it would be read as something else). */
export function scalar(v: unknown): string {
  if (v instanceof RawValue) return `{{ ${v.expr} }}`;
  if (v instanceof ValueCondition) return `{{ ${v.expr} }}`;
  if (typeof v === 'string') {
    if (hasTemplate(v)) return templatedString(v);
    const y = YAML.stringify(v, { lineWidth: 0 }).trimEnd();
    return y.includes('\n') ? JSON.stringify(v) : y;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  throw new Error(`internal: ${typeof v} is not a scalar`);
}

const key = (k: string): string => (/^[A-Za-z0-9_][A-Za-z0-9_./-]*$/.test(k) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(k) ? k : JSON.stringify(k));
const pad = (n: number) => ' '.repeat(n);

function emitMap(map: Record<string, unknown>, indent: number, out: string[]): void {
  for (const [k, v] of Object.entries(map)) {
    const splice = parseSpliceKey(k);
    if (splice?.kind === 'include') out.push(`${pad(indent)}{{- include ${JSON.stringify(splice.what)} . | nindent ${indent} }}`);
    else if (splice?.kind === 'toYaml') out.push(`${pad(indent)}{{- with ${splice.what} }}{{- toYaml . | nindent ${indent} }}{{- end }}`);
    else emitEntry(k, v, indent, out);
  }
}

function emitEntry(k: string, v: unknown, indent: number, out: string[]): void {
  const p = pad(indent);
  if (v === undefined) return;
  if (v instanceof Guarded) {
    out.push(`${p}{{- if ${v.condition.expr} }}`);
    emitEntry(k, v.value, indent, out);
    out.push(`${p}{{- end }}`);
    return;
  }
  if (v instanceof BlockValue) {
    if (v.omitEmpty) out.push(`${p}{{- with ${v.expr} }}`, `${p}${key(k)}:`, `${p}  {{- toYaml . | nindent ${indent + 2} }}`, `${p}{{- end }}`);
    else out.push(`${p}${key(k)}:`, `${p}  {{- toYaml ${v.expr} | nindent ${indent + 2} }}`);
    return;
  }
  if (Array.isArray(v)) {
    if (v.length === 0) out.push(`${p}${key(k)}: []`);
    else {
      out.push(`${p}${key(k)}:`);
      emitSeq(v, indent + 2, out);
    }
    return;
  }
  if (isMap(v)) {
    if (Object.keys(v).length === 0) out.push(`${p}${key(k)}: {}`);
    else {
      out.push(`${p}${key(k)}:`);
      emitMap(v, indent + 2, out);
    }
    return;
  }
  out.push(`${p}${key(k)}: ${scalar(v)}`);
}

function emitSeq(items: unknown[], indent: number, out: string[]): void {
  const p = pad(indent);
  for (const item of items) {
    if (item === undefined) continue;
    if (item instanceof Guarded) {
      out.push(`${p}{{- if ${item.condition.expr} }}`);
      emitSeq([item.value], indent, out);
      out.push(`${p}{{- end }}`);
      continue;
    }
    if (item instanceof BlockValue) throw new Error('internal: a values block cannot be a list item');
    if (Array.isArray(item) || isMap(item)) {
      const empty = Array.isArray(item) ? item.length === 0 : Object.keys(item).length === 0;
      if (empty) {
        out.push(`${p}- ${Array.isArray(item) ? '[]' : '{}'}`);
        continue;
      }
      const lines: string[] = [];
      if (Array.isArray(item)) emitSeq(item, indent + 2, lines);
      else emitMap(item, indent + 2, lines);
      const first = lines[0]!;
      if (first.startsWith(`${p}  `) && !first.slice(indent + 2).startsWith('{{')) {
        out.push(`${p}- ${first.slice(indent + 2)}`, ...lines.slice(1));
      } else out.push(`${p}-`, ...lines);
      continue;
    }
    out.push(`${p}- ${scalar(item)}`);
  }
}

/** One object as a template document; with a condition, the whole document is guarded by it. */
export function objectTemplate(object: Record<string, unknown>, condition?: ValueCondition | boolean, header?: string): string {
  const lines: string[] = [];
  if (condition instanceof ValueCondition) lines.push(`{{- if ${condition.expr} }}`);
  if (header) lines.push(...header.split('\n').map((l) => `# ${l}`.trimEnd()));
  emitMap(object, 0, lines);
  if (condition instanceof ValueCondition) lines.push('{{- end }}');
  return lines.join('\n') + '\n';
}
