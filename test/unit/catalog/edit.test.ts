import assert from 'node:assert/strict';
import { OlmpubError, formatErrorTree } from '../../../lib/errors.js';
import { editTemplate } from '../../../catalog/template/edit.js';

const D = (n: number) => `quay.io/x/foo-bundle@sha256:${n.toString(16).padStart(64, '0')}`;
const TEXT = `# Catalog of foo: keep this comment
schema: olmpub.catalog.v1
package:
  name: foo # the package
channels:
  streams: major
versions:
  # the first release
  - version: 1.0.0
    image: ${D(1)}
    stage: stable
  - version: 1.1.0
    image: ${D(2)}
    stage: fast # promoted on 2026-11-01
  - version: 1.2.0
    image: ${D(3)}
`;

describe('catalog/template: edits (promote, deprecate, add a version)', () => {
  it('promotes by changing only the stage, keeping comments, and reports the moved heads', () => {
    const r = editTemplate(TEXT, 't.yaml', { kind: 'promote', version: '1.2.0', to: 'stable' });
    assert.equal(r.changed, true);
    assert.equal(r.text, TEXT.replace(`image: ${D(3)}\n`, `image: ${D(3)}\n    stage: stable\n`));
    assert.deepEqual(r.summary, ['version 1.2.0: candidate → stable']);
    assert.deepEqual(r.notes, ['channel fast-v1: head 1.1.0 → 1.2.0', 'channel stable-v1: head 1.0.0 → 1.2.0']);
    assert.equal(r.report.passed, true);
    const again = editTemplate(r.text, 't.yaml', { kind: 'promote', version: '1.1.0', to: 'stable' });
    assert.ok(again.text.includes('stage: stable # promoted on 2026-11-01'), 'the trailing comment stays');
  });

  it('does nothing for a version already there, and refuses to move a version back', () => {
    const same = editTemplate(TEXT, 't.yaml', { kind: 'promote', version: '1.1.0', to: 'fast' });
    assert.equal(same.changed, false);
    assert.equal(same.text, TEXT);
    assert.deepEqual(same.notes, ['version 1.1.0 is already in fast']);
    assert.throws(
      () => editTemplate(TEXT, 't.yaml', { kind: 'promote', version: '1.0.0', to: 'fast' }),
      (err: unknown) => err instanceof OlmpubError && err.code === 'demotion-refused' && /would strand users subscribed to stable/.test(err.message) && err.place === 't.yaml:9',
    );
    assert.throws(() => editTemplate(TEXT, 't.yaml', { kind: 'promote', version: '9.9.9', to: 'fast' }), (err: unknown) => err instanceof OlmpubError && err.code === 'unknown-version' && err.exitCode === 2);
  });

  it('deprecates a bundle, a channel and the package; a second call updates the message', () => {
    const r = editTemplate(TEXT, 't.yaml', [
      { kind: 'deprecate-bundle', version: '1.0.0', message: 'CVE-2026-1' },
      { kind: 'deprecate-channel', channel: 'candidate-v1', message: 'use fast-v1' },
      { kind: 'deprecate-package', message: 'replaced by bar' },
    ]);
    assert.ok(r.text.startsWith(TEXT));
    assert.ok(r.text.endsWith(`deprecations:\n  bundles:\n    - version: 1.0.0\n      message: CVE-2026-1\n  channels:\n    - name: candidate-v1\n      message: use fast-v1\n  package:\n    message: replaced by bar\n`));
    assert.deepEqual(r.rendered.config.deprecations[0]!.entries.map((e) => `${e.reference.schema}/${e.reference.name ?? ''}`), ['olm.package/', 'olm.channel/candidate-v1', 'olm.bundle/foo.v1.0.0']);
    const upd = editTemplate(r.text, 't.yaml', { kind: 'deprecate-bundle', version: '1.0.0', message: 'CVE-2026-2' });
    assert.deepEqual(upd.summary, ['version 1.0.0: deprecation message updated']);
    assert.ok(upd.text.includes('message: CVE-2026-2') && !upd.text.includes('CVE-2026-1'));
    assert.equal(editTemplate(upd.text, 't.yaml', { kind: 'deprecate-bundle', version: '1.0.0', message: 'CVE-2026-2' }).changed, false);
  });

  it('notes when what users get by default becomes deprecated', () => {
    const r = editTemplate(TEXT, 't.yaml', [
      { kind: 'deprecate-channel', channel: 'stable-v1', message: 'x' },
      { kind: 'deprecate-bundle', version: '1.0.0', message: 'y' },
    ]);
    assert.ok(r.notes.some((n) => /default channel stable-v1 is deprecated/.test(n)));
    assert.ok(r.notes.some((n) => /head of the default channel \(1\.0\.0\) is deprecated/.test(n)));
  });

  it('refuses a deprecation of a channel the template does not generate, leaving the text alone', () => {
    assert.throws(() => editTemplate(TEXT, 't.yaml', { kind: 'deprecate-channel', channel: 'beta', message: 'x' }), (err: unknown) => /deprecated channel "beta" is not one of the channels/.test(formatErrorTree(err as OlmpubError)));
  });

  it('adds a released version in version order; a released version is immutable', () => {
    const r = editTemplate(TEXT, 't.yaml', { kind: 'add-version', version: '1.1.1', image: D(4) });
    const order = [...r.text.matchAll(/- version: (\S+)/g)].map((m) => m[1]);
    assert.deepEqual(order, ['1.0.0', '1.1.0', '1.1.1', '1.2.0']);
    assert.deepEqual(r.summary, ['version 1.1.1 added (candidate)']);
    assert.equal(editTemplate(TEXT, 't.yaml', { kind: 'add-version', version: '1.2.0', image: D(3) }).changed, false);
    assert.throws(() => editTemplate(TEXT, 't.yaml', { kind: 'add-version', version: '1.2.0', image: D(5) }), (err: unknown) => (err as OlmpubError).code === 'version-exists');
  });

  it('refuses an edit whose rendered catalog fails validation (here: a bundle with a dependency OLM v1 rejects)', () => {
    const bundles = ['1.0.0', '1.1.0', '1.2.0'].map((v) => ({
      name: `foo.v${v}`,
      version: v,
      properties: v === '1.2.0' ? [{ type: 'olm.package.required', value: { packageName: 'bar', versionRange: '>=1.0.0' } }] : [],
      relatedImages: [],
    }));
    assert.throws(
      () => editTemplate(TEXT, 't.yaml', { kind: 'promote', version: '1.2.0', to: 'fast' }, { bundles }),
      (err: unknown) => err instanceof OlmpubError && err.code === 'edit-refused' && /has a dependency declared via property "olm.package.required"/.test(formatErrorTree(err)),
    );
  });

  it('keeps the file\'s own indentation and aligned comments when it adds lines', () => {
    const text = `schema: olmpub.catalog.v1
package: {name: foo}
versions:
    -   version: 1.0.0    # aligned
        image: ${D(1)}
    -   version: 1.2.0    # comments
        image: ${D(3)}
deprecations:
    channels:
        - name: candidate-v1   # x
          message: old
`;
    const r = editTemplate(text, 't.yaml', [
      { kind: 'promote', version: '1.0.0', to: 'fast' },
      { kind: 'add-version', version: '1.1.0', image: D(2) },
      { kind: 'deprecate-bundle', version: '1.0.0', message: 'CVE: upgrade' },
      { kind: 'deprecate-channel', channel: 'fast-v1', message: 'use stable' },
    ]);
    assert.equal(
      r.text,
      `schema: olmpub.catalog.v1
package: {name: foo}
versions:
    -   version: 1.0.0    # aligned
        image: ${D(1)}
        stage: fast
    - version: 1.1.0
      image: ${D(2)}
      stage: candidate
    -   version: 1.2.0    # comments
        image: ${D(3)}
deprecations:
    channels:
        - name: candidate-v1   # x
          message: old
        - name: fast-v1
          message: use stable
    bundles:
      - version: 1.0.0
        message: "CVE: upgrade"
`,
    );
    assert.equal(r.report.passed, true);
  });

  it('falls back to the Document API for flow-style templates, keeping comments', () => {
    const text = `# flow style\nschema: olmpub.catalog.v1\npackage: {name: foo}\nversions: [{version: 1.0.0, image: "${D(1)}"}]\n`;
    const r = editTemplate(text, 't.yaml', [{ kind: 'promote', version: '1.0.0', to: 'stable' }, { kind: 'deprecate-package', message: 'bye' }]);
    assert.ok(r.text.startsWith('# flow style\n'));
    assert.equal(r.template.versions[0]!.stage, 'stable');
    assert.equal(r.template.deprecations.package!.message, 'bye');
  });
});

