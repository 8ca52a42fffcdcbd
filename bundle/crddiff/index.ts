/** CRD upgrade safety (crdify rules with OLM's settings) and manifest loading. */
export * from './diff.js';
export * from './load.js';
