/**
 * One FBC file as opm reads it (k8s.io/apimachinery `YAMLOrJSONDecoder`): a stream of concatenated JSON
 * values, or of YAML documents split at lines that start with `---`, or one JSON object followed by YAML.
 * Every object and array is tagged with the line it starts on, so errors can name `file:line`.
 */
import YAML, { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node as YamlNode } from 'yaml';

export interface StreamDoc {
  /** The decoded value, with JSON semantics (YAML 1.1 scalars resolved the way go-yaml v2 resolves them). */
  value: unknown;
  /** 1-based line where the document's content starts. */
  line: number;
}

export interface StreamResult {
  docs: StreamDoc[];
  /** The first error; opm stops reading the file (and fails) there. */
  error?: { line: number; message: string };
}

/** Line (1-based) of an object or array produced by the parsers here. */
const LINES = new WeakMap<object, number>();

export function lineOf(value: unknown): number | undefined {
  return value && typeof value === 'object' ? LINES.get(value) : undefined;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

// ---------------------------------------------------------------------------------------------
// JSON

class JSONSyntax extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const isWS = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/** A strict JSON parser (RFC 8259, Go's encoding/json grammar) that records where objects start. */
class JSONParser {
  pos = 0;
  constructor(
    private readonly text: string,
    private readonly starts: number[],
  ) {}

  private fail(what: string): never {
    const c = this.text[this.pos];
    throw new JSONSyntax(c === undefined ? `unexpected end of JSON input` : `invalid character ${JSON.stringify(c)} ${what}`, this.pos);
  }

  skipWS(): void {
    while (isWS(this.text[this.pos])) this.pos++;
  }

  value(): unknown {
    this.skipWS();
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [lit, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(lit, this.pos)) {
        this.pos += lit.length;
        return v;
      }
    }
    return this.fail('looking for beginning of value');
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    LINES.set(out, lineAt(this.starts, this.pos));
    this.pos++;
    this.skipWS();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWS();
      if (this.text[this.pos] !== '"') this.fail('looking for beginning of object key string');
      const key = this.string();
      this.skipWS();
      if (this.text[this.pos] !== ':') this.fail('after object key');
      this.pos++;
      const v = this.value();
      // Go keeps the last of repeated keys.
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      this.skipWS();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      this.fail('after object key:value pair');
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    LINES.set(out, lineAt(this.starts, this.pos));
    this.pos++;
    this.skipWS();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.skipWS();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      this.fail('after array element');
    }
  }

  private string(): string {
    this.pos++;
    let out = '';
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) this.fail('in string literal');
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c === '\\') {
        const e = this.text[this.pos + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          this.pos += 2;
          continue;
        }
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.pos + 2, this.pos + 6))) {
          out += String.fromCharCode(Number.parseInt(this.text.slice(this.pos + 2, this.pos + 6), 16));
          this.pos += 6;
          continue;
        }
        this.pos++;
        this.fail('in string escape code');
      }
      if (c.charCodeAt(0) < 0x20) this.fail('in string literal');
      out += c;
      this.pos++;
    }
  }

  private number(): number {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!m || m[0] === '-') {
      if (this.text[this.pos] === '-') this.pos++;
      this.fail('in numeric literal');
    }
    this.pos += m[0].length;
    return Number(m[0]);
  }
}

// ---------------------------------------------------------------------------------------------
// YAML

/** go-yaml v2 (YAML 1.1) resolution: booleans yes/no/on/off, 0777 octal; no timestamps, no sexagesimal. */
const YAML_OPTIONS = {
  version: '1.1' as const,
  merge: true,
  uniqueKeys: true,
  customTags: (tags: YAML.Tags) =>
    tags.filter((t) => {
      const tag = String((t as { tag?: string }).tag ?? '');
      const fmt = String((t as { format?: string }).format ?? '');
      return !tag.endsWith(':timestamp') && fmt !== 'TIME';
    }),
};

/** Converts a YAML node into a JSON value the way sigs.k8s.io/yaml does (keys become strings). */
function yamlToJSON(node: YamlNode | null | undefined, starts: number[], base: number, anchors: Map<string, unknown>): unknown {
  if (!node) return null;
  if (isAlias(node)) {
    if (!anchors.has(node.source)) throw new Error(`unknown anchor '${node.source}' referenced`);
    return anchors.get(node.source);
  }
  let out: unknown;
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'bigint') out = Number(v);
    else if (typeof v === 'number') out = Number.isFinite(v) ? v : String(v);
    else if (v instanceof Uint8Array) out = node.source ?? '';
    else out = v ?? null;
  } else if (isMap(node)) {
    const obj: Record<string, unknown> = {};
    LINES.set(obj, lineAt(starts, base + (node.range?.[0] ?? 0)));
    for (const item of node.items) {
      if (!isPair(item)) continue;
      const keyNode = item.key as YamlNode | null;
      const keyVal = isScalar(keyNode) ? keyNode.value : keyNode ? yamlToJSON(keyNode, starts, base, anchors) : null;
      if (isScalar(keyNode) && keyNode.value === '<<' && (keyNode.source === '<<' || keyNode.source === undefined)) {
        // Merge key: copy what the merged map(s) define and the current map does not.
        const merged = yamlToJSON(item.value as YamlNode, starts, base, anchors);
        const sources = Array.isArray(merged) ? merged : [merged];
        for (const src of sources) {
          if (src && typeof src === 'object' && !Array.isArray(src)) {
            for (const [k, v] of Object.entries(src)) if (!(k in obj)) obj[k] = v;
          }
        }
        continue;
      }
      const key = keyVal === null || keyVal === undefined ? 'null' : typeof keyVal === 'object' ? JSON.stringify(keyVal) : String(keyVal);
      Object.defineProperty(obj, key, { value: yamlToJSON(item.value as YamlNode, starts, base, anchors), enumerable: true, writable: true, configurable: true });
    }
    out = obj;
  } else if (isSeq(node)) {
    const arr: unknown[] = [];
    LINES.set(arr, lineAt(starts, base + (node.range?.[0] ?? 0)));
    for (const item of node.items) arr.push(yamlToJSON(item as YamlNode, starts, base, anchors));
    out = arr;
  } else {
    out = null;
  }
  const anchor = (node as { anchor?: string }).anchor;
  if (anchor) anchors.set(anchor, out);
  return out;
}

function parseYAMLDoc(text: string, starts: number[], base: number): { value: unknown; line: number } {
  const lc = new LineCounter();
  const doc = YAML.parseDocument(text, { ...YAML_OPTIONS, lineCounter: lc, keepSourceTokens: false });
  const err = doc.errors[0];
  if (err) {
    const e = new Error(`yaml: ${err.message.split('\n')[0]}`) as Error & { offset?: number };
    e.offset = base + (err.pos?.[0] ?? 0);
    throw e;
  }
  const contents = doc.contents as YamlNode | null;
  const value = yamlToJSON(contents, starts, base, new Map());
  let firstContent = base;
  if (contents?.range) firstContent = base + contents.range[0];
  else {
    // A document with no content (comments only): point at its first non-blank line.
    const m = /\S/.exec(text);
    firstContent = base + (m ? m.index : 0);
  }
  return { value, line: lineAt(starts, firstContent) };
}

/** k8s YAMLReader: lines starting with `---` separate documents; only spaces or a comment may follow. */
function splitYAMLDocuments(text: string, from: number): { docs: { start: number; text: string }[]; error?: { offset: number; message: string } } {
  const docs: { start: number; text: string }[] = [];
  let bufStart = -1;
  let pos = from;
  const flush = (end: number) => {
    if (bufStart >= 0 && end > bufStart) docs.push({ start: bufStart, text: text.slice(bufStart, end) });
    bufStart = -1;
  };
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl === -1 ? text.length : nl + 1;
    const line = text.slice(pos, end);
    if (line.startsWith('---')) {
      const trimmed = line.slice(3).trim();
      if (trimmed.length > 0 && trimmed[0] !== '#') {
        flush(pos);
        return { docs, error: { offset: pos, message: `invalid Yaml document separator: ${trimmed}` } };
      }
      flush(pos);
    } else if (bufStart < 0) {
      bufStart = pos;
    }
    pos = end;
  }
  flush(text.length);
  return { docs };
}

// ---------------------------------------------------------------------------------------------

/**
 * Splits one file into documents the way opm's decoder does: JSON when the first non-space byte is
 * `{` (after at most one JSON value a failure switches to YAML for the rest), YAML otherwise.
 */
export function parseStream(text: string): StreamResult {
  const starts = lineStarts(text);
  const docs: StreamDoc[] = [];
  let pos = 0;
  const firstNonSpace = /\S/.exec(text);
  if (firstNonSpace && text[firstNonSpace.index] === '{') {
    const p = new JSONParser(text, starts);
    let firstErr: { line: number; message: string } | undefined;
    for (;;) {
      p.skipWS();
      if (p.pos >= text.length) return { docs };
      const startPos = p.pos;
      try {
        const value = p.value();
        docs.push({ value, line: lineAt(starts, startPos) });
        pos = p.pos;
      } catch (err) {
        const e = err as JSONSyntax;
        firstErr = { line: lineAt(starts, e.offset ?? startPos), message: e.message };
        if (docs.length > 1) return { docs, error: firstErr };
        // Ambiguous stream: go back to the end of the last value, eat whitespace up to a newline, read YAML.
        p.pos = pos;
        while (pos < text.length && /\s/.test(text[pos]!)) {
          pos++;
          if (text[pos - 1] === '\n') break;
        }
        break;
      }
    }
    const rest = readYAML(text, pos, starts);
    docs.push(...rest.docs);
    if (rest.error) return { docs, error: firstErr ?? rest.error };
    return { docs };
  }
  const res = readYAML(text, 0, starts);
  return res.error ? { docs: res.docs, error: res.error } : { docs: res.docs };
}

function readYAML(text: string, from: number, starts: number[]): StreamResult {
  const docs: StreamDoc[] = [];
  const split = splitYAMLDocuments(text, from);
  for (const d of split.docs) {
    try {
      docs.push(parseYAMLDoc(d.text, starts, d.start));
    } catch (err) {
      const e = err as Error & { offset?: number };
      return { docs, error: { line: lineAt(starts, e.offset ?? d.start), message: `error converting YAML to JSON: ${e.message}` } };
    }
  }
  if (split.error) return { docs, error: { line: lineAt(starts, split.error.offset), message: split.error.message } };
  return { docs };
}
