/**
 * The I/O shell around the catalog's pure core: reading templates, icons and bundle facts, writing the
 * template back after an edit (comments kept, atomically), rendering a template file to a directory.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { environmentError, usageError, validationError } from '../lib/errors.js';
import { writeFileAtomic } from '../lib/fsx.js';
import { parseStream } from './fbc/stream.js';
import { writeCatalogDir, type FbcFormat } from './fbc/write.js';
import type { Property, RelatedImage } from './fbc/types.js';
import { parseTemplate, type CatalogTemplate } from './template/template.js';
import { renderTemplate, type RenderOptions, type RenderResult } from './template/render.js';
import { editTemplate, type EditResult, type TemplateEdit } from './template/edit.js';
import { bundleInfoFromFiles, type BundleInfo } from './template/bundleinfo.js';
import { validateCatalog, type ValidationReport } from './validate/validate.js';

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usageError('file-not-found', `${what} ${path} does not exist`, { hint: 'check the path' });
    throw environmentError('read-failed', `cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

export async function readTemplateFile(path: string): Promise<{ text: string; template: CatalogTemplate }> {
  const text = await readText(path, 'catalog template');
  return { text, template: parseTemplate(text, path) };
}

/** The template's icon as base64, read relative to the template file. */
export async function readTemplateIcon(template: CatalogTemplate): Promise<string | undefined> {
  if (!template.package.icon) return undefined;
  const path = resolve(dirname(template.file), template.package.icon.path);
  try {
    return (await readFile(path)).toString('base64');
  } catch {
    throw usageError('icon-not-found', `icon ${template.package.icon.path} (${path}) cannot be read`, {
      place: `${template.package.icon.pos.file}:${template.package.icon.pos.line}`,
      hint: 'package.icon.path is relative to the template file',
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Bundle facts

function asBundleInfo(v: unknown, where: string): BundleInfo {
  const bad = (msg: string): never => {
    throw validationError('bad-bundle-info', `${where}: ${msg}`, { hint: 'each bundle is {name, version, image?, properties: [{type, value}], relatedImages: [{name, image}]}' });
  };
  if (!v || typeof v !== 'object' || Array.isArray(v)) bad('not a mapping');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['name', 'version', 'image', 'properties', 'relatedImages'].includes(k)) bad(`unknown field ${JSON.stringify(k)}`);
  if (typeof o.name !== 'string' || !o.name) bad('"name" (the CSV metadata.name) must be a non-empty string');
  if (typeof o.version !== 'string' || !o.version) bad('"version" must be a string');
  if (o.image !== undefined && typeof o.image !== 'string') bad('"image" must be a string');
  const props = o.properties ?? [];
  if (!Array.isArray(props)) bad('"properties" must be a list');
  const properties: Property[] = (props as unknown[]).map((p, i) => {
    if (!p || typeof p !== 'object' || typeof (p as { type?: unknown }).type !== 'string') bad(`properties[${i}] must be {type, value}`);
    return { type: (p as { type: string }).type, value: (p as { value?: unknown }).value ?? null };
  });
  const rel = o.relatedImages ?? [];
  if (!Array.isArray(rel)) bad('"relatedImages" must be a list');
  const relatedImages: RelatedImage[] = (rel as unknown[]).map((r, i) => {
    const x = r as { name?: unknown; image?: unknown };
    if (!r || typeof r !== 'object' || typeof x.image !== 'string') bad(`relatedImages[${i}] must be {name, image}`);
    return { name: typeof x.name === 'string' ? x.name : '', image: x.image as string };
  });
  return { name: o.name as string, version: o.version as string, ...(typeof o.image === 'string' ? { image: o.image } : {}), properties, relatedImages };
}

/** A bundle-info file: YAML or JSON, a list of bundles or `{bundles: [...]}`. */
export async function readBundleInfoFile(path: string): Promise<BundleInfo[]> {
  const text = await readText(path, 'bundle info file');
  const parsed = parseStream(text);
  if (parsed.error) throw validationError('bad-bundle-info', `${path}:${parsed.error.line}: ${parsed.error.message}`, { hint: 'the file holds YAML or JSON' });
  const values = parsed.docs.map((d) => d.value);
  const list = values.length === 1 && !Array.isArray(values[0]) && values[0] && typeof values[0] === 'object' && 'bundles' in (values[0] as object) ? (values[0] as { bundles: unknown }).bundles : values.length === 1 ? values[0] : values;
  if (!Array.isArray(list)) throw validationError('bad-bundle-info', `${path}: expected a list of bundles or {bundles: [...]}`, {});
  return list.map((v, i) => asBundleInfo(v, `${path}: bundles[${i}]`));
}


/** Bundle facts from a registry+v1 bundle directory (manifests/ and metadata/). */
export async function bundleInfoFromDir(dir: string): Promise<BundleInfo> {
  const files: { path: string; content: string }[] = [];
  for (const sub of ['manifests', 'metadata']) {
    let names: string[];
    try {
      names = (await readdir(join(dir, sub))).sort();
    } catch {
      if (sub === 'manifests') throw usageError('not-a-bundle', `${dir} has no manifests/ directory`, { hint: 'point at a registry+v1 bundle directory (manifests/ and metadata/)' });
      continue;
    }
    for (const n of names) {
      const path = join(dir, sub, n);
      if ((await stat(path)).isFile()) files.push({ path: `${sub}/${n}`, content: await readFile(path, 'utf8') });
    }
  }
  return bundleInfoFromFiles(files, dir);
}

/** Bundle facts from directories: each is a bundle (has manifests/) or holds bundle subdirectories. */
export async function bundleInfosFromDirs(dirs: string[]): Promise<BundleInfo[]> {
  const out: BundleInfo[] = [];
  for (const dir of dirs) {
    let isBundle = false;
    try {
      isBundle = (await stat(join(dir, 'manifests'))).isDirectory();
    } catch {
      isBundle = false;
    }
    if (isBundle) {
      out.push(await bundleInfoFromDir(dir));
      continue;
    }
    let entries;
    try {
      entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    } catch {
      throw usageError('not-a-directory', `${dir} cannot be read`, { hint: 'pass a bundle directory or a directory of bundle directories' });
    }
    for (const e of entries) {
      try {
        if ((await stat(join(dir, e, 'manifests'))).isDirectory()) out.push(await bundleInfoFromDir(join(dir, e)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Whole operations

export interface RenderFileResult extends RenderResult {
  report: ValidationReport;
  files?: string[];
}

/**
 * Renders a template file: reads it and its icon, renders with the given bundle facts, validates the
 * result, and (with `outDir`) writes the FBC atomically. Nothing is written when validation fails.
 */
export async function renderTemplateFile(path: string, options: RenderOptions & { outDir?: string; format?: FbcFormat } = {}): Promise<RenderFileResult> {
  const { template } = await readTemplateFile(path);
  const iconBase64 = await readTemplateIcon(template);
  const rendered = renderTemplate(template, { ...options, ...(iconBase64 !== undefined ? { iconBase64 } : {}) });
  const report = validateCatalog(rendered.config, { name: path });
  if (!report.passed) throw report.error!;
  const files = options.outDir ? await writeCatalogDir(options.outDir, rendered.config, options.format ?? 'json') : undefined;
  return { ...rendered, report, ...(files ? { files } : {}) };
}

/** Applies edits to a template file; writes it (atomically, comments kept) only when the result is valid. */
export async function editTemplateFile(path: string, edits: TemplateEdit | TemplateEdit[], options: RenderOptions & { dryRun?: boolean } = {}): Promise<EditResult> {
  const text = await readText(path, 'catalog template');
  const result = editTemplate(text, path, edits, options);
  if (result.changed && !options.dryRun) await writeFileAtomic(path, result.text);
  return result;
}
