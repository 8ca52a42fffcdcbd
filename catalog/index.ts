/**
 * The catalog layer's public API: what `olmpub catalog …` and the publish pipeline call.
 *
 * - FBC wire model, loading (opm-compatible) and writing (opm's layout, atomic): `fbc/*`
 * - validation with opm's rules plus OLM v1 limits: `validateCatalog`
 * - the catalog template: `parseTemplate`, `renderTemplate`, `editTemplate` (pure) and the file helpers
 * - the upgrade graph: `renderMermaid`, `buildGraph`, `renderSvg`, `renderHtml`
 * - OLM v1 resolution: `resolveUpgrade`
 */
export * from './fbc/types.js';
export { loadCatalogDir, loadFromFiles, readCatalogFiles, type SourceFile } from './fbc/load.js';
export { renderCatalogFiles, writeCatalogDir, encodeBlobs, type FbcFormat } from './fbc/write.js';
export { packageProperties, gvks, csvFacts, sortProperties } from './fbc/properties.js';
export { imageReferenceError, isDigestReference, parseNormalizedNamed } from './fbc/reference.js';
export { validateCatalog, type ValidateOptions, type ValidationReport } from './validate/validate.js';
export {
  parseTemplate,
  TEMPLATE_SCHEMA,
  ARCHETYPES,
  type Archetype,
  type CatalogTemplate,
  type TemplateVersion,
  type StreamKind,
} from './template/template.js';
export { renderTemplate, type RenderOptions, type RenderResult, type ChannelPlan, type PlannedEntry } from './template/render.js';
export { editTemplate, type TemplateEdit, type EditResult } from './template/edit.js';
export { syntheticBundleInfo, bundleInfoFromFiles, type BundleInfo } from './template/bundleinfo.js';
export { renderMermaid, parseMermaidStructure } from './graph/mermaid.js';
export { buildGraph, renderSvg, renderHtml, type GraphPackage, type GraphChannel, type GraphNode, type GraphEdge } from './graph/svg.js';
export { resolveUpgrade, type ResolveQuery, type ResolveResult, type Candidate, type UpgradePolicy } from './resolve/resolve.js';
export {
  readTemplateFile,
  readTemplateIcon,
  readBundleInfoFile,
  bundleInfoFromDir,
  bundleInfosFromDirs,
  renderTemplateFile,
  editTemplateFile,
  type RenderFileResult,
} from './io.js';
