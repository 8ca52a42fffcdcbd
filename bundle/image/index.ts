/** Daemonless image building: deterministic layers, image config, manifest and index, unpacking. */
export * from './gzip.js';
export * from './tar.js';
export * from './layer.js';
export * from './platform.js';
export * from './build.js';
export * from './unpack.js';
export * from './host.js';
