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
  if (parsed.kind === 'layout') {
    const reference = parsed.digest ?? parsed.tag;
    return { store: new OciLayoutStore(parsed.path), ...(reference !== undefined ? { reference } : {}), parsed, close: () => undefined };
  }
  const client = new RegistryClient(parsed.registry, options);
  const reference = parsed.digest ?? parsed.tag;
  return {
    store: client.repository(parsed.repository),
    ...(reference !== undefined ? { reference } : {}),
    parsed,
    close: () => client.close(),
  };
}
