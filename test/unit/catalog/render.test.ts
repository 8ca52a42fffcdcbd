import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { OlmpubError, formatErrorTree } from '../../../lib/errors.js';
import { REPO_ROOT } from '../../support/env.js';
import { parseTemplate, ARCHETYPES, type CatalogTemplate } from '../../../catalog/template/template.js';
import { renderTemplate } from '../../../catalog/template/render.js';
import { renderCatalogFiles } from '../../../catalog/fbc/write.js';
import { validateCatalog } from '../../../catalog/validate/validate.js';
import { resolveUpgrade } from '../../../catalog/resolve/resolve.js';
import { readBundleInfoFile } from '../../../catalog/io.js';
import * as blang from '../../../catalog/semver/blang.js';

const TPL_DIR = join(REPO_ROOT, 'test/fixtures/catalogs/templates');
const GOLDEN = join(REPO_ROOT, 'test/fixtures/catalogs/valid/rendered-template/catalog');
const D = (n: number) => `quay.io/x/foo-bundle@sha256:${n.toString(16).padStart(64, '0')}`;

function tpl(body: string): CatalogTemplate {
  return parseTemplate(`schema: olmpub.catalog.v1\npackage:\n  name: foo\n${body}`, 't.yaml');
}
function versions(list: [string, string][]): string {
  return 'versions:\n' + list.map(([v, s], i) => `  - version: ${v}\n    image: ${D(i + 1)}\n    stage: ${s}\n`).join('');
}
const entry = (r: ReturnType<typeof renderTemplate>, ch: string, v: string) => r.config.channels.find((c) => c.name === ch)!.entries.find((e) => e.name === `foo.v${v}`)!;

describe('catalog/template: render', () => {
  it('renders the fixture template to the golden FBC, byte for byte', async () => {
    const t = parseTemplate(readFileSync(join(TPL_DIR, 'inference-operator.yaml'), 'utf8'), join(TPL_DIR, 'inference-operator.yaml'));
    const bundles = await readBundleInfoFile(join(TPL_DIR, 'bundles.yaml'));
    const iconBase64 = readFileSync(join(TPL_DIR, 'icon.svg')).toString('base64');
    const r = renderTemplate(t, { bundles, iconBase64 });
    const files = renderCatalogFiles(r.config, 'json');
    assert.deepEqual([...files.keys()], readdirSync(GOLDEN).map((d) => `${d}/catalog.json`));
    for (const [path, content] of files) assert.equal(content, readFileSync(join(GOLDEN, path), 'utf8'), path);
    assert.equal(r.defaultChannel, 'stable-v1');
  });

  it('puts a version in its stage and every lower archetype, with major and minor channel names', () => {
    const r = renderTemplate(tpl(`channels: {streams: both}\n${versions([['1.0.0', 'stable'], ['1.1.0', 'fast'], ['1.2.0', 'candidate'], ['2.0.0', 'stable']])}`), { allowMissingBundles: true });
    const members = Object.fromEntries(r.channels.map((c) => [c.name, c.entries.map((e) => e.version).join(' ')]));
    assert.deepEqual(members, {
      'candidate-v1': '1.0.0 1.1.0 1.2.0', 'candidate-v1.0': '1.0.0', 'candidate-v1.1': '1.1.0', 'candidate-v1.2': '1.2.0', 'candidate-v2': '2.0.0', 'candidate-v2.0': '2.0.0',
      'fast-v1': '1.0.0 1.1.0', 'fast-v1.0': '1.0.0', 'fast-v1.1': '1.1.0', 'fast-v2': '2.0.0', 'fast-v2.0': '2.0.0',
      'stable-v1': '1.0.0', 'stable-v1.0': '1.0.0', 'stable-v2': '2.0.0', 'stable-v2.0': '2.0.0',
    });
    assert.equal(r.defaultChannel, 'stable-v2', 'most stable archetype, highest version, major kind');
  });

  it('derives edges like the semver template, never replaces and skips to the same bundle', () => {
    const r = renderTemplate(tpl(versions([['1.0.0', 'stable'], ['1.0.1', 'stable'], ['1.1.0', 'stable'], ['1.2.0', 'stable'], ['1.2.1', 'stable']])), { allowMissingBundles: true });
    assert.deepEqual(entry(r, 'stable-v1', '1.0.0'), { name: 'foo.v1.0.0' });
    assert.deepEqual(entry(r, 'stable-v1', '1.0.1'), { name: 'foo.v1.0.1', skips: ['foo.v1.0.0'], skipRange: '>=1.0.0 <1.0.1' });
    assert.deepEqual(entry(r, 'stable-v1', '1.1.0'), { name: 'foo.v1.1.0', replaces: 'foo.v1.0.1', skips: ['foo.v1.0.0'], skipRange: '>=1.0.0 <1.1.0' });
    assert.deepEqual(entry(r, 'stable-v1', '1.2.0'), { name: 'foo.v1.2.0', skipRange: '>=1.0.0 <1.2.0' }, 'a lower patch gets only a skipRange');
    assert.deepEqual(entry(r, 'stable-v1', '1.2.1'), { name: 'foo.v1.2.1', replaces: 'foo.v1.1.0', skips: ['foo.v1.0.0', 'foo.v1.0.1', 'foo.v1.2.0'], skipRange: '>=1.0.0 <1.2.1' });
  });

  it('honours skipRange policies and starts a major range at its lowest prerelease', () => {
    const minor = renderTemplate(tpl(`channels: {skipRange: minor}\n${versions([['1.0.0', 'stable'], ['1.1.0', 'stable'], ['1.1.1', 'stable']])}`), { allowMissingBundles: true });
    assert.equal(entry(minor, 'stable-v1', '1.1.1').skipRange, '>=1.1.0 <1.1.1');
    assert.equal(entry(minor, 'stable-v1', '1.1.0').skipRange, undefined);
    const none = renderTemplate(tpl(`channels: {skipRange: none}\n${versions([['1.0.0', 'stable'], ['1.1.0', 'stable']])}`), { allowMissingBundles: true });
    assert.equal(entry(none, 'stable-v1', '1.1.0').skipRange, undefined);
    const pre = renderTemplate(tpl(versions([['2.0.0-rc.1', 'candidate'], ['2.0.0', 'candidate']])), { allowMissingBundles: true });
    assert.equal(entry(pre, 'candidate-v2', '2.0.0').skipRange, '>=2.0.0-rc.1 <2.0.0');
  });

  it('crosses majors only with crossMajorUpgrades', () => {
    const v = versions([['1.0.0', 'stable'], ['1.1.0', 'stable'], ['2.0.0', 'stable'], ['2.0.1', 'stable']]);
    assert.equal(entry(renderTemplate(tpl(v), { allowMissingBundles: true }), 'stable-v2', '2.0.1').replaces, undefined);
    const r = renderTemplate(tpl(`channels: {crossMajorUpgrades: true}\n${v}`), { allowMissingBundles: true });
    assert.equal(entry(r, 'stable-v2', '2.0.1').replaces, 'foo.v1.1.0');
    assert.deepEqual(entry(r, 'stable-v2', '2.0.1').skips, ['foo.v2.0.0']);
    assert.equal(validateCatalog(r.config).passed, true);
  });

  it('uses bundle facts: names, properties (sorted, olm.package added), related images with the bundle image', () => {
    const t = tpl(versions([['1.0.0', 'stable']]));
    const r = renderTemplate(t, {
      bundles: [{ name: 'foo.v1.0.0', version: '1.0.0', properties: [{ type: 'olm.csv.metadata', value: { displayName: 'Foo' } }, { type: 'olm.gvk', value: { version: 'v1', kind: 'K', group: 'g' } }], relatedImages: [{ name: 'manager', image: 'quay.io/x/mgr@sha256:' + 'e'.repeat(64) }] }],
    });
    const b = r.config.bundles[0]!;
    assert.deepEqual(b.properties.map((p) => p.type), ['olm.gvk', 'olm.package', 'olm.csv.metadata']);
    assert.deepEqual(b.properties[1]!.value, { packageName: 'foo', version: '1.0.0' });
    assert.deepEqual(b.relatedImages, [{ name: '', image: D(1) }, { name: 'manager', image: 'quay.io/x/mgr@sha256:' + 'e'.repeat(64) }], 'sorted by image, as opm render');
  });

  it('refuses inconsistent bundle facts and missing ones, naming the template line', () => {
    const t = tpl(versions([['1.0.0', 'stable'], ['1.1.0', 'stable']]));
    try {
      renderTemplate(t, { bundles: [{ name: 'foo.v1.0.0', version: '1.0.0', image: D(9), properties: [{ type: 'olm.package', value: { packageName: 'bar', version: '1.0.0' } }], relatedImages: [] }] });
      assert.fail('expected an error');
    } catch (err) {
      const text = formatErrorTree(err as OlmpubError);
      assert.match(text, /t\.yaml:5: version 1\.0\.0: the template lists image .* but the bundle was built as/);
      assert.match(text, /declares olm\.package "bar" "1\.0\.0"/);
      assert.match(text, /t\.yaml:8: no bundle information for version 1\.1\.0/);
    }
  });

  it('checks the default channel and deprecations against the generated channels', () => {
    const tree = (re: RegExp) => (err: unknown) => re.test(formatErrorTree(err as OlmpubError));
    assert.throws(() => renderTemplate(tpl(`channels: {default: stable-v9}\n${versions([['1.0.0', 'stable']])}`), { allowMissingBundles: true }), tree(/t\.yaml:4: default channel "stable-v9" is not one of the channels[\s\S]*hint: use one of: candidate-v1, fast-v1, stable-v1/));
    assert.throws(() => renderTemplate(tpl(`${versions([['1.0.0', 'stable']])}deprecations:\n  channels:\n    - name: beta\n      message: x\n`), { allowMissingBundles: true }), tree(/deprecated channel "beta" is not one of the channels/));
    const r = renderTemplate(tpl(`${versions([['1.0.0', 'stable'], ['1.1.0', 'stable']])}deprecations:\n  package: {message: p}\n  channels: [{name: fast-v1, message: c}]\n  bundles: [{version: 1.0.0, message: b}]\n`), { allowMissingBundles: true });
    assert.deepEqual(r.config.deprecations[0]!.entries, [
      { reference: { schema: 'olm.package' }, message: 'p' },
      { reference: { schema: 'olm.channel', name: 'fast-v1' }, message: 'c' },
      { reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'b' },
    ]);
  });

  describe('properties that hold for any template (seeded random templates)', () => {
    // A small deterministic PRNG (mulberry32) so failures reproduce.
    function rng(seed: number) {
      return () => {
        seed |= 0;
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
    }
    for (let seed = 1; seed <= 60; seed++) {
      it(`seed ${seed}: valid, one head per channel, no replaces∩skips, OLM v1 reaches the head from every version`, () => {
        const rand = rng(seed);
        const pick = <T>(a: readonly T[]) => a[Math.floor(rand() * a.length)]!;
        const set = new Set<string>();
        const n = 1 + Math.floor(rand() * 12);
        while (set.size < n) {
          const v = `${Math.floor(rand() * 3)}.${Math.floor(rand() * 4)}.${Math.floor(rand() * 4)}${rand() < 0.15 ? `-rc.${1 + Math.floor(rand() * 2)}` : ''}`;
          set.add(v);
        }
        const list = [...set].map((v) => [v, pick(ARCHETYPES)] as [string, string]);
        const policy = `channels:\n  streams: ${pick(['major', 'minor', 'both'])}\n  skipRange: ${pick(['major', 'minor', 'none'])}\n  crossMajorUpgrades: ${rand() < 0.5}\n`;
        const t = tpl(policy + versions(list));
        const r = renderTemplate(t, { allowMissingBundles: true });
        const report = validateCatalog(r.config);
        assert.equal(report.passed, true, report.error && formatErrorTree(report.error));
        for (const ch of r.config.channels) {
          for (const e of ch.entries) assert.ok(!e.replaces || !(e.skips ?? []).includes(e.replaces), `${ch.name} ${e.name}`);
          const plan = r.channels.find((c) => c.name === ch.name)!;
          const max = plan.entries.reduce((a, b) => (blang.compare(blang.parse(b.version), blang.parse(a.version)) > 0 ? b : a));
          assert.equal(plan.head, max.version, 'the head is the highest version');
          for (const e of plan.entries) {
            if (e.version === plan.head) continue;
            const res = resolveUpgrade(r.config, { installed: e.version, channels: [ch.name] });
            assert.equal(res.selected?.version, plan.head, `${ch.name}: from ${e.version}`);
          }
        }
      });
    }
  });
});
