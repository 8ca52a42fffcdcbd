import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBlobs, goJSON, renderCatalogFiles, writeCatalogDir } from '../../../catalog/fbc/write.js';
import { loadFromFiles } from '../../../catalog/fbc/load.js';
import type { DeclarativeConfig } from '../../../catalog/fbc/types.js';

function sample(): DeclarativeConfig {
  return {
    packages: [{ schema: 'olm.package', name: 'foo', defaultChannel: 'stable', description: 'Foo\noperator', icon: { base64data: 'PHN2Zy8+', mediatype: 'image/svg+xml' } }],
    channels: [
      { schema: 'olm.channel', name: 'stable', package: 'foo', entries: [{ name: 'foo.v1.0.0' }, { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0', skipRange: '>=1.0.0 <1.1.0' }] },
      { schema: 'olm.channel', name: 'fast', package: 'foo', entries: [{ name: 'foo.v1.0.0' }] },
    ],
    bundles: [
      { schema: 'olm.bundle', name: 'foo.v1.1.0', package: 'foo', image: 'q.io/f@sha256:' + 'b'.repeat(64), properties: [{ type: 'olm.package', value: { version: '1.1.0', packageName: 'foo' } }] },
      { schema: 'olm.bundle', name: 'foo.v1.0.0', package: 'foo', image: 'q.io/f@sha256:' + 'a'.repeat(64), properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } }], relatedImages: [{ name: '', image: 'q.io/f@sha256:' + 'a'.repeat(64) }] },
    ],
    deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: 'old' }] }],
    others: [
      { schema: 'z.example', package: 'foo', name: 'z', blob: { schema: 'z.example', package: 'foo', name: 'z', b: 1, a: { d: 1, c: 2 } } },
      { schema: 'a.example', package: '', name: 'root', blob: { schema: 'a.example', name: 'root' } },
    ],
  };
}

describe('catalog/fbc: writing (opm WriteFS layout)', () => {
  it('lays out <package>/catalog.json, root others in catalog.json, in opm order', () => {
    const files = renderCatalogFiles(sample(), 'json');
    assert.deepEqual([...files.keys()], ['foo/catalog.json', 'catalog.json']);
    const text = files.get('foo/catalog.json')!;
    const order = [...text.matchAll(/^    "schema": "([^"]+)",\n    "name": "([^"]*)"/gm)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(order, ['olm.package foo', 'olm.channel fast', 'olm.channel stable', 'olm.bundle foo.v1.0.0', 'olm.bundle foo.v1.1.0']);
    assert.ok(text.indexOf('z.example') > text.indexOf('foo.v1.1.0') && text.indexOf('olm.deprecations') > text.indexOf('z.example'), 'others after bundles, deprecations last');
  });

  it('encodes like Go: 4-space indent, struct field order, sorted keys in values, Go string escapes', () => {
    const text = renderCatalogFiles(sample(), 'json').get('foo/catalog.json')!;
    assert.ok(text.startsWith('{\n    "schema": "olm.package",\n    "name": "foo",\n    "defaultChannel": "stable",\n    "icon": {\n        "base64data": "PHN2Zy8+",\n        "mediatype": "image/svg+xml"\n    },\n    "description": "Foo\\noperator"\n}\n{'));
    assert.ok(text.includes('"value": {\n                "packageName": "foo",\n                "version": "1.1.0"\n            }'), 'property values with sorted keys');
    assert.ok(text.includes('"a": {\n        "c": 2,\n        "d": 1\n    },\n    "b": 1,'), 'other blobs with sorted keys');
    assert.equal(goJSON('<&>\u2028\b'), '"<&>\\u2028\\u0008"');
  });

  it('writes YAML documents each starting with ---, keys sorted, YAML 1.1 look-alikes double-quoted', () => {
    const text = encodeBlobs([{ schema: 'x', list: ['yes', 'on', '1.0', '', '~', 'a: b', '>=1.0.0 <2.0.0', 'plain'] }], 'yaml');
    assert.equal(text, `---\nlist:\n- "yes"\n- "on"\n- "1.0"\n- ""\n- "~"\n- 'a: b'\n- '>=1.0.0 <2.0.0'\n- plain\nschema: x\n`);
    const round = loadFromFiles('mem', [{ path: 'c.yaml', text: renderCatalogFiles(sample(), 'yaml').get('foo/catalog.yaml')! }]);
    assert.deepEqual(round.problems, []);
    assert.equal(round.config.bundles.length, 2);
  });

  it('is deterministic: input order does not change the bytes', () => {
    const a = sample();
    const b = sample();
    b.channels.reverse();
    b.bundles.reverse();
    assert.equal(renderCatalogFiles(a).get('foo/catalog.json'), renderCatalogFiles(b).get('foo/catalog.json'));
  });

  it('refuses a package name that is not a single path element', () => {
    const cfg = sample();
    cfg.packages[0]!.name = '../evil';
    cfg.channels = [];
    cfg.bundles = [];
    cfg.deprecations = [];
    cfg.others = [];
    assert.throws(() => renderCatalogFiles(cfg), /must be a single local path element/);
  });

  describe('writeCatalogDir', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'olmpub-write-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('replaces the directory atomically: stale files go, nothing half-written stays around', async () => {
      const out = join(dir, 'catalog');
      await mkdir(join(out, 'old'), { recursive: true });
      await writeFile(join(out, 'old', 'catalog.json'), '{}');
      const files = await writeCatalogDir(out, sample(), 'yaml');
      assert.deepEqual(files, ['foo/catalog.yaml', 'catalog.yaml']);
      assert.deepEqual((await readdir(out)).sort(), ['catalog.yaml', 'foo']);
      assert.deepEqual(await readdir(dir), ['catalog'], 'no temporary siblings left');
      assert.ok((await readFile(join(out, 'foo', 'catalog.yaml'), 'utf8')).startsWith('---\ndefaultChannel: stable\n'));
    });

    it('leaves the previous catalog when rendering fails', async () => {
      const out = join(dir, 'catalog');
      await writeCatalogDir(out, sample());
      const bad = sample();
      bad.packages[0]!.name = 'a/b';
      await assert.rejects(writeCatalogDir(out, bad), /single local path element/);
      assert.deepEqual((await readdir(out)).sort(), ['catalog.json', 'foo']);
    });
  });
});
