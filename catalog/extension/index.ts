export * from './manifests.js';
export { writeExtensionDir } from './io.js';
