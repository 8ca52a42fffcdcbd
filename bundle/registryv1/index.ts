/** The registry+v1 bundle of the operator, a view of the install manifests model, and OLM v1's limits on it. */
export * from './bundle.js';
export * from './csv.js';
export * from './validate.js';
export * from './image.js';
export * from './render.js';
export * from './permissions.js';
