/**
 * The indexed cache behind an informer. Objects are deep-frozen when stored, so a reconciler that
 * mutates what it read gets a TypeError instead of silently corrupting the cache; `clone()` gives a
 * mutable copy. Indexes: `namespace` always, plus custom index functions (value lists per object).
 */
import { objectKey, type KubeObject } from '../kube/types.js';

export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export interface StoreChanges<T> {
  added: T[];
  /** [old, new] pairs, including unchanged objects (same resourceVersion) as a relist replays them. */
  updated: [T, T][];
  deleted: T[];
}

export class Store<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → value → keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexer(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  /** Adds an index; existing objects are indexed at once. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`index ${name} already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) this.indexOne(name, fn, index, key, obj);
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  keys(): string[] {
    return [...this.items.keys()].sort();
  }

  /** All objects, or one namespace's, sorted by key. */
  list(namespace?: string): T[] {
    if (namespace !== undefined) return this.byIndex(NAMESPACE_INDEX, namespace);
    return this.keys().map((k) => this.items.get(k)!);
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`no index named ${index}`);
    return [...(idx.get(value) ?? [])].sort().map((k) => this.items.get(k)!);
  }

  indexNames(): string[] {
    return [...this.indexers.keys()];
  }

  /** Stores (freezes) an object; returns the previous version. */
  upsert(obj: T): T | undefined {
    deepFreeze(obj);
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) this.indexOne(name, fn, this.indices.get(name)!, key, obj);
    return old;
  }

  /** Removes by key; returns what was stored. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /**
   * Replaces the contents of a scope (one namespace, or everything when `namespace` is undefined)
   * with a fresh list, and reports what changed.
   */
  replace(objects: T[], namespace?: string): StoreChanges<T> {
    const changes: StoreChanges<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objects) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.upsert(obj);
      if (old) changes.updated.push([old, obj]);
      else changes.added.push(obj);
    }
    const inScope = namespace === undefined ? [...this.items.keys()] : [...(this.indices.get(NAMESPACE_INDEX)!.get(namespace) ?? [])];
    for (const key of inScope) {
      if (seen.has(key)) continue;
      const old = this.remove(key);
      if (old) changes.deleted.push(old);
    }
    return changes;
  }

  private indexOne(name: string, fn: IndexFunc<T>, index: Map<string, Set<string>>, key: string, obj: T): void {
    let values: string[];
    try {
      values = fn(obj);
    } catch (err) {
      throw new Error(`index ${name} failed for ${key}: ${(err as Error).message}`);
    }
    for (const v of values) {
      let set = index.get(v);
      if (!set) index.set(v, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      let values: string[] = [];
      try {
        values = fn(obj);
      } catch {
        // it could be indexed, so it cannot throw now; be safe anyway
        for (const set of index.values()) set.delete(key);
      }
      for (const v of values) {
        const set = index.get(v);
        set?.delete(key);
        if (set && set.size === 0) index.delete(v);
      }
    }
  }
}
