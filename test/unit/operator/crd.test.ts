import assert from 'node:assert/strict';
import AjvModule from 'ajv';
import { canonicalJSON } from '../../../lib/canonical.js';
import {
  CRD_NAME,
  DEFAULT_CONVERSION_CLIENT_CONFIG,
  SCALE_PATHS,
  inferenceServiceCRD,
  operatorCRDs,
  type CRDVersion,
  type JSONSchemaProps,
} from '../../../operator/api/index.js';

const crd = inferenceServiceCRD();
const version = (name: string) => crd.spec.versions.find((v) => v.name === name)!;

/** Every schema node with its JSON path. */
function nodes(schema: JSONSchemaProps, path = ''): [string, JSONSchemaProps][] {
  const out: [string, JSONSchemaProps][] = [[path || '.', schema]];
  for (const [k, v] of Object.entries(schema.properties ?? {})) out.push(...nodes(v, `${path}.${k}`));
  if (schema.additionalProperties) out.push(...nodes(schema.additionalProperties, `${path}.*`));
  if (schema.items) out.push(...nodes(schema.items, `${path}[]`));
  return out;
}

/** The schema node at a `.a.b.c` path (object properties only). */
function at(schema: JSONSchemaProps, path: string): JSONSchemaProps | undefined {
  let cur: JSONSchemaProps | undefined = schema;
  for (const key of path.split('.').filter(Boolean)) cur = cur?.properties?.[key];
  return cur;
}

const rulesAt = (v: CRDVersion, path: string) => (at(v.schema.openAPIV3Schema, path)?.['x-kubernetes-validations'] ?? []).map((r) => r.rule);

describe('operator/api CRD', () => {
  it('is deterministic and returns fresh objects', () => {
    const a = inferenceServiceCRD();
    const b = inferenceServiceCRD();
    assert.equal(canonicalJSON(a), canonicalJSON(b));
    assert.equal(JSON.stringify(a), JSON.stringify(b));
    (a.spec.versions[0]!.schema.openAPIV3Schema as { description?: string }).description = 'changed';
    a.spec.versions[1]!.additionalPrinterColumns.pop();
    assert.equal(canonicalJSON(inferenceServiceCRD()), canonicalJSON(b));
    assert.deepEqual(operatorCRDs(), [b]);
  });

  it('names the group, kind and versions: v1alpha1 served and deprecated, v1 served and stored', () => {
    assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(crd.metadata.name, CRD_NAME);
    assert.equal(CRD_NAME, 'inferenceservices.inference.olmpub.dev');
    assert.equal(crd.spec.group, 'inference.olmpub.dev');
    assert.equal(crd.spec.names.kind, 'InferenceService');
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false]), [
      ['v1alpha1', true, false, true],
      ['v1', true, true, false],
    ]);
    assert.match(version('v1alpha1').deprecationWarning!, /deprecated.*inference\.olmpub\.dev\/v1\b/);
    assert.equal(version('v1').deprecationWarning, undefined);
  });

  it('converts through a ConversionReview v1 webhook whose client config the installer can set', () => {
    assert.deepEqual(crd.spec.conversion, { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: DEFAULT_CONVERSION_CLIENT_CONFIG } });
    const custom = inferenceServiceCRD({ conversionClientConfig: { caBundle: 'Q0E=', service: { namespace: 'ops', name: 'isvc-webhook', path: '/convert', port: 9443 } } });
    assert.deepEqual(custom.spec.conversion, {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { caBundle: 'Q0E=', service: { namespace: 'ops', name: 'isvc-webhook', path: '/convert', port: 9443 } } },
    });
  });

  for (const name of ['v1alpha1', 'v1'] as const) {
    describe(`${name} schema`, () => {
      const v = version(name);
      const root = v.schema.openAPIV3Schema;

      it('is structural: typed nodes, no mixed properties/additionalProperties, required fields exist, list map keys present', () => {
        assert.equal(root.type, 'object');
        assert.deepEqual(Object.keys(root.properties!).sort(), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
        assert.deepEqual(root.properties!.metadata, { type: 'object' });
        for (const [path, node] of nodes(root)) {
          if (node['x-kubernetes-int-or-string']) assert.deepEqual(node.anyOf, [{ type: 'integer' }, { type: 'string' }], path);
          else assert.ok(node.type, `${path} has no type`);
          assert.ok(!(node.properties && node.additionalProperties), `${path} mixes properties and additionalProperties`);
          for (const req of node.required ?? []) assert.ok(node.properties?.[req], `${path} requires unknown ${req}`);
          if (node['x-kubernetes-validations']) assert.ok(node.type === 'object' || node.type === 'array', `${path}: CEL on a scalar`);
          for (const rule of node['x-kubernetes-validations'] ?? []) {
            // The apiserver rejects a fieldPath that does not name a field of the schema (metadata has none).
            if (rule.fieldPath) assert.ok(at(node, rule.fieldPath), `${path}: fieldPath ${rule.fieldPath} of rule ${rule.rule} names no schema field`);
          }
          if (node['x-kubernetes-list-type'] === 'map') {
            for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
              const item = node.items!;
              assert.ok(item.required?.includes(key) || item.properties?.[key]?.default !== undefined, `${path}: list map key ${key} must be required or defaulted`);
            }
          }
          if (path !== '.' && path !== '.metadata') assert.ok(node.description || node.items || path.endsWith('.*'), `${path} has no description`);
        }
      });

      it('has defaults that are valid against their own field schema', () => {
        const ajv = new AjvModule.default({ strict: false, validateFormats: false });
        let count = 0;
        for (const [path, node] of nodes(root)) {
          if (node.default === undefined) continue;
          count++;
          const { default: value, ...schema } = node;
          assert.ok(ajv.validate(schema, value), `${path}: default ${JSON.stringify(value)} is invalid: ${ajv.errorsText()}`);
        }
        assert.ok(count >= 4, `only ${count} defaults`);
      });

      it('has status and scale subresources whose paths name real fields', () => {
        assert.deepEqual(v.subresources.status, {});
        const scale = v.subresources.scale!;
        assert.deepEqual(scale, SCALE_PATHS[name]);
        assert.equal(at(root, scale.specReplicasPath)?.type, 'integer', scale.specReplicasPath);
        assert.ok(scale.specReplicasPath.startsWith('.spec.'));
        assert.equal(at(root, scale.statusReplicasPath)?.type, 'integer');
        assert.equal(at(root, scale.labelSelectorPath!)?.type, 'string');
      });

      it('prints Ready, Replicas, URL and Age from real fields', () => {
        const cols = v.additionalPrinterColumns.filter((c) => !c.priority);
        assert.deepEqual(cols.map((c) => c.name), ['Ready', 'Replicas', 'URL', 'Age']);
        assert.equal(cols[0]!.jsonPath, '.status.conditions[?(@.type=="Ready")].status');
        assert.equal(at(root, '.status.conditions')?.type, 'array');
        assert.equal(at(root, cols[1]!.jsonPath)?.type, 'integer');
        assert.equal(at(root, cols[2]!.jsonPath)?.type, 'string');
        assert.deepEqual(cols[3], { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' });
      });

      it('limits metadata.name so child names fit', () => {
        assert.ok(root['x-kubernetes-validations']!.some((r) => r.rule.includes('self.metadata.name') && r.rule.includes('<= 45')));
      });
    });
  }

  it('declares the v1 invariants as CEL rules', () => {
    const v1 = version('v1');
    assert.ok(rulesAt(v1, '.spec.scaling').some((r) => r.includes('self.minReplicas <= self.maxReplicas')));
    assert.ok(rulesAt(v1, '.spec.canary').some((r) => r.includes('self.trafficPercent >= 0 && self.trafficPercent <= 100')));
    assert.ok(rulesAt(v1, '.spec').includes('(has(self.resources) && has(self.resources.gpu)) != has(self.devices)'));
    assert.ok(rulesAt(v1, '.spec.model').includes('has(self.storageUri) != has(self.pvc)'));
    assert.equal(at(v1.schema.openAPIV3Schema, '.spec.canary.trafficPercent')?.maximum, 100);
    assert.equal(at(v1.schema.openAPIV3Schema, '.spec.scaling.minReplicas')?.minimum, 0);
    assert.ok(rulesAt(version('v1alpha1'), '.spec.replicas').some((r) => r.includes('self.min <= self.max')));
  });

  it('defaults the v1 fields in the schema', () => {
    const spec = version('v1').schema.openAPIV3Schema.properties!.spec!;
    assert.equal(at(spec, '.runtime.port')?.default, 8080);
    assert.equal(at(spec, '.runtime.healthPath')?.default, '/health');
    assert.equal(at(spec, '.runtime.startupTimeout')?.default, '20m');
    assert.deepEqual(at(spec, '.scaling')?.default, {});
    assert.equal(at(spec, '.scaling.minReplicas')?.default, 1);
    assert.equal(at(spec, '.scaling.idleTimeout')?.default, '15m');
    assert.equal(at(spec, '.resources.gpu.resourceName')?.default, 'nvidia.com/gpu');
    assert.equal(spec.properties!.devices!.items!.properties!.count!.default, 1);
  });
});
