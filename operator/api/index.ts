/** The InferenceService API: types, CRD, conversion, admission helpers. Pure; no I/O. */
export * from './meta.js';
export * from './duration.js';
export * from './scaling.js';
export { applyDefaults, type JSONSchemaProps, type ValidationRule, type Input, type Output } from './schema.js';
export * from './v1.js';
export * from './v1alpha1.js';
export * from './crd.js';
export * from './conversion.js';
export * from './quota.js';
export * from './admission.js';
