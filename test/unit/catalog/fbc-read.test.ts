import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStream, lineOf } from '../../../catalog/fbc/stream.js';
import { IndexIgnore, goPathMatch } from '../../../catalog/fbc/indexignore.js';
import { loadCatalogDir, loadFromFiles } from '../../../catalog/fbc/load.js';
import { parseNormalizedNamed, imageReferenceError, isDigestReference } from '../../../catalog/fbc/reference.js';

const PKG = 'schema: olm.package\nname: foo\ndefaultChannel: stable\n';

describe('catalog/fbc: streams (opm YAMLOrJSONDecoder)', () => {
  it('reads concatenated JSON objects with their lines', () => {
    const r = parseStream('{"a": 1}\n\n{\n  "b": [\n    {"c": 2}\n  ]\n}{"d":3}');
    assert.equal(r.error, undefined);
    assert.deepEqual(r.docs.map((d) => d.line), [1, 3, 7]);
    assert.equal(lineOf((r.docs[1]!.value as { b: object[] }).b[0]), 5);
  });

  it('reads YAML documents split at --- lines, with the line each starts on', () => {
    const r = parseStream(`---\n${PKG}---\n# comment before\nschema: olm.channel\nentries:\n  - name: a\n--- # separator with a comment\nschema: olm.bundle\n`);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.docs.map((d) => d.line), [2, 7, 11]);
    assert.equal(lineOf(((r.docs[1]!.value as { entries: object[] }).entries)[0]), 9);
  });

  it('switches to YAML after one JSON object, but not after two', () => {
    const one = parseStream('{"schema":"olm.package"}\nschema: olm.channel\n');
    assert.equal(one.error, undefined);
    assert.equal(one.docs.length, 2);
    const two = parseStream('{"schema":"a"}{"schema":"b"}\nschema: olm.channel\n');
    assert.match(two.error!.message, /invalid character "s" looking for beginning of value/);
    assert.equal(two.error!.line, 2);
  });

  it('resolves YAML 1.1 scalars like go-yaml v2 (yes is a boolean, no timestamps) and keys become strings', () => {
    const r = parseStream('a: yes\nb: 2001-12-14\nc: 010\n1: x\nd: 1.0\n');
    assert.deepEqual(r.docs[0]!.value, { a: true, b: '2001-12-14', c: 8, '1': 'x', d: 1 });
  });

  it('keeps a comment-only or blank document as null (opm: missing schema) and rejects junk after ---', () => {
    assert.deepEqual(parseStream(`${PKG}---\n\n`).docs.map((d) => d.value === null), [false, true]);
    assert.deepEqual(parseStream(`# only a comment\n---\n${PKG}`).docs.map((d) => d.value === null), [true, false]);
    assert.match(parseStream(`${PKG}--- x\n${PKG}`).error!.message, /invalid Yaml document separator: x/);
    assert.equal(parseStream(`${PKG}---\n`).docs.length, 1);
  });

  it('reports YAML syntax errors with their line', () => {
    const r = parseStream(`${PKG}---\nschema: olm.bundle\nname: [unclosed\n`);
    assert.match(r.error!.message, /error converting YAML to JSON/);
    assert.ok(r.error!.line >= 5);
  });

  it('rejects duplicate keys in a YAML mapping', () => {
    assert.ok(parseStream('a: 1\na: 2\n').error);
  });
});

describe('catalog/fbc: .indexignore (gitignore semantics as go-git)', () => {
  it('matches the joelanford/ignore test tree', () => {
    const m = new IndexIgnore();
    m.add('.indexignore', '# Always ignore a anywhere\na\n\n# Ignore the root ignore directory\n/ignore\n\n# Ignore files named "file1" in dir "really"\n/really/**/file1\n');
    m.add('dir1/.indexignore', '# Always ignore b anywhere in dir1\nb\n\n/ignore\n\n!a\n');
    const expect: Record<string, boolean> = {
      a: true, b: false, c: false, 'ignore/a': true, 'ignore/b': true, 'ignore/c': true,
      'dir1/a': false, 'dir1/b': true, 'dir1/c': false, 'dir1/ignore/a': false, 'dir1/ignore/b': true, 'dir1/ignore/c': true,
      'really/file1': true, 'really/file2': false, 'really/long/file1': true, 'really/long/path/to/the/file1': true, 'really/long/path/to/the/file2': false,
    };
    for (const [p, want] of Object.entries(expect)) assert.equal(m.ignores(p), want, p);
  });

  it('implements filepath.Match globs', () => {
    assert.ok(goPathMatch('*.md', 'README.md'));
    assert.ok(!goPathMatch('*.md', 'README.txt'));
    assert.ok(goPathMatch('catalog-?.json', 'catalog-1.json'));
    assert.ok(goPathMatch('[a-c]*', 'bundle'));
    assert.ok(!goPathMatch('[^a-c]*', 'bundle'));
    assert.ok(goPathMatch('\\*', '*'));
  });
});

describe('catalog/fbc: loading a directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'olmpub-fbc-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every file of any extension, records file:line, honours .indexignore, keeps other schemas', async () => {
    await mkdir(join(dir, 'foo', 'deep'), { recursive: true });
    await writeFile(join(dir, '.indexignore'), 'README.md\n');
    await writeFile(join(dir, 'README.md'), '# not fbc\n');
    await writeFile(join(dir, 'foo', 'package.anything'), `{"Schema":"olm.package","NAME":"foo","defaultchannel":"stable"}\n`);
    await writeFile(join(dir, 'foo', 'deep', 'rest.yaml'), `---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1\n    Replaces: foo.v0\n---\nschema: vendor.example/v1\npackage: foo\nname: x\nz: 1\n`);
    const l = await loadCatalogDir(dir);
    assert.deepEqual(l.problems, []);
    assert.deepEqual(l.files, ['foo/deep/rest.yaml', 'foo/package.anything']);
    assert.deepEqual(l.config.packages.map((p) => [p.name, p.defaultChannel, p.pos]), [['foo', 'stable', { file: 'foo/package.anything', line: 1 }]]);
    const ch = l.config.channels[0]!;
    assert.equal(ch.entries[0]!.replaces, 'foo.v0', 'field names match case-insensitively like Go');
    assert.deepEqual(ch.entries[0]!.pos, { file: 'foo/deep/rest.yaml', line: 6 });
    assert.deepEqual(l.config.others.map((o) => [o.schema, o.package, o.name, o.pos?.line]), [['vendor.example/v1', 'foo', 'x', 9]]);
  });

  it('collects problems instead of stopping: missing schema, folded duplicate keys, wrong types, bad bundle objects', () => {
    const l = loadFromFiles('mem', [
      { path: 'a.yaml', text: 'name: orphan\n' },
      { path: 'b.json', text: '{"schema":"olm.package","name":"foo","NAME":"bar"}' },
      { path: 'c.yaml', text: 'schema: olm.channel\nname: s\npackage: foo\nentries: {name: x}\n' },
      { path: 'd.yaml', text: 'schema: olm.bundle\nname: b\npackage: foo\nimage: x\nproperties:\n  - type: olm.bundle.object\n    value: {data: "%%%"}\n' },
      { path: 'e.yaml', text: 'schema: 5\n' },
      { path: 'f.yaml', text: PKG },
    ]);
    assert.deepEqual(
      l.problems.map((p) => [p.pos.file, p.code]),
      [['a.yaml', 'fbc-missing-schema'], ['b.json', 'fbc-bad-blob'], ['c.yaml', 'fbc-bad-blob'], ['d.yaml', 'fbc-bad-blob'], ['e.yaml', 'fbc-bad-blob']],
    );
    assert.match(l.problems[1]!.message, /duplicate keys for key "name": \[NAME name\]/);
    assert.match(l.problems[2]!.message, /parse channel: json: cannot unmarshal object into Go struct field Channel.entries of type \[\]declcfg.ChannelEntry/);
    assert.match(l.problems[3]!.message, /parse property at index 0 as bundle object/);
    assert.match(l.problems[4]!.message, /expected value for key "schema" to be a string/);
    assert.equal(l.config.packages.length, 1, 'good blobs are kept');
  });

  it('treats a directory with no FBC as an empty catalog', async () => {
    const l = await loadCatalogDir(dir);
    assert.deepEqual(l.config, { packages: [], channels: [], bundles: [], deprecations: [], others: [] });
  });
});

describe('catalog/fbc: image references (distribution/reference, as opm checks them)', () => {
  it('accepts normal references and normalises Docker Hub names', () => {
    for (const r of ['quay.io/org/bundle:v1', 'quay.io/org/bundle@sha256:' + 'a'.repeat(64), 'localhost:5000/x/y:1', 'busybox', 'docker.io/library/busybox:1.36', 'registry.example.com:8443/a/b/c@sha512:' + 'b'.repeat(128)]) {
      assert.equal(imageReferenceError(r), undefined, r);
    }
    assert.equal(parseNormalizedNamed('busybox').name, 'docker.io/library/busybox');
  });

  it('rejects what opm rejects', () => {
    assert.match(imageReferenceError('quay.io/Org/Bundle:v1')!, /must be lowercase/);
    assert.match(imageReferenceError('quay.io/org/bundle@sha256:123')!, /invalid reference format/);
    assert.match(imageReferenceError('quay.io/org/bundle@sha256:' + 'a'.repeat(63) + 'g')!, /invalid reference format/);
    assert.match(imageReferenceError('quay.io/org/bundle@md5:' + 'a'.repeat(32))!, /unsupported digest algorithm/);
    assert.match(imageReferenceError('a'.repeat(64))!, /cannot specify 64-byte hexadecimal strings/);
    assert.match(imageReferenceError('quay.io/org/bundle:-bad')!, /invalid reference format/);
    assert.match(imageReferenceError('[::1]:5000/x:1')!, /invalid reference format/, 'go.podman.io/image has no IPv6 hosts');
  });

  it('tells digest references from tags', () => {
    assert.ok(isDigestReference('quay.io/a/b@sha256:' + 'c'.repeat(64)));
    assert.ok(!isDigestReference('quay.io/a/b:1.0'));
  });
});
