/** Opens the store a CLI reference names: `oci:PATH[:TAG|@DIGEST]` or a registry reference. */
import { OciLayoutStore } from './layout.js';
import { parseStoreReference, type StoreReference } from './reference.js';
import { RegistryClient, type RemoteOptions } from './remote.js';
import type { Store } from './store.js';

export interface OpenedStore {
  store: Store;
  /** The tag or digest inside the store, if the reference named one. */
  reference?: string;
  parsed: StoreReference;
  close(): void;
}

export function openStore(ref: string, options: RemoteOptions = {}): OpenedStore {
  const parsed = parseStoreReference(ref);
  const reference = parsed.digest ?? parsed.tag;
  const named = reference !== undefined ? { reference } : {};
  if (parsed.kind === 'layout') return { store: new OciLayoutStore(parsed.path), ...named, parsed, close: () => undefined };
  const client = new RegistryClient(parsed.registry, options);
  return { store: client.repository(parsed.repository), ...named, parsed, close: () => client.close() };
}

/** What to read from an opened store: the tag or digest named, else `latest` on a registry (as docker does); none for a bare layout. */
export const readReference = (opened: OpenedStore): string | undefined => opened.reference ?? (opened.parsed.kind === 'registry' ? 'latest' : undefined);
