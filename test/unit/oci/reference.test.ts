import assert from 'node:assert/strict';
import { OlmpubError } from '../../../lib/errors.js';
import { apiHost, formatReference, helmTag, helmVersionFromTag, parseReference, parseStoreReference, referenceOf } from '../../../bundle/oci/reference.js';

const D = `sha256:${'a'.repeat(64)}`;

describe('oci/reference: parsing', () => {
  it('parses host:port/repo:tag', () => {
    assert.deepEqual(parseReference('127.0.0.1:5000/olmpub/operator:1.0.0'), { registry: '127.0.0.1:5000', repository: 'olmpub/operator', tag: '1.0.0' });
  });
  it('parses a digest, and tag plus digest', () => {
    assert.deepEqual(parseReference(`localhost/a@${D}`), { registry: 'localhost', repository: 'a', digest: D });
    assert.deepEqual(parseReference(`reg.example.com/a/b:v1@${D}`), { registry: 'reg.example.com', repository: 'a/b', tag: 'v1', digest: D });
    assert.equal(referenceOf(parseReference(`reg.example.com/a/b:v1@${D}`)), D);
  });
  it('applies Docker Hub defaults', () => {
    assert.deepEqual(parseReference('alpine'), { registry: 'docker.io', repository: 'library/alpine' });
    assert.deepEqual(parseReference('alpine:3.20'), { registry: 'docker.io', repository: 'library/alpine', tag: '3.20' });
    assert.deepEqual(parseReference('bitnami/redis:7'), { registry: 'docker.io', repository: 'bitnami/redis', tag: '7' });
    assert.equal(apiHost('docker.io'), 'registry-1.docker.io');
    assert.equal(apiHost('127.0.0.1:5000'), '127.0.0.1:5000');
    assert.equal(referenceOf(parseReference('alpine')), 'latest');
  });
  it('treats a first component with a dot, a colon or localhost as the host', () => {
    assert.equal(parseReference('localhost:5000/x').registry, 'localhost:5000');
    assert.equal(parseReference('my.reg/x').registry, 'my.reg');
    assert.equal(parseReference('team/x').registry, 'docker.io');
  });
  it('round-trips through formatReference', () => {
    for (const r of ['127.0.0.1:5000/olmpub/operator:1.0.0', `reg.example.com/a/b:v1@${D}`, `h.io/x@${D}`]) assert.equal(formatReference(parseReference(r)), r);
  });
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['reg.io/UPPER:1', /lowercase/],
    ['reg.io/a:-bad', /not a valid tag/],
    [`reg.io/a@sha256:${'z'.repeat(64)}`, /not a digest/],
    ['https://reg.io/a:1', /no scheme/],
    ['reg.io/a b', /whitespace/],
    ['reg.io/', /repository is missing/],
    ['reg.io/a//b', /not a valid repository/],
    ['reg.io:99999/a', /out of range/],
    ['reg.io/a:1.0.0+build', /not a valid tag/],
  ];
  for (const [ref, why] of bad) {
    it(`rejects ${JSON.stringify(ref)} with a clear usage error`, () => {
      assert.throws(
        () => parseReference(ref),
        (err: unknown) => err instanceof OlmpubError && err.code === 'oci-bad-reference' && err.kind === 'usage' && why.test(err.message) && !!err.hint,
      );
    });
  }
});

describe('oci/reference: store references', () => {
  it('parses oci:PATH[:TAG|@DIGEST]', () => {
    assert.deepEqual(parseStoreReference('oci:./out/image:1.0.0'), { kind: 'layout', path: './out/image', tag: '1.0.0' });
    assert.deepEqual(parseStoreReference('oci:/tmp/x'), { kind: 'layout', path: '/tmp/x' });
    assert.deepEqual(parseStoreReference(`oci:/tmp/x@${D}`), { kind: 'layout', path: '/tmp/x', digest: D });
    assert.deepEqual(parseStoreReference('oci:/tmp/v1.2/img'), { kind: 'layout', path: '/tmp/v1.2/img' });
  });
  it('parses registry references', () => {
    assert.deepEqual(parseStoreReference('127.0.0.1:5000/a:1'), { kind: 'registry', registry: '127.0.0.1:5000', repository: 'a', tag: '1' });
  });
  it('rejects Helm-style oci:// URLs and empty paths', () => {
    assert.throws(() => parseStoreReference('oci://reg/x'), /Helm registry URL/);
    assert.throws(() => parseStoreReference('oci::tag'), /path is missing/);
  });
});

describe('oci/reference: Helm tags', () => {
  it('turns + into _ and back', () => {
    assert.equal(helmTag('1.2.3+build.5'), '1.2.3_build.5');
    assert.equal(helmTag('1.2.3'), '1.2.3');
    assert.equal(helmVersionFromTag('1.2.3_build.5'), '1.2.3+build.5');
    assert.ok(parseReference(`reg.io/chart:${helmTag('0.1.0+g1234')}`).tag === '0.1.0_g1234');
  });
});
