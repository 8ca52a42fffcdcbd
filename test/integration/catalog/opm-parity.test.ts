/**
 * Parity with the real opm (built from the Go module proxy by scripts/tools.sh): on every catalog of the
 * corpus under test/fixtures/catalogs, `opm validate` and olmpub agree on pass or fail, and olmpub's
 * message names the problem; on the valid ones, olmpub's writer and Mermaid match `opm render` and
 * `opm alpha render-graph`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolBin } from '../../support/env.js';
import { CATALOG_FIXTURES, catalogCorpus } from '../../support/fbc.js';
import { formatErrorTree } from '../../../lib/errors.js';
import { loadCatalogDir } from '../../../catalog/fbc/load.js';
import { renderCatalogFiles } from '../../../catalog/fbc/write.js';
import { validateCatalog } from '../../../catalog/validate/validate.js';
import { parseMermaidStructure, renderMermaid } from '../../../catalog/graph/mermaid.js';

const cases = catalogCorpus();

let opmPath = '';
function opm(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(opmPath, args, { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Files in opm's output order: package directories by name, then the root file. */
function concatenated(files: Map<string, string>): string {
  return [...files.entries()]
    .sort(([a], [b]) => Number(!a.includes('/')) - Number(!b.includes('/')) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([, v]) => v)
    .join('');
}

describe('catalog: parity with the real opm', function () {
  this.timeout(120_000);

  before(function () {
    this.timeout(30 * 60_000); // the first build of opm takes minutes
    opmPath = join(toolBin('opm'), 'opm');
    assert.match(opm('version').stdout, /Version/);
  });

  describe('opm validate and olmpub agree on every catalog of the corpus', () => {
    for (const c of cases) {
      it(`${c.kind}/${c.name}: ${c.expect.description}`, async () => {
        const real = opm('validate', c.dir, '-o', 'json');
        const result = JSON.parse(real.stdout) as { passed: boolean; error?: { message: string } };
        assert.equal(result.passed, real.code === 0);
        assert.equal(result.passed ? 'pass' : 'fail', c.expect.opm, `opm: ${result.error?.message ?? 'passed'}`);

        const loaded = await loadCatalogDir(c.dir);
        const ours = validateCatalog(loaded, { rules: 'opm' });
        const tree = ours.error ? formatErrorTree(ours.error) : '';
        assert.equal(ours.passed, result.passed, `opm says ${result.passed ? 'pass' : `fail:\n${result.error!.message}`}\nolmpub says ${ours.passed ? 'pass' : `fail:\n${tree}`}`);

        const full = validateCatalog(loaded);
        assert.equal(full.passed, (c.expect.olmv1 ?? c.expect.opm) === 'pass');
        if (c.expect.message) {
          const fullTree = formatErrorTree(full.error!);
          assert.ok(fullTree.includes(c.expect.message), `olmpub names the problem ("${c.expect.message}"):\n${fullTree}`);
          if (c.expect.opm === 'fail') {
            const opmWords = c.expect.opmMessage ?? c.expect.message;
            assert.ok(result.error!.message.includes(opmWords), `opm's own message has "${opmWords}":\n${result.error!.message}`);
          }
        }
      });
    }
  });

  describe('olmpub writes what opm writes, and draws the graph opm draws', () => {
    for (const c of cases.filter((x) => x.kind === 'valid')) {
      it(`${c.name}: opm render -o json|yaml and opm alpha render-graph`, async () => {
        const loaded = await loadCatalogDir(c.dir);
        for (const format of ['json', 'yaml'] as const) {
          const real = opm('render', c.dir, '-o', format);
          assert.equal(real.code, 0, real.stderr);
          assert.equal(concatenated(renderCatalogFiles(loaded.config, format)), real.stdout, `${format} output differs`);
        }
        const graph = opm('alpha', 'render-graph', c.dir);
        assert.equal(graph.code, 0, graph.stderr);
        const ours = renderMermaid(loaded.config);
        assert.deepEqual(parseMermaidStructure(ours), parseMermaidStructure(graph.stdout), 'same nodes, edges, styles and classes');
        assert.equal(ours, graph.stdout, 'and the same text');
      });
    }
  });

  it('a catalog rendered by olmpub from its template round-trips through opm unchanged', async () => {
    const dir = join(CATALOG_FIXTURES, 'valid/rendered-template/catalog');
    const real = opm('render', dir, '-o', 'json');
    assert.equal(real.code, 0, real.stderr);
    assert.equal(real.stdout, readFileSync(join(dir, 'inference-operator/catalog.json'), 'utf8'));
  });
});
