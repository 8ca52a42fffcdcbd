/**
 * Conversion between v1alpha1 and v1, lossless in both directions (the conversion webhook serves
 * `convertObject` through the runtime's ConversionReview handler).
 *
 * How it stays lossless: a "plain" mapping translates every field that has a home in the other
 * version (and applies the target version's schema defaults, as the apiserver would). What the
 * plain mapping back would not reproduce is kept as a JSON merge patch (RFC 7386) in an annotation
 * of the converted object: `inference.olmpub.dev/v1-fields` on a v1alpha1 object (v1 fields such as
 * devices, tolerations, the canary's model name), `inference.olmpub.dev/v1alpha1-fields` on a v1
 * object (serviceType, phase). Converting back applies the patch and removes the annotation. So
 * x → y → x gives x again, annotations included, for any valid object.
 *
 * An edit made in the other version wins over the annotation for every field that version can
 * express; the patch only carries fields it cannot. If an edit removes the part of the object a
 * kept field belongs to (the canary, a PVC model source, the model cache), the kept field goes too.
 */
import { API_VERSION_V1, API_VERSION_V1ALPHA1, V1ALPHA1_FIELDS_ANNOTATION, V1_FIELDS_ANNOTATION, type Condition, type ObjectMeta } from './meta.js';
import { applyDefaults } from './schema.js';
import { canonicalJSON } from '../../lib/canonical.js';
import { inferenceServiceSchemaV1, type InferenceService } from './v1.js';
import { inferenceServiceSchemaV1alpha1, type InferenceServiceV1alpha1 } from './v1alpha1.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** v1alpha1 → v1. Pure; the input is not modified. */
export function convertToV1(obj: InferenceServiceV1alpha1): InferenceService {
  const { meta, stash } = takeStash(obj.metadata, V1_FIELDS_ANNOTATION);
  const alpha = { ...obj, metadata: meta } as InferenceServiceV1alpha1;
  let v1 = plainToV1(alpha);
  if (stash !== undefined) v1 = applyMergePatch(v1, guardV1Stash(v1, stash)) as InferenceService;
  const kept = mergePatchDiff(body(plainToV1alpha1(v1)), body(alpha));
  return { ...v1, metadata: withStash(v1.metadata, V1ALPHA1_FIELDS_ANNOTATION, kept) } as InferenceService;
}

/** v1 → v1alpha1. Pure; the input is not modified. */
export function convertToV1alpha1(obj: InferenceService): InferenceServiceV1alpha1 {
  const { meta, stash } = takeStash(obj.metadata, V1ALPHA1_FIELDS_ANNOTATION);
  const v1 = { ...obj, metadata: meta } as InferenceService;
  let alpha = plainToV1alpha1(v1);
  if (stash !== undefined) alpha = applyMergePatch(alpha, stash) as InferenceServiceV1alpha1;
  const kept = mergePatchDiff(body(plainToV1(alpha)), body(v1));
  return { ...alpha, metadata: withStash(alpha.metadata, V1_FIELDS_ANNOTATION, kept) } as InferenceServiceV1alpha1;
}

/** Converts to `desiredAPIVersion`; an object already there is returned unchanged. */
export function convertObject(obj: unknown, desiredAPIVersion: string): InferenceService | InferenceServiceV1alpha1 {
  if (!isObj(obj)) throw new Error('the object is not a JSON object');
  const from = obj.apiVersion;
  if (desiredAPIVersion !== API_VERSION_V1 && desiredAPIVersion !== API_VERSION_V1ALPHA1) throw new Error(`cannot convert to ${desiredAPIVersion}: served versions are ${API_VERSION_V1} and ${API_VERSION_V1ALPHA1}`);
  if (from === desiredAPIVersion) return obj as InferenceService | InferenceServiceV1alpha1;
  if (from === API_VERSION_V1ALPHA1) return convertToV1(obj as InferenceServiceV1alpha1);
  if (from === API_VERSION_V1) return convertToV1alpha1(obj as InferenceService);
  throw new Error(`cannot convert from apiVersion ${JSON.stringify(from)}`);
}

// ---------------------------------------------------------------------------------------------
// Plain mappings: every field with a home on the other side, then the target's defaults.

function plainToV1(a: InferenceServiceV1alpha1): InferenceService {
  const spec = (a.spec ?? {}) as Partial<InferenceServiceV1alpha1['spec']>;
  const source = (uri: string | undefined) => {
    if (uri === undefined) return {};
    const pvc = parsePvcUri(uri);
    return pvc ? { pvc } : { storageUri: uri };
  };
  const canaryPresent = spec.canaryImage !== undefined || spec.canaryModelUri !== undefined || spec.canaryPercent !== undefined;
  const v1Spec = defined({
    model: defined({
      name: spec.modelName,
      format: spec.modelFormat,
      ...source(spec.modelUri),
      cache: spec.cachePvc !== undefined ? { claimName: spec.cachePvc } : undefined,
    }),
    runtime: defined({ image: spec.image, args: spec.args, port: spec.port, healthPath: spec.healthPath }),
    resources: nonEmpty(
      defined({
        requests: nonEmpty(defined({ cpu: spec.cpu, memory: spec.memory })),
        gpu: spec.gpus !== undefined ? { count: spec.gpus } : undefined,
      }),
    ),
    scaling: spec.replicas ? defined({ minReplicas: spec.replicas.min, maxReplicas: spec.replicas.max, replicas: spec.replicas.desired }) : undefined,
    canary: canaryPresent
      ? defined({
          trafficPercent: spec.canaryPercent,
          runtime: spec.canaryImage !== undefined ? { image: spec.canaryImage } : undefined,
          model: spec.canaryModelUri !== undefined ? source(spec.canaryModelUri) : undefined,
        })
      : undefined,
    placement: spec.nodeSelector !== undefined ? { nodeSelector: spec.nodeSelector } : undefined,
  });
  const status = a.status
    ? defined({
        observedGeneration: a.status.observedGeneration,
        conditions: a.status.conditions,
        replicas: a.status.replicas,
        readyReplicas: a.status.readyReplicas,
        selector: a.status.selector,
        url: a.status.url,
      })
    : undefined;
  const out = defined({ ...a, apiVersion: API_VERSION_V1, spec: a.spec === undefined ? undefined : v1Spec, status });
  return applyDefaults(inferenceServiceSchemaV1, out as InferenceService) as InferenceService;
}

function plainToV1alpha1(v: InferenceService): InferenceServiceV1alpha1 {
  const spec = (v.spec ?? {}) as Partial<InferenceService['spec']>;
  const uri = (m: { storageUri?: string; pvc?: { claimName: string; subPath?: string } } | undefined) =>
    m?.storageUri ?? (m?.pvc ? pvcUri(m.pvc) : undefined);
  const alphaSpec = defined({
    modelName: spec.model?.name,
    modelFormat: spec.model?.format,
    modelUri: uri(spec.model),
    cachePvc: spec.model?.cache?.claimName,
    image: spec.runtime?.image,
    args: spec.runtime?.args,
    port: spec.runtime?.port,
    healthPath: spec.runtime?.healthPath,
    gpus: spec.resources?.gpu?.count,
    cpu: spec.resources?.requests?.cpu,
    memory: spec.resources?.requests?.memory,
    replicas: spec.scaling ? defined({ min: spec.scaling.minReplicas, max: spec.scaling.maxReplicas, desired: spec.scaling.replicas }) : undefined,
    canaryImage: spec.canary?.runtime?.image,
    canaryModelUri: uri(spec.canary?.model),
    canaryPercent: spec.canary?.trafficPercent,
    nodeSelector: spec.placement?.nodeSelector,
  });
  const status = v.status
    ? defined({
        phase: phaseOf(v.status.conditions, v.status.scaledToZero !== undefined),
        observedGeneration: v.status.observedGeneration,
        conditions: v.status.conditions,
        replicas: v.status.replicas,
        readyReplicas: v.status.readyReplicas,
        selector: v.status.selector,
        url: v.status.url,
      })
    : undefined;
  const out = defined({ ...v, apiVersion: API_VERSION_V1ALPHA1, spec: v.spec === undefined ? undefined : alphaSpec, status });
  return applyDefaults(inferenceServiceSchemaV1alpha1, out as InferenceServiceV1alpha1) as InferenceServiceV1alpha1;
}

/** The v1alpha1 phase, derived from the v1 conditions. */
export function phaseOf(conditions: Condition[] | undefined, scaledToZero: boolean): 'Pending' | 'Loading' | 'Ready' | 'Failed' | 'ScaledToZero' {
  const is = (type: string) => conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
  if (scaledToZero) return 'ScaledToZero';
  if (is('Ready')) return 'Ready';
  if (is('Degraded')) return 'Failed';
  if (is('Progressing')) return 'Loading';
  return 'Pending';
}

/** `pvc://claim/sub/path` → `{claimName: 'claim', subPath: 'sub/path'}`; other URIs → undefined. */
export function parsePvcUri(uri: string): { claimName: string; subPath?: string } | undefined {
  if (!uri.startsWith('pvc://')) return undefined;
  const rest = uri.slice('pvc://'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? { claimName: rest } : { claimName: rest.slice(0, slash), subPath: rest.slice(slash + 1) };
}

export function pvcUri(pvc: { claimName: string; subPath?: string }): string {
  return `pvc://${pvc.claimName}${pvc.subPath !== undefined ? `/${pvc.subPath}` : ''}`;
}

/**
 * Parts of the v1 object whose presence v1alpha1 decides. A kept field under one of them is dropped
 * when the v1alpha1 object no longer has that part (an edit removed the canary, say).
 */
const PRESENCE_PATHS = [
  ['spec', 'canary'],
  ['spec', 'model', 'pvc'],
  ['spec', 'model', 'cache'],
  ['spec', 'canary', 'model', 'pvc'],
];

function guardV1Stash(plain: unknown, stash: Obj): Obj {
  const out = structuredClone(stash);
  for (const path of PRESENCE_PATHS) if (getPath(plain, path) === undefined) deletePath(out, path);
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch (RFC 7386)

/**
 * The merge patch that turns `from` into `to` (undefined when they are equal): objects are
 * compared key by key, `null` removes a key, anything else (arrays included) is replaced whole.
 * Exact for JSON without nulls, which is what Kubernetes objects are after pruning.
 */
export function mergePatchDiff(from: unknown, to: unknown): unknown {
  if (isObj(from) && isObj(to)) {
    const patch: Obj = {};
    for (const key of Object.keys(to)) {
      if (to[key] === undefined) continue;
      if (from[key] === undefined) patch[key] = to[key];
      else {
        const d = mergePatchDiff(from[key], to[key]);
        if (d !== undefined) patch[key] = d;
      }
    }
    for (const key of Object.keys(from)) if (from[key] !== undefined && to[key] === undefined) patch[key] = null;
    return Object.keys(patch).length ? patch : undefined;
  }
  if (from === undefined && to === undefined) return undefined;
  return canonicalJSON(from) === canonicalJSON(to) ? undefined : to === undefined ? null : to;
}

/** Applies a JSON merge patch (RFC 7386); neither argument is modified. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// helpers

function body(o: { spec?: unknown; status?: unknown }): Obj {
  return defined({ spec: o.spec, status: o.status });
}

function takeStash(meta: ObjectMeta | undefined, key: string): { meta: ObjectMeta | undefined; stash: Obj | undefined } {
  const annotations = meta?.annotations;
  if (!meta || !annotations || !(V1_FIELDS_ANNOTATION in annotations || V1ALPHA1_FIELDS_ANNOTATION in annotations)) return { meta, stash: undefined };
  const raw = annotations[key];
  const rest = { ...annotations };
  delete rest[V1_FIELDS_ANNOTATION];
  delete rest[V1ALPHA1_FIELDS_ANNOTATION];
  const out: ObjectMeta = { ...meta, annotations: rest };
  if (Object.keys(rest).length === 0) delete out.annotations;
  let stash: Obj | undefined;
  if (raw !== undefined) {
    try {
      const parsed: unknown = JSON.parse(raw);
      // A hand-edited value that is not a JSON object cannot be applied; it is dropped.
      if (isObj(parsed)) stash = parsed;
    } catch {
      stash = undefined;
    }
  }
  return { meta: out, stash };
}

function withStash(meta: ObjectMeta | undefined, key: string, patch: unknown): ObjectMeta | undefined {
  if (patch === undefined) return meta;
  return { ...meta, annotations: { ...meta?.annotations, [key]: canonicalJSON(patch) } };
}

function getPath(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const key of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

function deletePath(o: Obj, path: string[]): void {
  let cur: unknown = o;
  for (const key of path.slice(0, -1)) {
    if (!isObj(cur)) return;
    cur = cur[key];
  }
  if (isObj(cur)) delete cur[path[path.length - 1]!];
}

/** The object without its undefined properties. */
function defined<T extends Obj>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function nonEmpty<T extends Obj>(o: T): T | undefined {
  return Object.keys(o).length ? o : undefined;
}
