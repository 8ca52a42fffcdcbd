/**
 * Turns a decoded JSON value into the typed wire model with Go `encoding/json` semantics, which is how
 * opm reads blobs: field names match case-insensitively, `null` leaves the zero value, a value of the
 * wrong JSON type is an error, unknown fields are ignored.
 */
import type {
  Bundle,
  Channel,
  ChannelEntry,
  Deprecation,
  DeprecationEntry,
  Icon,
  Package,
  Position,
  Property,
  RelatedImage,
} from './types.js';
import { lineOf } from './stream.js';

export class DecodeError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/** Unicode simple case folding, enough for Go's EqualFold on JSON keys (Kelvin sign, long s). */
function foldKey(s: string): string {
  return s.toLowerCase().replaceAll('\u017f', 's').replaceAll('\u212a', 'k').replaceAll('ß', 'ss');
}

/** A value's JSON type as Go's unmarshal errors name it. */
export const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A field of a decoded object, found as Go finds it: keys are visited in sorted order and each
 * case-insensitive match overwrites. Undefined when `obj` is not an object.
 */
export function getField(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  const folded = foldKey(name);
  let found: unknown = undefined;
  for (const k of Object.keys(obj).sort()) if (foldKey(k) === folded) found = obj[k];
  return found;
}

class Ctx {
  constructor(
    readonly struct: string,
    readonly path: string,
  ) {}
  typeError(v: unknown, goType: string, at: string): never {
    throw new DecodeError(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${this.struct}.${at} of type ${goType}`, lineOf(v));
  }
}

function str(obj: Record<string, unknown>, name: string, ctx: Ctx): string {
  const v = getField(obj, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') ctx.typeError(v, 'string', ctx.path ? `${ctx.path}.${name}` : name);
  return v;
}

function optStr(obj: Record<string, unknown>, name: string, ctx: Ctx): string | undefined {
  const s = str(obj, name, ctx);
  return s === '' ? undefined : s;
}

function strList(obj: Record<string, unknown>, name: string, ctx: Ctx): string[] | undefined {
  const v = getField(obj, name);
  if (v === undefined || v === null) return undefined;
  const at = ctx.path ? `${ctx.path}.${name}` : name;
  if (!Array.isArray(v)) ctx.typeError(v, '[]string', at);
  return v.map((x) => {
    if (x === null) return '';
    if (typeof x !== 'string') ctx.typeError(x, 'string', at);
    return x;
  });
}

function list<T>(obj: Record<string, unknown>, name: string, ctx: Ctx, goType: string, each: (v: Record<string, unknown>, at: string) => T): T[] | undefined {
  const v = getField(obj, name);
  if (v === undefined || v === null) return undefined;
  const at = ctx.path ? `${ctx.path}.${name}` : name;
  if (!Array.isArray(v)) ctx.typeError(v, `[]${goType}`, at);
  return v.map((item) => {
    if (item === null) return each({}, at);
    if (!isObject(item)) ctx.typeError(item, goType, at);
    return each(item, at);
  });
}

function pos(file: string, v: unknown, fallback: number): Position {
  return { file, line: lineOf(v) ?? fallback };
}

function properties(obj: Record<string, unknown>, ctx: Ctx, file: string, line: number): Property[] | undefined {
  return list(obj, 'properties', ctx, 'property.Property', (p, at) => {
    const c: Ctx = new Ctx('Property', at);
    const type = str(p, 'type', c);
    const raw = getField(p, 'value');
    return { type, value: raw, pos: pos(file, p, line) };
  });
}

/** Go decodes `[]byte` from standard base64 (padding required). */
function base64Error(s: string): string | undefined {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) {
    const bad = clean.search(/[^A-Za-z0-9+/=]/);
    return `illegal base64 data at input byte ${bad >= 0 ? bad : clean.length}`;
  }
  return undefined;
}

export function decodePackage(blob: Record<string, unknown>, file: string, line: number): Package {
  const c: Ctx = new Ctx('Package', '');
  const out: Package = {
    schema: str(blob, 'schema', c),
    name: str(blob, 'name', c),
    defaultChannel: str(blob, 'defaultChannel', c),
    pos: { file, line },
  };
  const icon = getField(blob, 'icon');
  if (icon !== undefined && icon !== null) {
    if (!isObject(icon)) c.typeError(icon, 'declcfg.Icon', 'icon');
    const ic: Ctx = new Ctx('Icon', 'icon');
    const data = getField(icon, 'base64data');
    let base64data = '';
    if (data !== undefined && data !== null) {
      if (typeof data !== 'string') ic.typeError(data, '[]uint8', 'icon.base64data');
      const bad = base64Error(data);
      if (bad) throw new DecodeError(bad, lineOf(icon));
      base64data = data;
    }
    out.icon = { base64data, mediatype: str(icon, 'mediatype', ic) } satisfies Icon;
  }
  const description = optStr(blob, 'description', c);
  if (description !== undefined) out.description = description;
  const props = properties(blob, c, file, line);
  if (props) out.properties = props;
  return out;
}

export function decodeChannel(blob: Record<string, unknown>, file: string, line: number): Channel {
  const c: Ctx = new Ctx('Channel', '');
  const entries =
    list(blob, 'entries', c, 'declcfg.ChannelEntry', (e, at) => {
      const ec: Ctx = new Ctx('ChannelEntry', at);
      const entry: ChannelEntry = { name: str(e, 'name', ec), pos: pos(file, e, line) };
      const replaces = optStr(e, 'replaces', ec);
      if (replaces !== undefined) entry.replaces = replaces;
      const skips = strList(e, 'skips', ec);
      if (skips && skips.length) entry.skips = skips;
      const skipRange = optStr(e, 'skipRange', ec);
      if (skipRange !== undefined) entry.skipRange = skipRange;
      return entry;
    }) ?? [];
  const out: Channel = {
    schema: str(blob, 'schema', c),
    name: str(blob, 'name', c),
    package: str(blob, 'package', c),
    entries,
    pos: { file, line },
  };
  const props = properties(blob, c, file, line);
  if (props) out.properties = props;
  return out;
}

export function decodeBundle(blob: Record<string, unknown>, file: string, line: number): Bundle {
  const c: Ctx = new Ctx('Bundle', '');
  const out: Bundle = {
    schema: str(blob, 'schema', c),
    name: str(blob, 'name', c),
    package: str(blob, 'package', c),
    image: str(blob, 'image', c),
    properties: properties(blob, c, file, line) ?? [],
    pos: { file, line },
  };
  const related = list(blob, 'relatedImages', c, 'declcfg.RelatedImage', (r, at) => {
    const rc: Ctx = new Ctx('RelatedImage', at);
    return { name: str(r, 'name', rc), image: str(r, 'image', rc) } satisfies RelatedImage;
  });
  if (related) out.relatedImages = related;
  return out;
}

export function decodeDeprecation(blob: Record<string, unknown>, file: string, line: number): Deprecation {
  const c: Ctx = new Ctx('Deprecation', '');
  const entries =
    list(blob, 'entries', c, 'declcfg.DeprecationEntry', (e, at) => {
      const ec: Ctx = new Ctx('DeprecationEntry', at);
      const ref = getField(e, 'reference');
      let reference = { schema: '' } as DeprecationEntry['reference'];
      if (ref !== undefined && ref !== null) {
        if (!isObject(ref)) ec.typeError(ref, 'declcfg.PackageScopedReference', `${at}.reference`);
        const rc: Ctx = new Ctx('PackageScopedReference', `${at}.reference`);
        reference = { schema: str(ref, 'schema', rc) };
        const name = optStr(ref, 'name', rc);
        if (name !== undefined) reference.name = name;
      }
      return { reference, message: str(e, 'message', ec), pos: pos(file, e, line) } satisfies DeprecationEntry;
    }) ?? [];
  return { schema: str(blob, 'schema', c), package: str(blob, 'package', c), entries, pos: { file, line } };
}

/**
 * opm's Meta: `schema`, `package` and `name` read case-insensitively; top-level keys that are equal
 * after case folding are an error ("duplicate keys for key ...").
 */
export function decodeMeta(value: unknown): { schema: string; package: string; name: string; blob: Record<string, unknown> } {
  if (!isObject(value)) throw new DecodeError(`json: cannot unmarshal ${jsonType(value)} into Go value of type map[string]interface {}`, lineOf(value));
  const sets = new Map<string, string[]>();
  for (const k of Object.keys(value)) {
    const f = foldKey(k);
    sets.set(f, [...(sets.get(f) ?? []), k]);
  }
  const dups = [...sets.entries()].filter(([, ks]) => ks.length > 1);
  if (dups.length) {
    const msgs = dups.map(([f, ks]) => `duplicate keys for key ${JSON.stringify(f)}: [${ks.sort().join(' ')}]`);
    throw new DecodeError(msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`, lineOf(value));
  }
  const get = (name: string): string => {
    const keys = sets.get(foldKey(name));
    if (!keys) return '';
    const v = value[keys[0]!];
    if (typeof v !== 'string') throw new DecodeError(`expected value for key ${JSON.stringify(keys[0])} to be a string, got ${jsonType(v)}: ${JSON.stringify(v)}`, lineOf(value));
    return v;
  };
  return { schema: get('schema'), package: get('package'), name: get('name'), blob: value };
}
