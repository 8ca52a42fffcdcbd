/** OCI content, stores (OCI layout on disk, remote registry) and copy between them. */
export * from './content.js';
export * from './digest.js';
export * from './reference.js';
export * from './store.js';
export * from './layout.js';
export * from './retry.js';
export * from './auth.js';
export * from './credentials.js';
export { RegistryClient, RemoteRepository, type RemoteOptions, type RequestEvent } from './remote.js';
export * from './copy.js';
export * from './helm.js';
export { openStore, readReference, type OpenedStore } from './open.js';
