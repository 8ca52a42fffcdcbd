import assert from 'node:assert/strict';
import { cleanScopes, parseChallenge, parseTokenResponse, repositoryScope } from '../../../bundle/oci/auth.js';

describe('oci/auth: challenges', () => {
  it('parses a Bearer challenge with quoted parameters', () => {
    const c = parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push"');
    assert.deepEqual(c, {
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:samalba/my-app:pull,push' },
    });
  });
  it('parses Basic, unquoted and escaped values, and odd spacing', () => {
    assert.deepEqual(parseChallenge('Basic realm="olmpub-testenv"'), { scheme: 'basic', params: { realm: 'olmpub-testenv' } });
    assert.deepEqual(parseChallenge('bearer  realm=https://a/t , service=reg'), { scheme: 'bearer', params: { realm: 'https://a/t', service: 'reg' } });
    assert.deepEqual(parseChallenge('Bearer realm="a\\"b"'), { scheme: 'bearer', params: { realm: 'a"b' } });
    assert.deepEqual(parseChallenge('Bearer REALM="x"'), { scheme: 'bearer', params: { realm: 'x' } });
  });
  it('stops at a second challenge', () => {
    assert.deepEqual(parseChallenge('Bearer realm="https://a/t", Basic realm="b"'), { scheme: 'bearer', params: { realm: 'https://a/t' } });
  });
  it('returns undefined for nothing', () => {
    assert.equal(parseChallenge(undefined), undefined);
    assert.equal(parseChallenge(''), undefined);
  });
});

describe('oci/auth: scopes', () => {
  it('merges actions per repository and sorts', () => {
    assert.deepEqual(cleanScopes([repositoryScope('a/b', ['push']), repositoryScope('a/b', ['pull']), 'repository:c:pull']), ['repository:a/b:pull,push', 'repository:c:pull']);
  });
  it('lets * absorb other actions and splits space-joined scopes', () => {
    assert.deepEqual(cleanScopes(['repository:a:pull repository:a:*', 'registry:catalog:*']), ['registry:catalog:*', 'repository:a:*']);
  });
  it('keeps repository names with ports intact', () => {
    assert.deepEqual(cleanScopes(['repository:host:5000/a:pull']), ['repository:host:5000/a:pull']);
  });
});

describe('oci/auth: token responses', () => {
  it('takes access_token or token, with a default lifetime of 60 s', () => {
    assert.deepEqual(parseTokenResponse('{"token":"t1"}'), { token: 't1', expiresInSeconds: 60 });
    assert.deepEqual(parseTokenResponse('{"access_token":"a","token":"t","expires_in":300}'), { token: 'a', expiresInSeconds: 300 });
    assert.equal(parseTokenResponse('{"nothing":1}'), undefined);
    assert.equal(parseTokenResponse('not json'), undefined);
  });
});
