/** The olmpub operator image: Node.js runtime, production dependencies and the app, built without a daemon. */
export * from './deps.js';
export * from './runtime.js';
export * from './app.js';
export * from './build.js';
