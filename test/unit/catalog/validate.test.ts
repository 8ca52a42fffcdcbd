import assert from 'node:assert/strict';
import { catalogCorpus } from '../../support/fbc.js';
import { formatErrorTree } from '../../../lib/errors.js';
import { loadCatalogDir, loadFromFiles } from '../../../catalog/fbc/load.js';
import { validateCatalog } from '../../../catalog/validate/validate.js';
import type { DeclarativeConfig } from '../../../catalog/fbc/types.js';

const cases = catalogCorpus();

describe('catalog/validate: the fixture corpus (expected verdicts, without opm)', () => {
  it('has the broken catalogs the issue lists', () => {
    const names = new Set(cases.map((c) => c.name));
    for (const n of ['two-heads', 'cycle', 'stranded', 'duplicate-versions', 'no-package-property', 'bad-skiprange', 'missing-default-channel', 'bundle-unknown-package', 'bad-package-name', 'duplicate-channel-entry', 'deprecation-missing-bundle']) {
      assert.ok(names.has(n), n);
    }
    assert.ok(cases.length >= 60);
  });

  for (const c of cases) {
    it(`${c.kind}/${c.name}: ${c.expect.description}`, async () => {
      const loaded = await loadCatalogDir(c.dir);
      const opmRules = validateCatalog(loaded, { rules: 'opm' });
      assert.equal(opmRules.passed, c.expect.opm === 'pass', opmRules.error ? formatErrorTree(opmRules.error) : 'passed');
      const full = validateCatalog(loaded);
      const want = c.expect.olmv1 ?? c.expect.opm;
      assert.equal(full.passed, want === 'pass', full.error ? formatErrorTree(full.error) : 'passed');
      if (c.expect.message) assert.ok(formatErrorTree(full.error!).includes(c.expect.message), `"${c.expect.message}" in\n${formatErrorTree(full.error!)}`);
      if (c.expect.code) assert.ok(full.problems.some((p) => p.code === c.expect.code), `${c.expect.code} in ${full.problems.map((p) => p.code).join(', ')}`);
      for (const p of full.problems) assert.ok(p.place === undefined || /^[^:]+:\d+$/.test(p.place), `place ${p.place}`);
    });
  }
});

const img = (n: number) => `quay.io/x/foo@sha256:${String(n).repeat(64).slice(0, 64)}`;
function cfg(entries: { name: string; replaces?: string; skips?: string[]; skipRange?: string }[], versions: Record<string, string>): DeclarativeConfig {
  return {
    packages: [{ schema: 'olm.package', name: 'foo', defaultChannel: 'stable' }],
    channels: [{ schema: 'olm.channel', name: 'stable', package: 'foo', entries }],
    bundles: Object.entries(versions).map(([name, version], i) => ({ schema: 'olm.bundle', name, package: 'foo', image: img(i + 1), properties: [{ type: 'olm.package', value: { packageName: 'foo', version } }] })),
    deprecations: [],
    others: [],
  };
}

describe('catalog/validate: rules', () => {
  it('reports every problem at once, as a tree package → channel → bundle with places and hints', () => {
    const l = loadFromFiles('cat', [
      {
        path: 'foo/catalog.yaml',
        text: `schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: a\n  - name: b\n    replaces: a\n    skipRange: '>=1.0'\n  - name: c\n    replaces: a\n---\nschema: olm.bundle\nname: a\npackage: foo\nimage: ${img(1)}\nproperties: [{type: olm.package, value: {packageName: foo, version: 1.0.0}}]\n---\nschema: olm.bundle\nname: b\npackage: foo\nimage: ${img(2)}\nproperties: [{type: olm.package, value: {packageName: foo, version: 1.1.0}}]\n---\nschema: olm.bundle\nname: c\npackage: foo\nimage: ${img(3)}\nproperties: [{type: olm.package, value: {packageName: foo, version: 1.1.0}}]\n`,
      },
    ]);
    const r = validateCatalog(l);
    assert.equal(r.passed, false);
    const tree = formatErrorTree(r.error!);
    assert.match(tree, /^invalid catalog "cat"/);
    assert.match(tree, /foo\/catalog\.yaml:1: invalid package "foo"/);
    assert.match(tree, /foo\/catalog\.yaml:5: invalid channel "stable"/);
    assert.match(tree, /multiple channel heads found in graph: b, c/);
    assert.match(tree, /foo\/catalog\.yaml:10: invalid bundle "b"[\s\S]*invalid skipRange ">=1\.0"/);
    assert.match(tree, /duplicate versions found in bundles: \[\{1\.1\.0: \[b, c\]\}\]/);
    assert.match(tree, /hint: /);
    assert.deepEqual(r.problems.map((p) => p.code).sort(), ['bundle-skiprange-invalid', 'channel-multiple-heads', 'package-duplicate-versions']);
    assert.deepEqual(r.problems.find((p) => p.code === 'bundle-skiprange-invalid')!.path, ['invalid package "foo"', 'invalid channel "stable"', 'invalid bundle "b"']);
  });

  it('walks the replaces chain like opm: cycles name the loop, the walk stops at skipped targets', () => {
    const cyc = validateCatalog(cfg([{ name: 'h', replaces: 'b' }, { name: 'b', replaces: 'c' }, { name: 'c', replaces: 'b' }], { h: '3.0.0', b: '2.0.0', c: '1.0.0' }));
    assert.match(formatErrorTree(cyc.error!), /detected cycle in replaces chain of upgrade graph: b -> c -> b/);
    const ok = validateCatalog(cfg([{ name: 'a' }, { name: 'b', replaces: 'a' }, { name: 'c', replaces: 'b', skips: ['a'] }], { a: '1.0.0', b: '1.1.0', c: '1.2.0' }));
    assert.equal(ok.passed, true);
  });

  it('checks reachability (olmpub): a skip loop beside the head passes opm but not olmpub; skipRange counts as a path', () => {
    const loop = cfg([{ name: 'a', skips: ['b'] }, { name: 'b', skips: ['a'] }, { name: 'h' }], { a: '1.0.0', b: '1.0.1', h: '1.1.0' });
    assert.equal(validateCatalog(loop, { rules: 'opm' }).passed, true);
    const r = validateCatalog(loop);
    assert.match(formatErrorTree(r.error!), /channel contains bundles that cannot upgrade to the head "h": a, b/);
    const viaRange = cfg([{ name: 'a', skips: ['b'] }, { name: 'b', skips: ['a'] }, { name: 'h', skipRange: '<1.1.0' }], { a: '1.0.0', b: '1.0.1', h: '1.1.0' });
    assert.equal(validateCatalog(viaRange).passed, true, 'the skipRange of h reaches a and b');
  });

  it('applies the OLM v1 limits only with the default rules', () => {
    const c = cfg([{ name: 'a' }], { a: '1.0.0' });
    c.bundles[0]!.properties.push({ type: 'olm.gvk.required', value: { group: 'g', kind: 'K', version: 'v1' } });
    c.bundles[0]!.properties.push({ type: 'olm.csv.metadata', value: { installModes: [{ type: 'AllNamespaces', supported: false }] } });
    assert.equal(validateCatalog(c, { rules: 'opm' }).passed, true);
    const r = validateCatalog(c);
    assert.deepEqual(r.problems.map((p) => p.code).sort(), ['olmv1-dependency', 'olmv1-install-mode']);
  });

  it('accepts csv.metadata without installModes; warns about tags and about replaces+skips of one bundle', () => {
    const c = cfg([{ name: 'a' }, { name: 'b', replaces: 'a', skips: ['a'] }], { a: '1.0.0', b: '1.1.0' });
    c.bundles[0]!.image = 'quay.io/x/foo:1.0.0';
    c.bundles[0]!.properties.push({ type: 'olm.csv.metadata', value: { displayName: 'x' } });
    assert.equal(validateCatalog(c, { rules: 'opm' }).passed, true);
    const r = validateCatalog(c);
    assert.equal(r.passed, true);
    assert.deepEqual(r.warnings.map((w) => w.code).sort(), ['bundle-image-tag', 'entry-replaces-and-skips']);
    assert.match(r.warnings.find((w) => w.code === 'entry-replaces-and-skips')!.hint!, /operator-registry#1749/);
  });

  it('passes an empty catalog (as opm does)', () => {
    assert.equal(validateCatalog({ packages: [], channels: [], bundles: [], deprecations: [], others: [] }).passed, true);
  });

  it('reports the default channel placeholder the way opm does, with a hint naming the real channels', () => {
    const c = cfg([{ name: 'a' }], { a: '1.0.0' });
    c.packages[0]!.defaultChannel = 'fast';
    const r = validateCatalog(c);
    const p = r.error!.children[0]!.children[0]!;
    assert.equal(p.message, 'invalid channel "fast"');
    assert.equal(p.children[0]!.message, 'channel must contain at least one bundle');
    assert.match(p.children[0]!.hint!, /set defaultChannel to one of: stable/);
  });

  it('validates releases like opm (length, normalized name, no build metadata with a release)', () => {
    const c = cfg([{ name: 'foo-v1.0.0-2' }], { 'foo-v1.0.0-2': '1.0.0+b' });
    (c.bundles[0]!.properties[0]!.value as Record<string, string>).release = '2';
    const r = validateCatalog(c);
    assert.deepEqual(r.problems.map((p) => p.code), ['bundle-name-not-normalized', 'bundle-build-and-release']);
  });
});
