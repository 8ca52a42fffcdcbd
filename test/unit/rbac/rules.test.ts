import assert from 'node:assert/strict';
import { breakdownRule, compactRules, covers, ruleAllows, ruleCovers, uncoveredRules, type PolicyRule } from '../../../bundle/rbac/rules.js';

describe('rbac rules: the authorizer\'s matching (RuleAllows)', () => {
  const deploy = { verb: 'get', group: 'apps', resource: 'deployments', name: 'web', namespace: 'ns' };

  it('matches exact verb, group and resource', () => {
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, deploy), true);
    assert.equal(ruleAllows({ verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] }, deploy), false);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, deploy), false);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['apps'], resources: ['statefulsets'] }, deploy), false);
  });

  it('"*" matches any verb, group and resource', () => {
    assert.equal(ruleAllows({ verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] }, deploy), true);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, deploy), true);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['apps'], resources: ['*'] }, deploy), true);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['apps'], resources: ['*'] }, { ...deploy, subresource: 'scale' }), true);
  });

  it('subresources need resource/sub or */sub; the bare resource does not grant them', () => {
    const status = { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'status', name: 'web' };
    assert.equal(ruleAllows({ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments'] }, status), false);
    assert.equal(ruleAllows({ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/status'] }, status), true);
    assert.equal(ruleAllows({ verbs: ['update'], apiGroups: ['apps'], resources: ['*/status'] }, status), true);
    assert.equal(ruleAllows({ verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] }, status), false);
    assert.equal(ruleAllows({ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/status'] }, { ...status, subresource: undefined }), false);
  });

  it('resourceNames restrict to named objects and never match unnamed requests (list, create)', () => {
    const rule: PolicyRule = { verbs: ['get', 'list', 'create'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] };
    assert.equal(ruleAllows(rule, deploy), true);
    assert.equal(ruleAllows(rule, { ...deploy, name: 'db' }), false);
    assert.equal(ruleAllows(rule, { verb: 'list', group: 'apps', resource: 'deployments' }), false);
    assert.equal(ruleAllows(rule, { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'ns' }), false);
  });

  it('non-resource URLs: exact, "*" and prefix* forms; resource rules never match them', () => {
    assert.equal(ruleAllows({ verbs: ['get'], nonResourceURLs: ['/metrics'] }, { verb: 'get', path: '/metrics' }), true);
    assert.equal(ruleAllows({ verbs: ['get'], nonResourceURLs: ['/metrics'] }, { verb: 'get', path: '/metrics/x' }), false);
    assert.equal(ruleAllows({ verbs: ['get'], nonResourceURLs: ['/healthz*'] }, { verb: 'get', path: '/healthz/etcd' }), true);
    assert.equal(ruleAllows({ verbs: ['get'], nonResourceURLs: ['*'] }, { verb: 'get', path: '/anything' }), true);
    assert.equal(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verb: 'get', path: '/metrics' }), false);
  });
});

describe('rbac rules: the escalation check\'s covering (Covers)', () => {
  it('breaks rules down to one group, resource, verb and name', () => {
    const pieces = breakdownRule({ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods'], resourceNames: ['a'] });
    assert.equal(pieces.length, 4);
    assert.deepEqual(pieces[0], { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] });
    assert.deepEqual(breakdownRule({ verbs: ['get'], nonResourceURLs: ['/a', '/b'] }), [
      { nonResourceURLs: ['/a'], verbs: ['get'] },
      { nonResourceURLs: ['/b'], verbs: ['get'] },
    ]);
  });

  it('a wildcard owner covers specific wants; a specific owner never covers a wildcard want', () => {
    assert.equal(ruleCovers({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }), true);
    assert.equal(ruleCovers({ verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] }, { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] }), false);
    assert.equal(ruleCovers({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }), false);
  });

  it('resourceNames: unrestricted covers named; named never covers unrestricted', () => {
    const any: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
    const named: PolicyRule = { ...any, resourceNames: ['tls'] };
    assert.equal(ruleCovers(any, named), true);
    assert.equal(ruleCovers(named, any), false);
    assert.equal(ruleCovers(named, { ...any, resourceNames: ['other'] }), false);
  });

  it('*/sub covers any resource\'s sub, but not the resource itself', () => {
    assert.equal(ruleCovers({ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }, { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }), true);
    assert.equal(ruleCovers({ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }, { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }), false);
  });

  it('reports exactly the uncovered pieces', () => {
    const owner: PolicyRule[] = [{ verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] }];
    const wanted: PolicyRule[] = [{ verbs: ['get', 'watch'], apiGroups: ['apps'], resources: ['deployments'] }];
    assert.equal(covers(owner, wanted), false);
    assert.deepEqual(uncoveredRules(owner, wanted), [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['watch'] }]);
    assert.equal(covers(owner, [{ verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] }]), true);
  });

  it('compacts simple rules by merging verbs, dedups, sorts, and keeps only * when present', () => {
    const out = compactRules([
      { verbs: ['watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['get', '*'], apiGroups: ['apps'], resources: ['deployments'] },
    ]);
    assert.deepEqual(out, [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
    ]);
  });
});
