import assert from 'node:assert/strict';
import { RbacAuthorizer, serviceAccountUser, type KubeObject } from '../../../bundle/rbac/authorizer.js';

const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name },
  rules,
  ...extra,
});
const role = (namespace: string, name: string, rules: unknown[]): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules });
const crb = (name: string, roleName: string, subjects: unknown[]): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
  subjects,
});
const rb = (namespace: string, name: string, kind: string, roleName: string, subjects: unknown[]): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
  subjects,
});

const sa = serviceAccountUser('ops', 'installer');
const saSubject = { kind: 'ServiceAccount', name: 'installer', namespace: 'ops' };

describe('rbac authorizer: bindings and scopes', () => {
  const authz = new RbacAuthorizer([
    clusterRole('read-pods', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]),
    clusterRole('edit-cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]),
    role('ops', 'secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    crb('sa-read-pods', 'read-pods', [saSubject]),
    rb('team', 'sa-edit-cm', 'ClusterRole', 'edit-cm', [{ kind: 'ServiceAccount', name: 'installer', namespace: 'ops' }]),
    rb('ops', 'sa-secrets', 'Role', 'secrets', [{ kind: 'ServiceAccount', name: 'installer' }]),
    crb('authenticated-health', 'health', [{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]),
    clusterRole('health', [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }]),
  ]);

  it('a ClusterRoleBinding grants in every namespace and at cluster scope', () => {
    assert.equal(authz.authorize(sa, { verb: 'list', group: '', resource: 'pods' }), true);
    assert.equal(authz.authorize(sa, { verb: 'get', group: '', resource: 'pods', namespace: 'x', name: 'p' }), true);
    assert.equal(authz.authorize(sa, { verb: 'delete', group: '', resource: 'pods', namespace: 'x', name: 'p' }), false);
  });

  it('a RoleBinding of a ClusterRole grants only in its namespace', () => {
    assert.equal(authz.authorize(sa, { verb: 'update', group: '', resource: 'configmaps', namespace: 'team', name: 'c' }), true);
    assert.equal(authz.authorize(sa, { verb: 'update', group: '', resource: 'configmaps', namespace: 'other', name: 'c' }), false);
    assert.equal(authz.authorize(sa, { verb: 'list', group: '', resource: 'configmaps' }), false);
  });

  it('a ServiceAccount subject without namespace defaults to the RoleBinding\'s namespace', () => {
    assert.equal(authz.authorize(sa, { verb: 'get', group: '', resource: 'secrets', namespace: 'ops', name: 's' }), true);
    assert.equal(authz.authorize(serviceAccountUser('other', 'installer'), { verb: 'get', group: '', resource: 'secrets', namespace: 'ops', name: 's' }), false);
  });

  it('groups bind too; non-resource URLs come only from ClusterRoleBindings', () => {
    assert.equal(authz.authorize(sa, { verb: 'get', path: '/healthz' }), true);
    assert.equal(authz.authorize({ name: 'anon', groups: [] }, { verb: 'get', path: '/healthz' }), false);
  });

  it('system:masters is allowed everything', () => {
    assert.equal(authz.authorize({ name: 'admin', groups: ['system:masters'] }, { verb: 'delete', group: 'x', resource: 'y' }), true);
  });

  it('a binding to a missing role grants nothing', () => {
    const a = new RbacAuthorizer([crb('dangling', 'missing', [saSubject])]);
    assert.deepEqual(a.rulesFor(sa, ''), []);
  });
});

describe('rbac authorizer: escalation prevention', () => {
  const wanted = clusterRole('operator', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] }]);

  it('creating a role needs every granted rule', () => {
    const a = new RbacAuthorizer([clusterRole('holder', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] }]), crb('h', 'holder', [saSubject])]);
    const r = a.checkEscalation(sa, wanted);
    assert.equal(r.allowed, false);
    assert.deepEqual(r.missing, [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['watch'] }]);
  });

  it('holding the rules, or escalate on roles, allows it', () => {
    const holds = new RbacAuthorizer([clusterRole('holder', [{ apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }]), crb('h', 'holder', [saSubject])]);
    assert.deepEqual(holds.checkEscalation(sa, wanted), { allowed: true, reason: 'holds-rules', missing: [] });
    const escalate = new RbacAuthorizer([
      clusterRole('esc', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['escalate'], resourceNames: ['operator'] }]),
      crb('e', 'esc', [saSubject]),
    ]);
    assert.equal(escalate.checkEscalation(sa, wanted).reason, 'escalate');
    assert.equal(escalate.checkEscalation(sa, clusterRole('other', wanted.rules as unknown[])).allowed, false);
  });

  it('a Role needs the rules in its namespace only', () => {
    const a = new RbacAuthorizer([clusterRole('cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]), rb('app', 'b', 'ClusterRole', 'cm', [saSubject])]);
    const r = role('app', 'reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
    assert.equal(a.checkEscalation(sa, r).allowed, true);
    assert.equal(a.checkEscalation(sa, role('elsewhere', 'reader', r.rules as unknown[])).allowed, false);
  });

  it('a binding needs the referenced role\'s rules, or bind on that role', () => {
    const a = new RbacAuthorizer([wanted]);
    const binding = crb('operator', 'operator', [{ kind: 'ServiceAccount', name: 'op', namespace: 'ops' }]);
    assert.equal(a.checkEscalation(sa, binding).allowed, false);
    assert.equal(a.checkEscalation(sa, binding).missing.length, 3);
    a.add(clusterRole('binder', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['operator'] }]));
    a.add(crb('binder', 'binder', [saSubject]));
    assert.equal(a.checkEscalation(sa, binding).reason, 'bind');
  });

  it('a binding to a role that does not exist fails unless the role is pending in the same install', () => {
    const a = new RbacAuthorizer([]);
    const binding = crb('x', 'operator', [saSubject]);
    assert.match(a.checkEscalation(sa, binding).error ?? '', /not found/);
    const pending = a.checkEscalation(sa, binding, [wanted]);
    assert.equal(pending.error, undefined);
    assert.equal(pending.missing.length, 3);
  });

  it('an aggregationRule needs full authority', () => {
    const agg = clusterRole('agg', [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } });
    // Everything on every resource except escalate would still not be enough: `*` verbs on `*/*` and all URLs are needed.
    const a = new RbacAuthorizer([clusterRole('big', [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'create'] }]), crb('b', 'big', [saSubject])]);
    const r = a.checkEscalation(sa, agg);
    assert.equal(r.allowed, false);
    assert.deepEqual(r.missing, [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]);
    // With `*` on everything the user may escalate, which skips the check altogether.
    const admin = new RbacAuthorizer([clusterRole('all', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]), crb('a', 'all', [saSubject])]);
    assert.equal(admin.checkEscalation(sa, agg).reason, 'escalate');
  });
});
