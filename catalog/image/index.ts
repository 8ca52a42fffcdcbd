export * from './catalog-image.js';
