import assert from 'node:assert/strict';
import * as s from '../../../operator/api/schema.js';
import { formatDuration, parseDuration } from '../../../operator/api/duration.js';
import { withDefaults } from '../../../operator/api/index.js';
import { sampleV1 } from './fixtures.js';

describe('operator/api schema builder', () => {
  const schema = s.object(
    {
      name: s.string({ description: 'n', maxLength: 5 }),
      mode: s.string({ description: 'm', enum: ['a', 'b'] }).default('a'),
      nested: s
        .object({ x: s.integer({ description: 'x' }).default(3), y: s.integer({ description: 'y' }) }, { description: 'nested' })
        .default({}),
      items: s.array(s.object({ k: s.string({ description: 'k' }), v: s.integer({ description: 'v' }).default(1) }, { description: 'item', required: ['k'] }), { description: 'items', listType: 'map', listMapKeys: ['k'] }),
      labels: s.map(s.object({ on: s.boolean({ description: 'on' }).default(true) }, { description: 'entry' }), { description: 'labels' }),
    },
    { description: 'root', required: ['name'], rules: [{ rule: 'self.name != ""', message: 'name' }] },
  );

  it('emits OpenAPI v3 with wire names, required fields, defaults and rules', () => {
    assert.deepEqual(schema.json.required, ['name']);
    assert.deepEqual(schema.json['x-kubernetes-validations'], [{ rule: 'self.name != ""', message: 'name' }]);
    assert.deepEqual(schema.json.properties!.mode, { type: 'string', description: 'm', enum: ['a', 'b'], default: 'a' });
    assert.equal(schema.json.properties!.items!['x-kubernetes-list-type'], 'map');
    assert.deepEqual(schema.json.properties!.items!['x-kubernetes-list-map-keys'], ['k']);
    assert.equal(schema.json.properties!.name!.maxLength, 5);
    assert.equal(schema.json.properties!.labels!.additionalProperties!.type, 'object');
    // Nothing undefined leaks into the JSON.
    assert.ok(!JSON.stringify(schema.json).includes('undefined'));
    assert.deepEqual(JSON.parse(JSON.stringify(schema.json)), schema.json);
  });

  it('applies defaults like the apiserver: missing fields, inside defaults, in list items and map values', () => {
    const input = { name: 'x', items: [{ k: 'a' }, { k: 'b', v: 7 }], labels: { l: {} } };
    const out = s.applyDefaults(schema, input);
    assert.deepEqual(out, { name: 'x', mode: 'a', nested: { x: 3 }, items: [{ k: 'a', v: 1 }, { k: 'b', v: 7 }], labels: { l: { on: true } } });
    // The input is untouched, and a present value is never replaced.
    assert.deepEqual(input, { name: 'x', items: [{ k: 'a' }, { k: 'b', v: 7 }], labels: { l: {} } });
    assert.equal(s.applyDefaults(schema, { name: 'x', mode: 'b' }).mode, 'b');
    // Output type: defaulted fields are present (this line type-checks only because of that).
    const x: number = out.nested.x;
    assert.equal(x, 3);
  });

  it('defaults a v1 InferenceService as stored', () => {
    const d = withDefaults(sampleV1());
    assert.equal(d.spec.runtime.port, 8080);
    assert.equal(d.spec.runtime.healthPath, '/health');
    assert.deepEqual(d.spec.scaling, { minReplicas: 1, maxReplicas: 1, replicas: 1, idleTimeout: '15m' });
    assert.equal(d.spec.resources?.gpu?.resourceName, 'nvidia.com/gpu');
  });
});

describe('operator/api durations', () => {
  it('parses h/m/s durations and rejects anything else', () => {
    assert.equal(parseDuration('15m'), 900);
    assert.equal(parseDuration('1h30m'), 5400);
    assert.equal(parseDuration('2h5m10s'), 7510);
    assert.equal(parseDuration('90s'), 90);
    for (const bad of ['', '15', 'm', '1m1h', '1.5h', '-1s', '1d']) assert.equal(parseDuration(bad), undefined, bad);
  });

  it('formats seconds back to the shortest string', () => {
    assert.equal(formatDuration(5400), '1h30m');
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(61), '1m1s');
    for (const n of [1, 59, 60, 3599, 3600, 7510]) assert.equal(parseDuration(formatDuration(n)), n);
  });
});
