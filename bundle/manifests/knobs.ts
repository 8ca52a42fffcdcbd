/**
 * Knobs: the places where an install option reaches an object. When the model is rendered for a
 * cluster (installManifests) every knob holds a concrete value. When bundle/chart generates the Helm
 * templates, the same model code runs with knobs that hold references to chart values instead, and the
 * template writer turns them into Go template actions. That is how the chart stays a view of the model.
 *
 * The rules for model code (bundle/manifests/objects.ts), so that both renderings agree:
 * - a knob value is only placed into an object or interpolated into a string, never inspected;
 * - a boolean knob (`Flag`) decides presence only through `when(flag, value)` or an entry's `when`;
 * - a derived value (a joined list, a comparison) is computed in the options, not in the objects.
 */

/** A condition on chart values, for example `.Values.webhook.enabled`; Go template syntax. */
export class ValueCondition {
  constructor(readonly expr: string) {}
  /** Interpolated into a string, a condition renders as its value (`true` / `false`). */
  toString(): string {
    return templateString(this.expr);
  }
}

/** A boolean option: concrete, or a condition on chart values. */
export type Flag = boolean | ValueCondition;

/** A value present only when a chart condition holds (`{{- if ... }}` around it in the template). */
export class Guarded<T = unknown> {
  constructor(
    readonly condition: ValueCondition,
    readonly value: T,
  ) {}
}

/**
 * `value` when `flag` holds, nothing (undefined) when it does not; with a chart condition, the value
 * guarded by it. In lists, filter the undefined out with `present`.
 */
export function when<T>(flag: Flag, value: T): T | undefined {
  if (flag instanceof ValueCondition) return new Guarded(flag, value) as unknown as T;
  return flag ? value : undefined;
}

/** Both flags hold. */
export function and(a: Flag, b: Flag): Flag {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  return new ValueCondition(`and ${paren(a.expr)} ${paren(b.expr)}`);
}

const paren = (expr: string): string => (/\s/.test(expr) ? `(${expr})` : expr);

/** Drops undefined list items (values `when` left out). */
export const present = <T>(items: readonly (T | undefined)[]): T[] => items.filter((i): i is T => i !== undefined);

/**
 * A scalar that is not a string (a number or boolean) taken from chart values: written raw,
 * `replicas: {{ .Values.replicas }}`. Typed as the scalar it stands for.
 */
export class RawValue {
  constructor(readonly expr: string) {}
}
export const rawValue = <T>(expr: string): T => new RawValue(expr) as unknown as T;

/**
 * A whole subtree taken from chart values (`resources`): `{{- toYaml .Values.resources | nindent N }}`.
 * With `omitEmpty`, the key is left out when the value is empty (`{{- with }}`), as the model leaves
 * out an empty nodeSelector.
 */
export class BlockValue {
  constructor(
    readonly expr: string,
    readonly omitEmpty: boolean,
  ) {}
}
export const blockValue = <T>(expr: string, omitEmpty = false): T => new BlockValue(expr, omitEmpty) as unknown as T;

/** Marks inside strings: `⟪expr⟫` becomes `{{ expr }}` in a double-quoted template string. */
export const TEMPLATE_OPEN = '\u27EA';
export const TEMPLATE_CLOSE = '\u27EB';
export const templateString = (expr: string): string => `${TEMPLATE_OPEN}${expr}${TEMPLATE_CLOSE}`;
export const hasTemplate = (s: string): boolean => s.includes(TEMPLATE_OPEN);

/**
 * A map key that stands for several entries produced by a template: a named template
 * (`include:inference-operator.labels`) or a map from values (`toYaml:.Values.podAnnotations`).
 * Spread into a map, it keeps its position: `{ ...o.labels, component: 'x' }`.
 */
export const spliceKey = (kind: 'include' | 'toYaml', what: string): string => `${TEMPLATE_OPEN}${kind}:${what}${TEMPLATE_CLOSE}`;
export function parseSpliceKey(key: string): { kind: 'include' | 'toYaml'; what: string } | undefined {
  const m = /^\u27EA(include|toYaml):(.+)\u27EB$/.exec(key);
  return m ? { kind: m[1] as 'include' | 'toYaml', what: m[2]! } : undefined;
}

/** Whether a value (anywhere inside) still holds chart references: such a model cannot be applied. */
export function hasKnobs(value: unknown): boolean {
  if (value instanceof ValueCondition || value instanceof Guarded || value instanceof RawValue || value instanceof BlockValue) return true;
  if (typeof value === 'string') return hasTemplate(value);
  if (Array.isArray(value)) return value.some(hasKnobs);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => hasTemplate(k) || hasKnobs(v));
  return false;
}

/**
 * Leaves out an empty list or map (undefined), keeps anything else; a chart value passes through (the
 * template leaves it out when empty with `{{- with }}`).
 */
export function omitEmpty<T>(value: T): T | undefined {
  if (value instanceof BlockValue) return value;
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.length ? value : undefined;
  if (typeof value === 'object') return Object.keys(value).length ? value : undefined;
  return value;
}
