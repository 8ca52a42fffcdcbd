import assert from 'node:assert/strict';
import { RbacAuthorizer, serviceAccountUser, type KubeObject } from '../../../bundle/rbac/authorizer.js';
import {
  PREFLIGHT_HEADER,
  deriveInstallerRole,
  formatPreflight,
  installerManifests,
  installerRequirements,
  placeObjects,
  preflight,
  preflightRuleLine,
} from '../../../bundle/rbac/installer.js';
import { type PolicyRule, ruleToObject } from '../../../bundle/rbac/rules.js';
import { sampleBundle } from '../../fixtures/rbac/sample-bundle.js';

const NS = 'demo-system';
const EXT = 'demo';
const SA = 'demo-installer';

/** The view ClusterRole a real cluster has (abridged): the installer must not need its rules (bind instead). */
const VIEW: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'view' },
  rules: [{ apiGroups: [''], resources: ['pods', 'services', 'configmaps'], verbs: ['get', 'list', 'watch'] }],
};

/** An authorizer where the installer ServiceAccount holds exactly `rules` cluster-wide. */
function holding(rules: PolicyRule[]): RbacAuthorizer {
  return new RbacAuthorizer([
    VIEW,
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'installer' }, rules: rules.map(ruleToObject) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'installer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'installer' },
      subjects: [{ kind: 'ServiceAccount', name: SA, namespace: NS }],
    },
  ]);
}

describe('rbac installer: placing objects', () => {
  it('maps kinds to resources, uses the bundle\'s CRDs, and puts namespaced objects without a namespace in the install namespace', () => {
    const placed = placeObjects({
      objects: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } },
        { apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' } },
        { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.x.io' }, spec: { group: 'x.io', scope: 'Namespaced', names: { kind: 'Thing', plural: 'things' } } },
      ],
      extensionName: EXT,
      installNamespace: NS,
    });
    assert.deepEqual(
      placed.map((p) => `${p.group}/${p.resource} ${p.namespace}/${p.name}`),
      ['/configmaps demo-system/c', '/namespaces /n', 'x.io/things demo-system/t', 'apiextensions.k8s.io/customresourcedefinitions /things.x.io'],
    );
  });

  it('refuses unknown kinds instead of guessing a plural', () => {
    assert.throws(
      () => placeObjects({ objects: [{ apiVersion: 'x.io/v1', kind: 'Mystery', metadata: { name: 'm' } }], extensionName: EXT, installNamespace: NS }),
      (err: Error & { children?: Error[] }) => /cannot map 1 object/.test(err.message) && /unknown kind x.io\/Mystery/.test(err.children?.[0]?.message ?? ''),
    );
  });
});

describe('rbac installer: OLM 1.10 requirements and the derived ClusterRole', () => {
  const bundle = sampleBundle('demo', NS);
  const input = { objects: bundle.objects, extensionName: EXT, installNamespace: NS };

  it('lists OLM\'s checks: per-object verbs by name, create per namespace, cluster-wide list/watch, the finalizers', () => {
    const { actions } = installerRequirements(input);
    const has = (verb: string, resource: string, name = '', namespace = '') =>
      actions.some((a) => a.attributes.verb === verb && a.attributes.resource === resource && (a.attributes.name ?? '') === name && (a.attributes.namespace ?? '') === namespace);
    assert.ok(has('get', 'deployments', 'demo-controller', NS));
    assert.ok(has('delete', 'customresourcedefinitions', bundle.crdName));
    assert.ok(has('create', 'deployments', '', NS));
    assert.ok(has('create', 'clusterroles'));
    assert.ok(has('list', 'services') && has('watch', 'services'));
    assert.ok(actions.some((a) => a.attributes.resource === 'clusterextensions' && a.attributes.subresource === 'finalizers' && a.attributes.name === EXT && a.attributes.verb === 'update'));
  });

  it('derives create/list/watch per resource, named get/update/patch/delete, finalizers, bind for external roles and the granted rules', () => {
    const { rules, clusterRole } = deriveInstallerRole(input);
    assert.equal(clusterRole.kind, 'ClusterRole');
    assert.equal(clusterRole.metadata?.name, 'demo-installer');
    const find = (pred: (r: PolicyRule) => boolean) => rules.filter(pred);
    assert.deepEqual(find((r) => r.resources?.[0] === 'services'), [
      { apiGroups: [''], resources: ['services'], verbs: ['create', 'list', 'watch'] },
      { apiGroups: [''], resources: ['services'], resourceNames: ['demo-metrics'], verbs: ['delete', 'get', 'patch', 'update'] },
    ]);
    assert.deepEqual(find((r) => r.resources?.[0] === 'clusterextensions/finalizers'), [
      { apiGroups: ['olm.operatorframework.io'], resources: ['clusterextensions/finalizers'], resourceNames: [EXT], verbs: ['update'] },
    ]);
    assert.deepEqual(find((r) => r.verbs.includes('bind')), [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['view'], verbs: ['bind'] }]);
    // Granted by the bundle, so the installer must hold them (escalation prevention).
    assert.ok(find((r) => r.resources?.[0] === 'leases' && r.verbs.length === 7).length === 1);
    assert.ok(find((r) => r.resources?.[0] === 'widgets/status').length === 1);
    // No wildcards, no escalate.
    assert.ok(rules.every((r) => !r.verbs.includes('*') && !r.verbs.includes('escalate') && !(r.resources ?? []).includes('*')));
  });

  it('the derived role passes OLM\'s pre-authorization, and removing any one rule makes it fail', () => {
    const { rules } = deriveInstallerRole(input);
    const full = preflight(input, holding(rules), SA);
    assert.deepEqual(full, { missing: [], errors: [] });
    assert.equal(formatPreflight(full), '');
    rules.forEach((removed, i) => {
      const result = preflight(input, holding(rules.filter((_, j) => j !== i)), SA);
      assert.ok(result.missing.length > 0, `removing ${JSON.stringify(removed)} should leave something missing`);
    });
  });

  it('drops rules a broader granted rule already covers', () => {
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cm-admin' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] },
    ];
    const { rules } = deriveInstallerRole({ objects, extensionName: EXT, installNamespace: NS });
    assert.deepEqual(rules.filter((r) => r.resources?.[0] === 'configmaps'), [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ]);
  });

  it('installerManifests emits the ServiceAccount, the ClusterRole and its ClusterRoleBinding', () => {
    const { objects } = installerManifests(input, { serviceAccountName: SA });
    assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata?.name}`), [`ServiceAccount/${SA}`, `ClusterRole/${SA}`, `ClusterRoleBinding/${SA}`]);
    assert.deepEqual((objects[2] as { subjects: unknown }).subjects, [{ kind: 'ServiceAccount', name: SA, namespace: NS }]);
  });
});

describe('rbac installer: the preflight report in OLM 1.10\'s format', () => {
  it('prints one sorted line per missing rule, core group as [], empty parts omitted', () => {
    const input = { objects: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns' } }], extensionName: 'ext', installNamespace: 'ns' };
    const result = preflight(input, new RbacAuthorizer([]), 'sa');
    assert.equal(
      formatPreflight(result),
      [
        PREFLIGHT_HEADER,
        '  Namespace:"" APIGroups:[] Resources:[services] Verbs:[list,watch]',
        '  Namespace:"" APIGroups:[olm.operatorframework.io] Resources:[clusterextensions/finalizers] ResourceNames:[ext] Verbs:[update]',
        '  Namespace:"ns" APIGroups:[] Resources:[services] ResourceNames:[s] Verbs:[delete,get,patch,update]',
        '  Namespace:"ns" APIGroups:[] Resources:[services] Verbs:[create]',
      ].join('\n'),
    );
  });

  it('reports only what is missing, including rules a bundled role grants (escalation)', () => {
    const bundle = sampleBundle('demo', NS);
    const input = { objects: bundle.objects, extensionName: EXT, installNamespace: NS };
    const { rules } = deriveInstallerRole(input);
    const withoutLeases = rules.filter((r) => r.resources?.[0] !== 'leases');
    const message = formatPreflight(preflight(input, holding(withoutLeases), SA));
    assert.ok(message.startsWith(`${PREFLIGHT_HEADER}\n`));
    assert.deepEqual(message.split('\n').slice(1), [
      `  Namespace:"${NS}" APIGroups:[coordination.k8s.io] Resources:[leases] Verbs:[create,delete,get,list,patch,update,watch]`,
    ]);
  });

  it('a binding to a role that exists nowhere adds an authorization evaluation error', () => {
    const input = {
      objects: [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: 'ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'nope' }, subjects: [] },
      ],
      extensionName: 'ext',
      installNamespace: 'ns',
    };
    const a = holding(deriveInstallerRole(input).rules.filter((r) => !r.verbs.includes('bind')));
    const message = formatPreflight(preflight(input, a, SA, serviceAccountUser(NS, SA)));
    assert.equal(message, 'pre-authorization failed: authorization evaluation error: roles.rbac.authorization.k8s.io "nope" not found');
  });

  it('a line lists sorted values and skips empty parts', () => {
    assert.equal(preflightRuleLine('', { verbs: ['watch', 'list'], nonResourceURLs: ['/b', '/a'] }), 'Namespace:"" Verbs:[list,watch] NonResourceURLs:[/a,/b]');
  });
});
