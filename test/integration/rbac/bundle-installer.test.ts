/**
 * The installer role for OUR registry+v1 bundle, proved on the REAL apiserver of scripts/testenv.
 *
 * The bundle is built in-process (renderReleaseArtifacts), rendered as OLM 1.10 renders it
 * (bundle/registryv1/render.ts: OLM's hashed (Cluster)Role names, the webhook Service, cert-manager Issuer
 * and Certificate, ...), and `installerManifests` derives the ServiceAccount, ClusterRole and binding,
 * which are created as admin. Then, impersonating that ServiceAccount, every rendered object goes through
 * what OLM does with it: get, create, server-side apply, update, cluster-wide list and watch, delete.
 * - With the derived role every step succeeds.
 * - Removing any one rule makes some step fail with 403 (a missing verb, or the escalation check on a
 *   Role/ClusterRole/binding: to grant a rule you must hold it). The exception is `update` on
 *   clusterextensions/finalizers, which only OwnerReferencesPermissionEnforcement exercises: a dry-run
 *   create with a blockOwnerDeletion owner reference to the ClusterExtension must then be denied when the
 *   plugin is on; when it is off (the shared testenv until its next restart) the apiserver's
 *   SubjectAccessReview must deny it.
 *
 * Isolation: a unique namespace, and the CSV renamed `olmpub-bi-<id>.v1.2.0` so OLM's hashed ClusterRole
 * names are unique. Cluster-scoped objects whose names are fixed and shared with every install of the
 * operator (the CRD, the metrics-reader ClusterRole, the ValidatingWebhookConfiguration) go through the same
 * requests with dryRun=All: really applying them would point the shared CRD's conversion and the
 * InferenceService admission of the whole cluster at this test's namespace. For them 404 and 409
 * (AlreadyExists) count as authorized, since the apiserver authorizes a request before looking the object
 * up. cert-manager's CRDs are created (minimal schemas) when the cluster lacks them, and removed after.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { renderReleaseArtifacts } from '../../../bundle/release.js';
import { readRegistryV1, renderRegistryV1 } from '../../../bundle/registryv1/index.js';
import { type KubeObject, serviceAccountUser } from '../../../bundle/rbac/authorizer.js';
import { type PlacedObject, installerManifests, placeObjects } from '../../../bundle/rbac/installer.js';
import { type PolicyRule, type RequestAttributes, breakdownRule, isNonResource, ruleCovers, ruleToObject } from '../../../bundle/rbac/rules.js';
import { eventually, testenv } from '../../support/env.js';
import { Kube, apiBase, collectionPath, objectPath } from './kube.js';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_API = `/apis/${RBAC}/v1`;
const CRD_API = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const FIELD_MANAGER = 'olmpub-installer-test';

interface Failure {
  step: string;
  object: string;
  status: number;
  message: string;
}

describe('the installer role for our registry+v1 bundle on the real apiserver', function () {
  this.timeout(1_200_000);

  const id = randomBytes(3).toString('hex');
  const NS = `olmpub-bi-${id}`;
  const EXT = `olmpub-bi-${id}`;
  const SA = 'installer';
  const ROLE = `olmpub-bi-${id}-installer`;
  const saUser = serviceAccountUser(NS, SA);
  let kube: Kube;
  let placed: PlacedObject[];
  let rules: PolicyRule[];
  let installer: KubeObject[];
  const createdCRDs: string[] = [];

  const isShared = (p: PlacedObject) => !p.namespace && !p.name.includes(id);
  const label = (p: PlacedObject) => `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}${isShared(p) ? ' (dry run)' : ''}`;
  const dry = (p: PlacedObject) => (isShared(p) ? 'dryRun=All' : '');
  const withQuery = (path: string, ...q: string[]) => {
    const query = q.filter(Boolean).join('&');
    return query ? `${path}?${query}` : path;
  };
  const body = (p: PlacedObject): KubeObject => ({ ...p.object, metadata: { ...p.object.metadata, ...(p.namespace ? { namespace: p.namespace } : {}) } });

  const sar = async (request: RequestAttributes): Promise<boolean> => {
    const spec: Record<string, unknown> = { user: saUser.name, groups: saUser.groups };
    if (isNonResource(request)) spec.nonResourceAttributes = { path: request.path, verb: request.verb };
    else {
      spec.resourceAttributes = {
        verb: request.verb,
        group: request.group,
        resource: request.resource,
        ...(request.subresource ? { subresource: request.subresource } : {}),
        ...(request.name ? { name: request.name } : {}),
        ...(request.namespace ? { namespace: request.namespace } : {}),
      };
    }
    const res = await kube.must('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', [201], { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
    return (res.body.status as { allowed?: boolean }).allowed === true;
  };

  /** A request only `rule` (of `all`) allows: proves the authorizer has seen a role change. */
  const witness = (rule: PolicyRule, all: PolicyRule[]): RequestAttributes => {
    const others = all.filter((r) => r !== rule);
    const piece = breakdownRule(rule).find((p) => !others.some((o) => ruleCovers(o, p)));
    assert.ok(piece, `rule ${JSON.stringify(rule)} is redundant: the derived role is not minimal`);
    if (piece.nonResourceURLs) return { verb: piece.verbs[0]!, path: piece.nonResourceURLs[0]! };
    const [resource, subresource] = piece.resources![0]!.split('/');
    return { verb: piece.verbs[0]!, group: piece.apiGroups![0]!, resource: resource!, ...(subresource ? { subresource } : {}), ...(piece.resourceNames ? { name: piece.resourceNames[0] } : {}) };
  };

  const setInstallerRules = async (next: PolicyRule[]) => {
    const current = await kube.must('GET', `${RBAC_API}/clusterroles/${ROLE}`, [200]);
    await kube.must('PUT', `${RBAC_API}/clusterroles/${ROLE}`, [200], { body: { ...current.body, rules: next.map(ruleToObject) } });
  };

  /** Removes, as admin, whatever the lifecycle left behind, and waits until it is gone. */
  const cleanBundle = async () => {
    const real = placed.filter((p) => !isShared(p));
    for (const p of [...real].reverse()) await kube.must('DELETE', objectPath(p), [200, 202, 404]);
    await eventually(
      'bundle objects to be deleted',
      async () => {
        for (const p of real) if ((await kube.request('GET', objectPath(p))).status !== 404) return false;
        return true;
      },
      120_000,
    );
  };

  /** What OLM does with every object, as the installer ServiceAccount; the first failure. */
  const lifecycle = async (): Promise<Failure | undefined> => {
    const as = saUser.name;
    const fail = (step: string, p: PlacedObject | string, res: { status: number; body: Record<string, unknown> }): Failure => ({
      step,
      object: typeof p === 'string' ? p : label(p),
      status: res.status,
      message: String(res.body.message ?? ''),
    });
    /** A status other than the expected ones and 403 is a broken test, not a finding. */
    const expect = (step: string, p: PlacedObject | string, res: { status: number; body: Record<string, unknown> }, ok: number[]): Failure | undefined => {
      if (ok.includes(res.status)) return undefined;
      if (res.status === 403) return fail(step, p, res);
      throw new Error(`${step} ${typeof p === 'string' ? p : label(p)}: unexpected HTTP ${res.status} ${String(res.body.message ?? '')}`);
    };
    for (const p of placed) {
      const shared = isShared(p);
      let f = expect('get', p, await kube.request('GET', objectPath(p), { as }), [200, 404]);
      if (f) return f;
      f = expect('create', p, await kube.request('POST', withQuery(collectionPath(p), dry(p)), { as, body: body(p) }), shared ? [201, 409] : [201]);
      if (f) return f;
      f = expect(
        'apply',
        p,
        await kube.request('PATCH', withQuery(objectPath(p), `fieldManager=${FIELD_MANAGER}`, 'force=true', dry(p)), { as, body: body(p), contentType: 'application/apply-patch+yaml' }),
        shared ? [200, 201] : [200],
      );
      if (f) return f;
    }
    for (const p of placed) {
      // Controllers write too (a Deployment's status): retry a conflicting update on a fresh read.
      let res: Awaited<ReturnType<Kube['request']>> | undefined;
      for (let attempt = 0; attempt < 5 && (res === undefined || res.status === 409); attempt++) {
        const current = await kube.request('GET', objectPath(p));
        const base = (current.status === 200 ? current.body : body(p)) as KubeObject;
        const meta = (base.metadata ?? {}) as { annotations?: Record<string, string> };
        const next = { ...base, metadata: { ...meta, annotations: { ...meta.annotations, 'olmpub.test/updated': 'yes' } } };
        res = await kube.request('PUT', withQuery(objectPath(p), dry(p)), { as, body: next });
      }
      const f = expect('update', p, res!, isShared(p) ? [200, 201, 404] : [200]);
      if (f) return f;
    }
    const collections = [...new Map(placed.map((p) => [`${apiBase(p.object.apiVersion!)}/${p.resource}`, p])).keys()];
    for (const c of collections) {
      let f = expect('list', c, await kube.request('GET', c, { as }), [200]);
      if (f) return f;
      f = expect('watch', c, await kube.request('GET', `${c}?watch=1&timeoutSeconds=1`, { as, headersOnly: true }), [200]);
      if (f) return f;
    }
    for (const p of [...placed].reverse()) {
      const f = expect('delete', p, await kube.request('DELETE', withQuery(objectPath(p), dry(p)), { as }), isShared(p) ? [200, 202, 404] : [200, 202]);
      if (f) return f;
    }
    return undefined;
  };

  /**
   * OwnerReferencesPermissionEnforcement probe: a dry-run create whose blockOwnerDeletion owner reference
   * points at the ClusterExtension. 201 or 403.
   */
  const ownerReferenceProbe = async (): Promise<number> => {
    const res = await kube.request('POST', `/api/v1/namespaces/${NS}/services?dryRun=All`, {
      as: saUser.name,
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'olmpub-owner-probe',
          ownerReferences: [{ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: EXT, uid: randomUUID(), controller: true, blockOwnerDeletion: true }],
        },
        spec: { ports: [{ port: 80 }] },
      },
    });
    if (res.status !== 201 && res.status !== 403) throw new Error(`owner reference probe: HTTP ${res.status} ${String(res.body.message ?? '')}`);
    return res.status;
  };

  /** Minimal cert-manager CRDs when the cluster has none, so the rendered Issuer and Certificate can be applied. */
  const ensureCertManagerCRDs = async () => {
    for (const [kind, plural] of [['Issuer', 'issuers'], ['Certificate', 'certificates']] as const) {
      const name = `${plural}.cert-manager.io`;
      if ((await kube.request('GET', `${CRD_API}/${name}`)).status === 200) continue;
      const res = await kube.request('POST', CRD_API, {
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name, labels: { 'olmpub.test/created-by': 'bundle-installer-test' } },
          spec: {
            group: 'cert-manager.io',
            names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
            scope: 'Namespaced',
            versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
          },
        },
      });
      if (res.status === 201) createdCRDs.push(name);
      else if (res.status !== 409) throw new Error(`creating ${name}: HTTP ${res.status} ${String(res.body.message ?? '')}`);
      await eventually(`${name} to be established`, async () => {
        const crd = await kube.request('GET', `${CRD_API}/${name}`);
        const conditions = ((crd.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
        return conditions.some((c) => c.type === 'Established' && c.status === 'True');
      });
    }
    // The apiserver serves the new resources once discovery has them.
    await eventually('cert-manager.io/v1 to be served', async () => (await kube.request('GET', `/apis/cert-manager.io/v1/namespaces/${NS}/issuers`)).status === 200);
  };

  before(async function () {
    kube = Kube.fromKubeconfig(testenv('KUBECONFIG'));
    const artifacts = await renderReleaseArtifacts({ version: '1.2.0', image: `ghcr.io/x/y@sha256:${'5e'.repeat(32)}`, created: 0 });
    const bundle = readRegistryV1(artifacts.bundle.files);
    bundle.csv.object.metadata = { ...bundle.csv.object.metadata, name: `olmpub-bi-${id}.v1.2.0` };
    const objects = renderRegistryV1(bundle, { installNamespace: NS, olmVersion: '1.10' });
    const input = { objects, extensionName: EXT, installNamespace: NS };
    placed = placeObjects(input);
    const derived = installerManifests(input, { serviceAccountName: SA, roleName: ROLE });
    rules = derived.role.rules;
    installer = derived.objects;

    await kube.must('POST', '/api/v1/namespaces', [201], { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
    await ensureCertManagerCRDs();
    // The installer ServiceAccount, ClusterRole and ClusterRoleBinding exactly as `rbac check --emit-installer-role` writes them.
    for (const o of installer) {
      const p = placeObjects({ objects: [o], extensionName: EXT, installNamespace: NS })[0]!;
      await kube.must('POST', collectionPath(p), [201], { body: o });
    }
    await eventually('the installer role to take effect', () => sar(witness(rules[0]!, rules)), 30_000);
  });

  after(async function () {
    if (!kube) return;
    for (const p of placed?.filter((x) => !x.namespace && !isShared(x)) ?? []) await kube.request('DELETE', objectPath(p));
    for (const o of installer ?? []) {
      if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') await kube.request('DELETE', `${RBAC_API}/${o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}/${o.metadata!.name}`);
    }
    await kube.request('DELETE', `/api/v1/namespaces/${NS}`);
    for (const name of createdCRDs) await kube.request('DELETE', `${CRD_API}/${name}`);
    kube.close();
  });

  it('renders what OLM creates, with unique names where the cluster is shared', () => {
    const kinds = placed.map((p) => p.kind);
    for (const k of ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'ValidatingWebhookConfiguration', 'Service', 'Issuer', 'Certificate', 'NetworkPolicy', 'PodDisruptionBudget']) {
      assert.ok(kinds.includes(k), `${k} among ${kinds.join(', ')}`);
    }
    assert.deepEqual(placed.filter(isShared).map((p) => p.kind).sort(), ['ClusterRole', 'CustomResourceDefinition', 'ValidatingWebhookConfiguration']);
    assert.ok(placed.filter((p) => p.kind === 'ClusterRoleBinding').every((p) => p.name.startsWith(`olmpub-bi-${id}`)), 'hashed OLM names carry the unique CSV name');
    assert.ok(rules.length >= 20, `a realistic role: ${rules.length} rules`);
  });

  it('with the derived role, the ServiceAccount can get, create, apply, update, list, watch and delete every object', async () => {
    const failure = await lifecycle();
    await cleanBundle();
    assert.equal(failure, undefined, `lifecycle with the full role failed: ${JSON.stringify(failure)}`);
    assert.equal(await ownerReferenceProbe(), 201, 'blockOwnerDeletion on the ClusterExtension is allowed');
  });

  it('removing any one rule makes some request or the escalation check fail', async () => {
    const outcomes: string[] = [];
    try {
      for (const [i, removed] of rules.entries()) {
        await setInstallerRules(rules.filter((_, j) => j !== i));
        const probe = witness(removed, rules);
        await eventually(`removal of rule ${i} to take effect`, async () => !(await sar(probe)), 30_000);
        const ruleLabel = JSON.stringify(ruleToObject(removed));

        const failure = await lifecycle();
        await cleanBundle();
        if (removed.resources?.[0] === 'clusterextensions/finalizers') {
          assert.equal(failure, undefined, 'plain requests never use the finalizers permission');
          const owner = await ownerReferenceProbe();
          if (owner === 403) outcomes.push(`${ruleLabel} -> blockOwnerDeletion denied (OwnerReferencesPermissionEnforcement)`);
          else {
            assert.equal(await sar(probe), false, 'the apiserver denies updating the ClusterExtension finalizers');
            outcomes.push(`${ruleLabel} -> finalizers update denied (SubjectAccessReview; OwnerReferencesPermissionEnforcement is off)`);
          }
          continue;
        }
        assert.ok(failure, `removing ${ruleLabel} should make some request fail`);
        assert.equal(failure.status, 403, `removing ${ruleLabel}: ${JSON.stringify(failure)}`);
        outcomes.push(`${ruleLabel} -> ${failure.step} ${failure.object}: ${failure.status}${/not currently held|escalat/i.test(failure.message) ? ' (escalation)' : ''}`);
      }
    } finally {
      await setInstallerRules(rules);
      await eventually('the full role to be restored', () => sar(witness(rules[0]!, rules)), 30_000);
    }
    if (process.env.OLMPUB_TEST_VERBOSE) process.stderr.write(`${outcomes.join('\n')}\n`);
    assert.equal(outcomes.length, rules.length);
    assert.ok(outcomes.some((o) => o.endsWith('(escalation)')), `some removals fail the escalation check:\n${outcomes.join('\n')}`);
    assert.ok(outcomes.some((o) => / \(dry run\): 403/.test(o)), `some removals fail on the shared objects (dry run):\n${outcomes.join('\n')}`);
  });
});
