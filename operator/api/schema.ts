/**
 * A small typed builder for OpenAPI v3 structural schemas: one definition gives both the JSON schema
 * that goes into the CRD and the TypeScript types (by inference), so the two cannot drift.
 *
 * Every node carries three phantom types:
 * - `I`, the input type: what users write and what conversion handles (fields with a default are optional);
 * - `O`, the output type: what the apiserver stores after structural defaulting (fields with a default are present);
 * - `D`, whether the node itself has a default (so its parent treats it as present in `O`).
 *
 * `applyDefaults` applies the schema's defaults the way the apiserver does, so code that needs the
 * defaulted view (the desired-state function) never repeats a default by hand.
 */

/** A CEL rule (`x-kubernetes-validations` entry). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** apiextensions.k8s.io/v1 JSONSchemaProps, with the wire names (`x-kubernetes-*`). */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  enum?: (string | number)[];
  default?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  anyOf?: JSONSchemaProps[];
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-preserve-unknown-fields'?: true;
}

export class Schema<I, O = I, D extends boolean = false> {
  declare readonly _in: I;
  declare readonly _out: O;
  declare readonly _defaulted: D;
  constructor(readonly json: JSONSchemaProps) {}

  /** The same schema with a default, which the apiserver applies when the field is absent. */
  default(value: I): Schema<I, O, true> {
    return new Schema<I, O, true>({ ...this.json, default: value });
  }

  /** The same schema with extra CEL rules. */
  rules(...rules: ValidationRule[]): Schema<I, O, D> {
    return new Schema<I, O, D>({ ...this.json, 'x-kubernetes-validations': [...(this.json['x-kubernetes-validations'] ?? []), ...rules] });
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySchema = Schema<any, any, boolean>;
/** The type users write (defaulted fields optional). */
export type Input<S> = S extends Schema<infer I, unknown, boolean> ? I : never;
/** The type stored after defaulting (defaulted fields present). */
export type Output<S> = S extends Schema<unknown, infer O, boolean> ? O : never;
type HasDefault<S> = S extends Schema<unknown, unknown, infer D> ? D : false;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Props = Record<string, AnySchema>;
type ObjectIn<P extends Props, R extends keyof P> = Simplify<
  { -readonly [K in keyof P as K extends R ? K : never]: Input<P[K]> } & { -readonly [K in keyof P as K extends R ? never : K]?: Input<P[K]> }
>;
type PresentOut<P extends Props, R extends keyof P, K extends keyof P> = K extends R ? true : HasDefault<P[K]> extends true ? true : false;
type ObjectOut<P extends Props, R extends keyof P> = Simplify<
  { -readonly [K in keyof P as PresentOut<P, R, K> extends true ? K : never]: Output<P[K]> } & {
    -readonly [K in keyof P as PresentOut<P, R, K> extends true ? never : K]?: Output<P[K]>;
  }
>;

interface Common {
  /** Every field is documented: the text lands in the CRD and in `kubectl explain`. */
  description: string;
}
export interface StringOptions extends Common {
  enum?: readonly string[];
  pattern?: string;
  format?: 'date-time' | 'byte' | 'uri';
  minLength?: number;
  maxLength?: number;
}
export interface NumberOptions extends Common {
  minimum?: number;
  maximum?: number;
  format?: 'int32' | 'int64';
}
export interface ObjectOptions<R extends string> extends Common {
  required?: readonly R[];
  rules?: ValidationRule[];
  mapType?: 'atomic' | 'granular';
}
export interface ArrayOptions extends Common {
  minItems?: number;
  maxItems?: number;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  rules?: ValidationRule[];
}
export interface MapOptions extends Common {
  maxProperties?: number;
  rules?: ValidationRule[];
}

const clean = (o: JSONSchemaProps): JSONSchemaProps =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as JSONSchemaProps;

export function string<const E extends string>(o: StringOptions & { enum: readonly E[] }): Schema<E>;
export function string(o: StringOptions): Schema<string>;
export function string(o: StringOptions): Schema<string> {
  return new Schema(
    clean({
      type: 'string',
      description: o.description,
      enum: o.enum ? [...o.enum] : undefined,
      pattern: o.pattern,
      format: o.format,
      minLength: o.minLength,
      maxLength: o.maxLength,
    }),
  );
}

export function integer(o: NumberOptions): Schema<number> {
  return new Schema(clean({ type: 'integer', format: o.format ?? 'int32', description: o.description, minimum: o.minimum, maximum: o.maximum }));
}

export function boolean(o: Common): Schema<boolean> {
  return new Schema({ type: 'boolean', description: o.description });
}

/** A resource quantity (`1`, `500m`, `16Gi`): the int-or-string shape Kubernetes uses. */
export function quantity(o: Common): Schema<string | number> {
  return new Schema({
    description: o.description,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
    'x-kubernetes-int-or-string': true,
  });
}

export function object<const P extends Props, const R extends keyof P & string = never>(
  props: P,
  o: ObjectOptions<R>,
): Schema<ObjectIn<P, R>, ObjectOut<P, R>> {
  return new Schema(
    clean({
      type: 'object',
      description: o.description,
      properties: Object.fromEntries(Object.entries(props).map(([k, s]) => [k, s.json])),
      required: o.required?.length ? [...o.required] : undefined,
      'x-kubernetes-map-type': o.mapType,
      'x-kubernetes-validations': o.rules?.length ? o.rules : undefined,
    }),
  );
}

export function array<S extends AnySchema>(item: S, o: ArrayOptions): Schema<Input<S>[], Output<S>[]> {
  return new Schema(
    clean({
      type: 'array',
      description: o.description,
      items: item.json,
      minItems: o.minItems,
      maxItems: o.maxItems,
      'x-kubernetes-list-type': o.listType,
      'x-kubernetes-list-map-keys': o.listMapKeys,
      'x-kubernetes-validations': o.rules?.length ? o.rules : undefined,
    }),
  );
}

/** An object used as a map: `additionalProperties` of one schema. */
export function map<S extends AnySchema>(value: S, o: MapOptions): Schema<Record<string, Input<S>>, Record<string, Output<S>>> {
  return new Schema(
    clean({
      type: 'object',
      description: o.description,
      additionalProperties: value.json,
      maxProperties: o.maxProperties,
      'x-kubernetes-validations': o.rules?.length ? o.rules : undefined,
    }),
  );
}

/**
 * A node whose TypeScript type is given rather than inferred, for `metadata` (which the apiserver
 * validates itself) and nothing else.
 */
export function opaque<T>(json: JSONSchemaProps): Schema<T> {
  return new Schema(json);
}

/**
 * Applies the schema's defaults the way the apiserver's structural defaulting does: a missing
 * property with a default gets a copy of it, then defaulting continues inside every present value
 * (including a default just set). Values that are not what the schema expects are left alone.
 * The input is not modified.
 */
export function applyDefaults<S extends AnySchema>(schema: S, value: Input<S>): Output<S> {
  return defaultValue(schema.json, value) as Output<S>;
}

function defaultValue(schema: JSONSchemaProps, value: unknown): unknown {
  if (Array.isArray(value)) return schema.items ? value.map((v) => defaultValue(schema.items!, v)) : value;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (schema.properties) {
    for (const [key, prop] of Object.entries(schema.properties)) {
      if (out[key] === undefined && prop.default !== undefined) out[key] = structuredClone(prop.default);
      if (out[key] !== undefined) out[key] = defaultValue(prop, out[key]);
    }
  } else if (schema.additionalProperties) {
    for (const key of Object.keys(out)) out[key] = defaultValue(schema.additionalProperties, out[key]);
  }
  return out;
}
