import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OlmpubError, formatErrorTree } from '../../../lib/errors.js';
import { REPO_ROOT } from '../../support/env.js';
import { parseTemplate } from '../../../catalog/template/template.js';
import { renderTemplate } from '../../../catalog/template/render.js';

const TEMPLATE = join(REPO_ROOT, 'test/fixtures/catalogs/templates/inference-operator.yaml');
const D = (c: string) => `quay.io/x/b@sha256:${c.repeat(64)}`;

function problems(text: string): { line: number; message: string; hint?: string }[] {
  try {
    parseTemplate(text, 't.yaml');
  } catch (err) {
    assert.ok(err instanceof OlmpubError);
    assert.equal(err.code, 'template-invalid');
    return err.children.map((c) => ({ line: Number(c.place!.split(':')[1]), message: c.message, ...(c.hint ? { hint: c.hint } : {}) }));
  }
  assert.fail('expected the template to be rejected');
}

const head = `schema: olmpub.catalog.v1\npackage:\n  name: foo\n`;

describe('catalog/template: parsing', () => {
  it('reads the fixture template with defaults filled in', () => {
    const t = parseTemplate(readFileSync(TEMPLATE, 'utf8'), TEMPLATE);
    assert.equal(t.package.name, 'inference-operator');
    assert.match(t.package.description!, /^# Inference operator/);
    assert.deepEqual(t.package.icon && { path: t.package.icon.path, mediatype: t.package.icon.mediatype }, { path: 'icon.svg', mediatype: 'image/svg+xml' });
    assert.deepEqual(t.channels, { archetypes: ['candidate', 'fast', 'stable'], streams: ['major', 'minor'], defaultStream: 'major', skipRange: 'major', crossMajorUpgrades: true });
    assert.deepEqual(t.versions.map((v) => [v.version, v.stage]), [['0.9.0', 'stable'], ['1.0.0', 'stable'], ['1.0.1', 'stable'], ['1.1.0', 'fast'], ['1.2.0-rc.1', 'candidate']]);
    assert.deepEqual(t.deprecations.bundles.map((b) => b.version), ['1.0.0']);
    assert.equal(t.versions[0]!.pos.line, 20);
  });

  it('defaults: major channels, all archetypes, stage candidate, skipRange major', () => {
    const t = parseTemplate(`${head}versions:\n  - version: 1.0.0\n    image: ${D('a')}\n`, 't.yaml');
    assert.deepEqual(t.channels.streams, ['major']);
    assert.equal(t.versions[0]!.stage, 'candidate');
    assert.equal(t.channels.skipRange, 'major');
    assert.equal(t.channels.crossMajorUpgrades, false);
  });

  it('rejects unknown keys, naming the line and suggesting the right key', () => {
    const p = problems(`${head}versions:\n  - Version: 1.0.0\n    image: ${D('a')}\n    stage: stable\n    channel: fast\n`);
    assert.deepEqual(p.map((x) => x.line), [5, 5, 8]);
    assert.match(p[0]!.message, /unknown field "Version" in a versions item/);
    assert.match(p[0]!.hint!, /did you mean "version"\?/);
    assert.match(p[2]!.message, /unknown field "channel"/);
  });

  it('explains versions YAML reads as numbers, a leading v, duplicates and build-only differences', () => {
    const p = problems(`${head}versions:\n  - version: 1.2\n    image: ${D('a')}\n  - version: v1.3.0\n    image: ${D('b')}\n  - version: 1.4.0\n    image: ${D('c')}\n  - version: 1.4.0\n    image: ${D('d')}\n  - version: 1.5.0+a\n    image: ${D('e')}\n  - version: 1.5.0+b\n    image: ${D('f')}\n`);
    assert.match(p[0]!.message, /version must be a string \(got 1\.2\)/);
    assert.match(p[0]!.hint!, /quote the version/);
    assert.match(p[1]!.message, /version "v1.3.0" is not valid semver/);
    assert.match(p[1]!.hint!, /drop the leading "v": 1\.3\.0/);
    assert.match(p[2]!.message, /version 1\.4\.0 is listed twice \(first at line 9\)/);
    assert.equal(p[2]!.line, 11);
    assert.match(p[3]!.message, /differ only in build metadata/);
  });

  it('requires bundle images pinned by digest', () => {
    const p = problems(`${head}versions:\n  - version: 1.0.0\n    image: quay.io/x/b:1.0.0\n  - version: 1.1.0\n    image: Quay.io/X/b@sha256:abc\n`);
    assert.match(p[0]!.message, /is not pinned by digest/);
    assert.equal(p[0]!.line, 6);
    assert.match(p[1]!.message, /is not a valid image reference/);
  });

  it('checks stages, archetypes, streams, defaultStream, icon and deprecations', () => {
    const p = problems(
      `${head}  icon: {path: logo.bmp}\nchannels:\n  archetypes: [fast, stable, beta]\n  streams: minor\n  defaultStream: major\n  skipRange: patch\n  crossMajorUpgrades: yes please\nversions:\n  - version: 1.0.0\n    image: ${D('a')}\n    stage: candidate\n  - version: 1.1.0\n    image: ${D('b')}\n    stage: gold\ndeprecations:\n  bundles:\n    - version: 9.9.9\n      message: gone\n  channels:\n    - name: stable-v1\n      message: ''\n`,
    );
    const msgs = p.map((x) => x.message).join('\n');
    assert.match(msgs, /cannot tell the media type of icon "logo.bmp"/);
    assert.match(msgs, /unknown archetype "beta"/);
    assert.match(msgs, /channels.defaultStream is major but no major channels are generated/);
    assert.match(msgs, /channels.skipRange must be one of major, minor, none \(got "patch"\)/);
    assert.match(msgs, /crossMajorUpgrades must be true or false/);
    assert.match(msgs, /stage candidate, which is not among channels.archetypes \(fast, stable\)/);
    assert.match(msgs, /stage must be one of candidate, fast, stable \(got "gold"\)/);
    assert.match(msgs, /deprecated version 9\.9\.9 is not among the template's versions/);
    assert.match(msgs, /empty message in deprecation of channel stable-v1/);
  });

  it('requires schema, package.name and versions, and reports YAML syntax errors with their line', () => {
    const p = problems('package: {}\n');
    assert.match(p.map((x) => x.message).join('\n'), /missing "schema"[\s\S]*missing package.name[\s\S]*missing "versions"/);
    const s = problems(`${head}versions: [\n`);
    assert.ok(s[0]!.line >= 4);
    assert.match(problems('schema: olm.semver\npackage: {name: foo}\nversions: []\n')[0]!.message, /unknown schema "olm.semver"/);
    assert.match(problems(`schema: olmpub.catalog.v1\npackage: {name: Foo_Bar}\nversions: []\n`)[0]!.message, /is not a DNS-1123 label/);
  });

  it('accepts a version without an image (publish builds it) and renders it with the pushed image', () => {
    const tpl = parseTemplate(`${head}versions:\n  - version: 1.0.0\n`, 't.yaml');
    assert.equal(tpl.versions[0]!.image, undefined);
    const built = `quay.io/acme/bundle@sha256:${'c'.repeat(64)}`;
    const out = renderTemplate(tpl, { bundles: [{ name: 'foo.v1.0.0', version: '1.0.0', image: built, properties: [], relatedImages: [] }] });
    assert.equal(out.config.bundles[0]!.image, built);
    assert.throws(
      () => renderTemplate(tpl, { bundles: [{ name: 'foo.v1.0.0', version: '1.0.0', properties: [], relatedImages: [] }] }),
      (err: OlmpubError) => /has no bundle image/.test(formatErrorTree(err)),
    );
  });

  it('formats as a tree whose leaves carry file:line and a hint', () => {
    try {
      parseTemplate(`${head}versions:\n  - version: 1.0.0\n    image: quay.io/acme/bundle:v1.0.0\n`, 'catalog/template.yaml');
      assert.fail('expected an error');
    } catch (err) {
      const text = formatErrorTree(err as OlmpubError);
      assert.match(text, /^invalid catalog template "catalog\/template.yaml"/);
      assert.match(text, /└── catalog\/template.yaml:6: image "quay.io\/acme\/bundle:v1.0.0" of version 1\.0\.0 is not pinned by digest \[template-invalid-field\]\n\s+hint: push the bundle, then reference it as <registry>\/<repo>@sha256:<digest>/);
    }
  });
});
