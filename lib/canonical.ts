/** Deterministic serialisation: same value, same bytes. */
import YAML from 'yaml';

/** Returns a deep copy with object keys sorted, which JSON.stringify then emits in order. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out as T;
  }
  return value;
}

export const canonicalJSON = (value: unknown, indent = 0): string => JSON.stringify(sortKeys(value), null, indent);

/** YAML with sorted keys, no line folding and no anchors, so output is stable and diffable. */
export function canonicalYAML(value: unknown, sorted = true): string {
  return YAML.stringify(sorted ? sortKeys(value) : value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Several objects as one multi-document YAML stream. */
export function yamlStream(objects: unknown[], sorted = true): string {
  return objects.map((o) => `---\n${canonicalYAML(o, sorted)}`).join('');
}
