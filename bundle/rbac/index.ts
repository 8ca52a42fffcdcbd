/** RBAC evaluation, least-privilege lint, declared-vs-used, installer role derivation and OLM's preflight report. */
export * from './rules.js';
export * from './authorizer.js';
export * from './lint.js';
export * from './usage.js';
export * from './installer.js';
