import assert from 'node:assert/strict';
import { lintRules } from '../../../bundle/rbac/lint.js';
import { compareDeclaredWithUsed, parseApiCalls, requestToAttributes, rulesFromDeclarations, scopedRulesOf } from '../../../bundle/rbac/usage.js';
import { parseManifests } from '../../../bundle/crddiff/load.js';
import {
  collectDeclarations,
  declaredPermissions,
  requires,
  requiresURL,
  resetDeclarationsForTesting,
} from '../../../operator/rbac-declarations.js';

const ROLE_YAML = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: operator
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch]
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  verbs: [escalate, bind]
- apiGroups: [""]
  resources: [users]
  verbs: [impersonate]
- nonResourceURLs: ["/metrics*"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: secrets
  namespace: ops
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
`;

describe('rbac lint: least privilege', () => {
  const loaded = parseManifests(ROLE_YAML, 'role.yaml');
  const findings = lintRules(loaded.map((o) => ({ object: o.object, place: `${o.file}:${o.line}`, rulePlaces: (o.object.rules as unknown[]).map((_, i) => o.placeOf(['rules', i])) })));
  const codes = (i: number) => findings.filter((f) => f.place.endsWith(`rules[${i}]`) && f.place.includes('ClusterRole/operator')).map((f) => f.code).sort();

  it('a narrow rule has no findings', () => assert.deepEqual(codes(0), []));
  it('flags wildcard verbs, resources and API groups', () => assert.deepEqual(codes(1), ['cluster-wide-secrets', 'wildcard-api-group', 'wildcard-resource', 'wildcard-verb']));
  it('flags Secrets in a cluster-wide ClusterRole, not in a Role', () => {
    assert.deepEqual(codes(2), ['cluster-wide-secrets']);
    assert.equal(findings.filter((f) => f.place.includes('Role/ops/secrets')).length, 0);
  });
  it('flags escalate, bind and impersonate', () => {
    assert.deepEqual(codes(3), ['bind-verb', 'escalate-verb']);
    assert.deepEqual(codes(4), ['impersonate-verb']);
  });
  it('flags wildcard non-resource URLs', () => assert.deepEqual(codes(5), ['wildcard-non-resource-url']));
  it('every finding names file:line, the role and the rule, and carries a hint', () => {
    const f = findings.find((x) => x.code === 'wildcard-verb')!;
    assert.equal(f.place, 'role.yaml:9 ClusterRole/operator rules[1]');
    assert.ok(f.hint.length > 10);
  });
  it('a ClusterRole bound only by RoleBindings is not cluster-wide', () => {
    const objs = parseManifests(
      `kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: s}
rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
---
kind: RoleBinding
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: s, namespace: a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: s}
subjects: [{kind: ServiceAccount, name: op, namespace: a}]
`,
      'x.yaml',
    );
    assert.deepEqual(lintRules(objs.map((o) => ({ object: o.object }))), []);
  });
});

describe('rbac usage: API calls', () => {
  it('derives authorizer attributes from HTTP requests the way the apiserver does', () => {
    assert.deepEqual(requestToAttributes('GET', '/apis/apps/v1/namespaces/ns/deployments'), { verb: 'list', group: 'apps', resource: 'deployments', namespace: 'ns' });
    assert.deepEqual(requestToAttributes('GET', '/apis/apps/v1/deployments?watch=true'), { verb: 'watch', group: 'apps', resource: 'deployments' });
    assert.deepEqual(requestToAttributes('PUT', '/apis/x.io/v1/namespaces/ns/things/a/status'), { verb: 'update', group: 'x.io', resource: 'things', subresource: 'status', name: 'a', namespace: 'ns' });
    assert.deepEqual(requestToAttributes('PATCH', '/api/v1/namespaces/ns/configmaps/c'), { verb: 'patch', group: '', resource: 'configmaps', name: 'c', namespace: 'ns' });
    assert.deepEqual(requestToAttributes('DELETE', '/api/v1/namespaces/ns/pods'), { verb: 'deletecollection', group: '', resource: 'pods', namespace: 'ns' });
    assert.deepEqual(requestToAttributes('GET', '/api/v1/namespaces/ns'), { verb: 'get', group: '', resource: 'namespaces', name: 'ns' });
    assert.deepEqual(requestToAttributes('POST', '/apis/coordination.k8s.io/v1/namespaces/ns/leases'), { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: 'ns' });
    assert.deepEqual(requestToAttributes('GET', '/metrics'), { verb: 'get', path: '/metrics' });
  });

  it('reads attributes, HTTP requests and audit events', () => {
    const calls = parseApiCalls([
      { verb: 'get', group: 'apps', resource: 'deployments', namespace: 'a', name: 'd' },
      'GET /api/v1/namespaces/a/pods',
      { method: 'POST', url: '/apis/coordination.k8s.io/v1/namespaces/a/leases' },
      { kind: 'Event', verb: 'update', objectRef: { apiGroup: 'x.io', resource: 'things', subresource: 'status', namespace: 'a', name: 't' } },
      { verb: 'get', path: '/healthz' },
    ]);
    assert.deepEqual(
      calls.map((c) => ('path' in c ? `${c.verb} ${c.path}` : `${c.verb} ${c.group}/${c.resource}${c.subresource ? `/${c.subresource}` : ''}`)),
      ['get apps/deployments', 'list /pods', 'create coordination.k8s.io/leases', 'update x.io/things/status', 'get /healthz'],
    );
    assert.throws(() => parseApiCalls([{ nonsense: true }]), /not an API call/);
  });

  it('declared == used: reports undeclared calls and unused permissions, both ways', () => {
    const loaded = parseManifests(
      `kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: op}
rules:
- {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch, delete]}
---
kind: Role
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: le, namespace: ops}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, update]}
`,
      'rbac.yaml',
    );
    const report = compareDeclaredWithUsed(
      scopedRulesOf(loaded),
      parseApiCalls([
        'GET /apis/apps/v1/deployments',
        'GET /apis/apps/v1/deployments?watch=1',
        'GET /apis/apps/v1/namespaces/x/deployments/d',
        'GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/l',
        'PUT /apis/coordination.k8s.io/v1/namespaces/other/leases/l',
        'POST /apis/apps/v1/namespaces/x/deployments',
      ]),
    );
    assert.deepEqual(report.undeclared.map((c) => c.source), ['calls[4]', 'calls[5]']);
    assert.deepEqual(
      report.unused.map((u) => `${u.place} ${u.rule.resources} ${u.rule.verbs}`),
      ['rbac.yaml:5 ClusterRole/op rules[0] deployments delete', 'rbac.yaml:11 Role/le rules[0] leases update'],
    );
    const clean = compareDeclaredWithUsed([{ rule: { apiGroups: [''], resources: ['pods'], verbs: ['get'] } }], parseApiCalls(['GET /api/v1/namespaces/a/pods/p']));
    assert.deepEqual(clean, { undeclared: [], unused: [] });
  });
});

describe('operator/rbac-declarations: permissions declared next to the code', () => {
  beforeEach(() => resetDeclarationsForTesting());

  it('requires() records a frozen declaration with where it was declared', () => {
    const d = requires({ group: 'apps', resource: 'deployments', verbs: ['get', 'list', 'get'], reason: 'owns the Deployment' });
    assert.ok(Object.isFrozen(d));
    assert.deepEqual(d.verbs, ['get', 'list']);
    assert.match(d.declaredBy ?? '', /lint-usage\.test\.(js|ts):\d+$/);
    assert.deepEqual(declaredPermissions(), [d]);
  });

  it('rejects wildcards and malformed declarations', () => {
    assert.throws(() => requires({ group: 'apps', resource: '*', verbs: ['get'] }), /lowercase plural|wildcards/);
    assert.throws(() => requires({ group: 'apps', resource: 'deployments', verbs: ['*'] }), /wildcards/);
    assert.throws(() => requires({ group: 'apps', resource: 'deployments', verbs: [] }), /at least one verb/);
    assert.throws(() => requiresURL({ nonResourceURL: 'metrics', verbs: ['get'] }), /must be a path/);
  });

  it('the same declaration twice is recorded once; exported constants can be collected explicitly', () => {
    const a = requires({ group: '', resource: 'events', verbs: ['create', 'patch'] });
    requires({ group: '', resource: 'events', verbs: ['patch', 'create'] });
    const b = requiresURL({ nonResourceURL: '/metrics', verbs: ['get'] });
    assert.equal(declaredPermissions().length, 2);
    assert.deepEqual(collectDeclarations([a, b], a), [a, b]);
  });

  it('declarations become the operator\'s ClusterRole and namespaced Role rules', () => {
    const decls = [
      requires({ group: 'apps', resource: 'deployments', verbs: ['get', 'list', 'watch'] }),
      requires({ group: 'apps', resource: 'statefulsets', verbs: ['watch', 'list', 'get'] }),
      requires({ group: 'apps', resource: 'deployments', verbs: ['create'] }),
      requires({ group: 'x.io', resource: 'things', subresource: 'status', verbs: ['update', 'patch'] }),
      requires({ group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'update'], scope: 'namespace' }),
      requiresURL({ nonResourceURL: '/metrics', verbs: ['get'] }),
    ];
    const { cluster, namespaced } = rulesFromDeclarations(decls);
    assert.deepEqual(cluster, [
      { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      { verbs: ['create', 'get', 'list', 'watch'], apiGroups: ['apps'], resources: ['deployments'] },
      { verbs: ['get', 'list', 'watch'], apiGroups: ['apps'], resources: ['statefulsets'] },
      { verbs: ['patch', 'update'], apiGroups: ['x.io'], resources: ['things/status'] },
    ]);
    assert.deepEqual(namespaced, [{ verbs: ['get', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] }]);
  });
});
