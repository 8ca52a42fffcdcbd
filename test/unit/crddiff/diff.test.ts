import assert from 'node:assert/strict';
import {
  type CRD,
  type CRDVersion,
  type Schema,
  compareKubeVersions,
  diffCRDs,
  diffCRDSets,
  flattenSchema,
  formatFinding,
} from '../../../bundle/crddiff/diff.js';

const NAME = 'widgets.example.com';

function version(name: string, spec: Schema, extra: Partial<CRDVersion> = {}): CRDVersion {
  return {
    name,
    served: true,
    storage: false,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } },
    ...extra,
  };
}

function crd(versions: CRDVersion[], extra: { scope?: string; storedVersions?: string[]; conversion?: string } = {}): CRD {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: 'example.com',
      scope: extra.scope ?? 'Namespaced',
      names: { kind: 'Widget', plural: 'widgets' },
      versions,
      ...(extra.conversion ? { conversion: { strategy: extra.conversion } } : {}),
    },
    ...(extra.storedVersions ? { status: { storedVersions: extra.storedVersions } } : {}),
  };
}

/** One stored version v1 whose spec has one property `field` with the given schema. */
const one = (field: Schema, more: Schema = {}) => crd([version('v1', { field, ...more }, { storage: true })]);

const messages = (old: CRD, next: CRD) => diffCRDs(old, next).findings.map(formatFinding);
const validations = (old: CRD, next: CRD) => diffCRDs(old, next).findings.map((f) => `${f.version ?? ''}|${f.property ?? ''}|${f.validation}`);

function assertPasses(old: CRD, next: CRD) {
  const r = diffCRDs(old, next);
  assert.deepEqual(r.findings.map(formatFinding), []);
  assert.equal(r.passed, true);
}

describe('crddiff: diffCRDs (crdify rules with OLM settings)', () => {
  it('an identical CRD passes', () => {
    const c = one({ type: 'string', enum: ['a'], default: 'a', maxLength: 3, pattern: '^a$' });
    assertPasses(c, structuredClone(c));
  });

  it('messages have OLM\'s shape: validating upgrade for CRD "<name>": <version>: <path>: <validation>: <message>', () => {
    assert.deepEqual(messages(one({ type: 'string' }), one({ type: 'integer' })), [
      'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: type: type changed : "string" -> "integer"',
    ]);
  });

  describe('scope', () => {
    it('fails Namespaced -> Cluster', () => {
      const old = one({ type: 'string' });
      const next = crd([version('v1', { field: { type: 'string' } }, { storage: true })], { scope: 'Cluster' });
      assert.deepEqual(messages(old, next), ['validating upgrade for CRD "widgets.example.com": scope: scope changed from "Namespaced" to "Cluster"']);
    });
    it('passes when unchanged', () => assertPasses(one({ type: 'string' }), one({ type: 'string' })));
  });

  describe('storedVersionRemoval', () => {
    it('fails when a version in status.storedVersions disappears', () => {
      const old = crd([version('v1alpha1', {}, { served: false }), version('v1', {}, { storage: true })], { storedVersions: ['v1alpha1', 'v1'] });
      const next = crd([version('v1', {}, { storage: true })]);
      assert.deepEqual(messages(old, next), ['validating upgrade for CRD "widgets.example.com": storedVersionRemoval: stored versions [v1alpha1] removed']);
    });
    it('without status, the old storage version counts as stored', () => {
      const old = crd([version('v1beta1', {}, { storage: true }), version('v1', {})]);
      const next = crd([version('v1', {}, { storage: true })]);
      assert.deepEqual(validations(old, next), ['||storedVersionRemoval']);
    });
    it('removing a version that is neither stored nor served passes', () => {
      const old = crd([version('v1alpha1', {}, { served: false }), version('v1', {}, { storage: true })], { storedVersions: ['v1'] });
      assertPasses(old, crd([version('v1', {}, { storage: true })]));
    });
    it('a served version that vanishes fails (olmpub check, marked as not OLM)', () => {
      const old = crd([version('v1beta1', {}), version('v1', {}, { storage: true })], { storedVersions: ['v1'] });
      const r = diffCRDs(old, crd([version('v1', {}, { storage: true })]));
      assert.equal(r.findings.length, 1);
      assert.equal(r.findings[0]!.validation, 'servedVersionRemoval');
      assert.equal(r.findings[0]!.olm, false);
      assert.equal(diffCRDs(old, crd([version('v1', {}, { storage: true })]), { servedVersionRemoval: false }).passed, true);
    });
    it('adding a new version passes', () => {
      const old = one({ type: 'string' });
      const next = crd([version('v1', { field: { type: 'string' } }, { storage: true }), version('v2', { field: { type: 'string' } })]);
      assertPasses(old, next);
    });
  });

  describe('existingFieldRemoval', () => {
    it('fails when a field is removed, reporting the topmost removed path once', () => {
      const old = one({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'string' } } } } });
      const next = one({ type: 'object', properties: { a: { type: 'string' } } });
      assert.deepEqual(messages(old, next), [
        'validating upgrade for CRD "widgets.example.com": existingFieldRemoval: crd/widgets.example.com version/v1 field/^.spec.field.b may not be removed',
      ]);
    });
    it('an added optional field passes', () => {
      const old = one({ type: 'object', properties: { a: { type: 'string' } } });
      const next = one({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer', minimum: 0, default: 1 } } });
      assertPasses(old, next);
    });
    it('list items and map values are fields too', () => {
      const old = one({ type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } });
      const next = one({ type: 'array', items: { type: 'object' } });
      assert.deepEqual(validations(old, next), ['||existingFieldRemoval']);
      assert.match(messages(old, next)[0]!, /field\/\^\.spec\.field\.items\.x may not be removed/);
      const oldMap = one({ type: 'object', additionalProperties: { type: 'string' } });
      const newMap = one({ type: 'object', additionalProperties: true });
      assert.match(messages(oldMap, newMap).join('\n'), /field\/\^\.spec\.field\.additionalProperties may not be removed/);
    });
  });

  describe('default', () => {
    it('fails when added', () => assert.deepEqual(validations(one({ type: 'string' }), one({ type: 'string', default: 'a' })), ['v1|^.spec.field|default']));
    it('fails when changed, with the raw values', () =>
      assert.deepEqual(messages(one({ type: 'string', default: 'a' }), one({ type: 'string', default: 'b' })), [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: default: default value changed : "\\"a\\"" -> "\\"b\\""',
      ]));
    it('fails when removed', () => assert.deepEqual(validations(one({ type: 'string', default: 'a' }), one({ type: 'string' })), ['v1|^.spec.field|default']));
    it('passes when equal (object defaults compare by value, not key order)', () =>
      assertPasses(one({ type: 'object', default: { a: 1, b: 2 } }), one({ type: 'object', default: { b: 2, a: 1 } })));
  });

  describe('enum', () => {
    it('fails when a constraint is added', () =>
      assert.deepEqual(messages(one({ type: 'string' }), one({ type: 'string', enum: ['b', 'a'] })), [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: enum: enum constraint added when there was none previously : ["a" "b"]',
      ]));
    it('fails when a value is removed', () => assert.deepEqual(validations(one({ type: 'string', enum: ['a', 'b'] }), one({ type: 'string', enum: ['a'] })), ['v1|^.spec.field|enum']));
    it('passes when a value is added (OLM additionPolicy: Allow)', () => assertPasses(one({ type: 'string', enum: ['a'] }), one({ type: 'string', enum: ['a', 'b'] })));
    it('dropping the whole constraint counts as removing its values, as in crdify', () =>
      assert.deepEqual(validations(one({ type: 'string', enum: ['a'] }), one({ type: 'string' })), ['v1|^.spec.field|enum']));
  });

  describe('required', () => {
    it('fails when a field becomes required', () =>
      assert.deepEqual(messages(one({ type: 'object', properties: { a: { type: 'string' } } }), one({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } })), [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: required: new required fields: [a]',
      ]));
    it('fails when a new required field is added', () =>
      assert.deepEqual(validations(one({ type: 'object', properties: {} }), one({ type: 'object', required: ['b'], properties: { b: { type: 'string' } } })), ['v1|^.spec.field|required']));
    it('passes required -> optional', () =>
      assertPasses(one({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } }), one({ type: 'object', properties: { a: { type: 'string' } } })));
  });

  describe('type', () => {
    it('fails on a change', () => assert.deepEqual(validations(one({ type: 'integer' }), one({ type: 'number' })), ['v1|^.spec.field|type']));
    it('passes when unchanged', () => assertPasses(one({ type: 'integer' }), one({ type: 'integer' })));
  });

  for (const key of ['maximum', 'maxItems', 'maxLength', 'maxProperties'] as const) {
    describe(key, () => {
      it('fails when added', () =>
        assert.deepEqual(messages(one({ type: 'string' }), one({ type: 'string', [key]: 5 })), [
          `validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: ${key}: maximum constraint added when there was none previously : 5`,
        ]));
      it('fails when decreased', () =>
        assert.deepEqual(messages(one({ type: 'string', [key]: 5 }), one({ type: 'string', [key]: 4 })), [
          `validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: ${key}: maximum decreased : 5 -> 4`,
        ]));
      it('passes when increased or removed', () => {
        assertPasses(one({ type: 'string', [key]: 5 }), one({ type: 'string', [key]: 6 }));
        assertPasses(one({ type: 'string', [key]: 5 }), one({ type: 'string' }));
      });
    });
  }

  for (const key of ['minimum', 'minItems', 'minLength', 'minProperties'] as const) {
    describe(key, () => {
      it('fails when added', () => assert.deepEqual(validations(one({ type: 'string' }), one({ type: 'string', [key]: 1 })), [`v1|^.spec.field|${key}`]));
      it('fails when increased', () =>
        assert.deepEqual(messages(one({ type: 'string', [key]: 1 }), one({ type: 'string', [key]: 2 })), [
          `validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: ${key}: minimum increased : 1 -> 2`,
        ]));
      it('passes when decreased or removed', () => {
        assertPasses(one({ type: 'string', [key]: 2 }), one({ type: 'string', [key]: 1 }));
        assertPasses(one({ type: 'string', [key]: 2 }), one({ type: 'string' }));
      });
    });
  }

  describe('pattern', () => {
    it('fails when added', () =>
      assert.deepEqual(messages(one({ type: 'string' }), one({ type: 'string', pattern: '^a$' })), [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: pattern: pattern added : "" -> "^a$"',
      ]));
    it('fails when changed', () => assert.deepEqual(validations(one({ type: 'string', pattern: '^a$' }), one({ type: 'string', pattern: '^b$' })), ['v1|^.spec.field|pattern']));
    it('fails when removed', () => assert.deepEqual(validations(one({ type: 'string', pattern: '^a$' }), one({ type: 'string' })), ['v1|^.spec.field|pattern']));
    it('passes when unchanged', () => assertPasses(one({ type: 'string', pattern: '^a$' }), one({ type: 'string', pattern: '^a$' })));
  });

  describe('nullable', () => {
    it('fails when added', () =>
      assert.deepEqual(messages(one({ type: 'string' }), one({ type: 'string', nullable: true })), [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.field: nullable: nullable added : false -> true',
      ]));
    it('fails when removed', () => assert.deepEqual(validations(one({ type: 'string', nullable: true }), one({ type: 'string', nullable: false })), ['v1|^.spec.field|nullable']));
    it('false equals absent', () => assertPasses(one({ type: 'string', nullable: false }), one({ type: 'string' })));
  });

  describe('description', () => {
    it('changes are ignored (OLM sets enforcement None)', () => {
      assertPasses(one({ type: 'string', description: 'old' }), one({ type: 'string', description: 'new' }));
      assertPasses(one({ type: 'string' }), one({ type: 'string', description: 'added' }));
    });
  });

  describe('unhandled changes are errors (UnhandledEnforcement: Error)', () => {
    const cases: [string, Schema, Schema][] = [
      ['x-kubernetes-preserve-unknown-fields', { type: 'object' }, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }],
      ['x-kubernetes-int-or-string', { type: 'string' }, { 'x-kubernetes-int-or-string': true }],
      ['x-kubernetes-list-type', { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' }, { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' }],
      ['x-kubernetes-validations', { type: 'string' }, { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() > 0' }] }],
      ['format', { type: 'string' }, { type: 'string', format: 'date-time' }],
      ['anyOf', { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }, { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }] }],
      ['allOf', { type: 'object' }, { type: 'object', allOf: [{ required: ['a'] }] }],
      ['oneOf', { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] }, { type: 'object', oneOf: [{ required: ['a'] }] }],
      ['additionalProperties (boolean)', { type: 'object', additionalProperties: true }, { type: 'object', additionalProperties: false }],
      ['exclusiveMaximum', { type: 'integer', maximum: 5 }, { type: 'integer', maximum: 5, exclusiveMaximum: true }],
    ];
    for (const [what, before, after] of cases) {
      it(`${what}`, () => {
        const f = diffCRDs(one(before), one(after)).findings;
        assert.ok(f.some((x) => x.validation === 'unhandled' && x.property === '^.spec.field'), JSON.stringify(f));
        assert.match(f.map(formatFinding).join('\n'), /: unhandled: unhandled change\(s\) found - diff: /);
      });
    }
    it('a handled change next to an unhandled one reports both, each once', () => {
      assert.deepEqual(validations(one({ type: 'string', maxLength: 5 }), one({ type: 'string', maxLength: 4, format: 'uri' })), [
        'v1|^.spec.field|maxLength',
        'v1|^.spec.field|unhandled',
      ]);
    });
    it('a child change is reported at the child only, never as unhandled at the parent', () => {
      const f = diffCRDs(one({ type: 'object', properties: { a: { type: 'string' } } }), one({ type: 'object', properties: { a: { type: 'string', format: 'uri' } } })).findings;
      assert.deepEqual(f.map((x) => `${x.property}|${x.validation}`), ['^.spec.field.a|unhandled']);
    });
    it('empty lists equal absent ones (Go semantic equality)', () => assertPasses(one({ type: 'object', required: [] }), one({ type: 'object' })));
  });

  describe('served versions (Conversion: Ignore)', () => {
    const twoServed = (alpha: Schema, v1: Schema, conversion?: string) =>
      crd([version('v1alpha1', alpha), version('v1', v1, { storage: true })], { ...(conversion ? { conversion } : {}), storedVersions: ['v1'] });

    it('compares every pair of served versions of the new CRD when conversion is None', () => {
      const old = crd([version('v1', { a: { type: 'string' } }, { storage: true })]);
      const next = twoServed({ a: { type: 'integer' } }, { a: { type: 'string' } });
      assert.deepEqual(messages(old, next), [
        'validating upgrade for CRD "widgets.example.com": v1alpha1 -> v1: ^.spec.a: type: type changed : "integer" -> "string"',
      ]);
    });
    it('a field of the older served version missing in the newer one fails', () => {
      const old = crd([version('v1', { a: { type: 'string' } }, { storage: true })]);
      const next = twoServed({ a: { type: 'string' }, b: { type: 'string' } }, { a: { type: 'string' } });
      assert.deepEqual(validations(old, next), ['v1alpha1 -> v1|^.spec.b|existingFieldRemoval']);
    });
    it('skips served-version checks when the new CRD converts with a webhook', () => {
      const old = crd([version('v1', { a: { type: 'string' } }, { storage: true })]);
      assertPasses(old, twoServed({ a: { type: 'integer' } }, { a: { type: 'string' } }, 'Webhook'));
    });
    it('does not report served-pair differences the old CRD already had', () => {
      const c = twoServed({ a: { type: 'integer' } }, { a: { type: 'string' } });
      assertPasses(c, structuredClone(c));
    });
    it('orders versions the Kubernetes way', () => {
      const sorted = ['v2', 'v1', 'foo', 'v1beta1', 'v10', 'v1alpha1', 'v1beta2', 'bar'].sort(compareKubeVersions);
      assert.deepEqual(sorted, ['foo', 'bar', 'v1alpha1', 'v1beta1', 'v1beta2', 'v1', 'v2', 'v10']);
    });
  });

  it('flattens properties, items and additionalProperties into crdify paths', () => {
    const paths = [
      ...flattenSchema({
        type: 'object',
        properties: { spec: { type: 'object', properties: { l: { type: 'array', items: { type: 'string' } }, m: { type: 'object', additionalProperties: { type: 'integer' } } } } },
      }).keys(),
    ];
    assert.deepEqual(paths, ['^', '^.spec', '^.spec.l', '^.spec.l.items', '^.spec.m', '^.spec.m.additionalProperties']);
  });

  it('refuses to compare two different CRDs', () => {
    const other = { ...one({ type: 'string' }), metadata: { name: 'gadgets.example.com' } };
    assert.throws(() => diffCRDs(one({ type: 'string' }), other), /cannot compare/);
  });
});

describe('crddiff: diffCRDSets', () => {
  const a = one({ type: 'string' });
  const b = { ...one({ type: 'string' }), metadata: { name: 'gadgets.example.com' } };
  it('a CRD only in NEW passes', () => {
    const r = diffCRDSets([a], [a, b]);
    assert.equal(r.passed, true);
    assert.deepEqual(r.crds.map((c) => `${c.name}:${c.status}`), ['gadgets.example.com:added', 'widgets.example.com:unchanged']);
  });
  it('a CRD only in OLD fails as a removal', () => {
    const r = diffCRDSets([a, b], [a]);
    assert.equal(r.passed, false);
    assert.deepEqual(r.crds.find((c) => c.name === 'gadgets.example.com')!.findings.map((f) => f.validation), ['crdRemoval']);
  });
  it('a compatible change is "safe", an incompatible one "unsafe"', () => {
    assert.equal(diffCRDSets([a], [one({ type: 'string', description: 'x' })]).crds[0]!.status, 'safe');
    assert.equal(diffCRDSets([a], [one({ type: 'integer' })]).crds[0]!.status, 'unsafe');
  });
});
