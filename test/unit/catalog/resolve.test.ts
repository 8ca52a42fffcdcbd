import assert from 'node:assert/strict';
import { resolveUpgrade } from '../../../catalog/resolve/resolve.js';
import type { DeclarativeConfig } from '../../../catalog/fbc/types.js';

const img = (n: number) => `quay.io/x/foo@sha256:${n.toString(16).padStart(64, '0')}`;
/** stable: 1.0.0 → 1.1.0 (replaces) → 1.2.0 (replaces 1.1.0, skipRange <1.2.0); fast adds 1.3.0 (skips 1.2.0); 1.2.0 deprecated. */
function catalog(): DeclarativeConfig {
  const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '0.9.0'];
  return {
    packages: [{ schema: 'olm.package', name: 'foo', defaultChannel: 'stable' }],
    channels: [
      { schema: 'olm.channel', name: 'stable', package: 'foo', entries: [{ name: 'foo.v1.0.0', replaces: 'foo.v0.9.0' }, { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }, { name: 'foo.v1.2.0', replaces: 'foo.v1.1.0', skipRange: '>=1.0.0 <1.2.0' }] },
      { schema: 'olm.channel', name: 'fast', package: 'foo', entries: [{ name: 'foo.v1.0.0' }, { name: 'foo.v1.2.0', replaces: 'foo.v1.0.0' }, { name: 'foo.v1.3.0', skips: ['foo.v1.2.0'], replaces: 'foo.v1.0.0' }] },
      { schema: 'olm.channel', name: 'legacy', package: 'foo', entries: [{ name: 'foo.v0.9.0' }] },
    ],
    bundles: versions.map((v, i) => ({ schema: 'olm.bundle', name: `foo.v${v}`, package: 'foo', image: img(i + 1), properties: [{ type: 'olm.package', value: { packageName: 'foo', version: v } }] })),
    deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.bundle', name: 'foo.v1.3.0' }, message: 'broken' }] }],
  others: [],
  };
}

describe('catalog/resolve: what OLM v1 installs next', () => {
  it('CatalogProvided: successors by replaces, skips or skipRange (any channel when none is selected), highest non-deprecated wins', () => {
    const r = resolveUpgrade(catalog(), { installed: '1.0.0' });
    assert.equal(r.selected!.version, '1.2.0', '1.3.0 is higher but deprecated');
    assert.deepEqual(r.candidates.map((c) => c.version), ['1.2.0', '1.1.0', '1.0.0', '1.3.0']);
    assert.deepEqual(r.selected!.reasons, [
      { kind: 'skipRange', channel: 'stable', detail: 'skipRange ">=1.0.0 <1.2.0" contains 1.0.0' },
      { kind: 'replaces', channel: 'fast', detail: 'replaces foo.v1.0.0' },
    ]);
    assert.deepEqual(r.candidates.find((c) => c.version === '1.0.0')!.reasons, [{ kind: 'installed', detail: 'the installed version (stay)' }]);
    assert.deepEqual(r.rejected.map((x) => [x.version, x.reason]), [['0.9.0', 'no replaces/skips/skipRange edge from foo.v1.0.0 (a downgrade needs upgradeConstraintPolicy: SelfCertified)']]);
  });

  it('limits candidates and edges to the selected channels', () => {
    const r = resolveUpgrade(catalog(), { installed: 'foo.v1.1.0', channels: ['fast'] });
    assert.equal(r.installed!.bundle, 'foo.v1.1.0');
    assert.equal(r.selected, undefined, 'fast has no edge from 1.1.0 and does not contain it');
    assert.equal(r.error, 'error upgrading from currently installed version "1.1.0": no bundles found for package "foo" in channels [fast]');
    const s = resolveUpgrade(catalog(), { installed: '1.1.0', channels: ['stable'] });
    assert.equal(s.selected!.version, '1.2.0');
    assert.deepEqual(s.rejected.map((x) => [x.bundle, x.reason]), [
      ['foo.v0.9.0', 'not in channel stable'],
      ['foo.v1.0.0', 'no replaces/skips/skipRange edge from foo.v1.1.0 in the selected channels (a downgrade needs upgradeConstraintPolicy: SelfCertified)'],
      ['foo.v1.3.0', 'not in channel stable'],
    ]);
  });

  it('applies the Masterminds version range, and reports OLM\'s error when nothing matches', () => {
    const r = resolveUpgrade(catalog(), { installed: '1.0.0', versionRange: '~1.1' });
    assert.equal(r.selected!.version, '1.1.0');
    const none = resolveUpgrade(catalog(), { installed: '1.2.0', versionRange: '<1.2.0' });
    assert.equal(none.error, 'error upgrading from currently installed version "1.2.0": no bundles found for package "foo" matching version "<1.2.0"');
    assert.throws(() => resolveUpgrade(catalog(), { installed: '1.0.0', versionRange: '>= bar' }), /desired version range ">= bar" is invalid: improper constraint/);
  });

  it('SelfCertified ignores edges: any version in range, downgrades included', () => {
    const r = resolveUpgrade(catalog(), { installed: '1.2.0', versionRange: '<1.2.0', policy: 'SelfCertified' });
    assert.equal(r.selected!.version, '1.1.0');
    assert.equal(r.selected!.direction, 'downgrade');
    assert.equal(r.selected!.reasons[0]!.kind, 'self-certified');
  });

  it('fresh install: the highest non-deprecated bundle of the channels', () => {
    const r = resolveUpgrade(catalog(), { channels: ['fast'] });
    assert.equal(r.selected!.version, '1.2.0');
    assert.equal(r.selected!.direction, 'install');
  });

  it('an installed version absent from the catalog can only follow skipRange', () => {
    const r = resolveUpgrade(catalog(), { installed: '1.0.5' });
    assert.equal(r.installed!.bundle, undefined);
    assert.equal(r.selected!.version, '1.2.0');
    assert.match(r.notes[0]!, /only skipRange edges can start from it/);
  });

  it('orders releases encoded as build metadata (registry+v1 legacy): 1.2.0+2 after 1.2.0+1', () => {
    const c = catalog();
    c.bundles.push({ schema: 'olm.bundle', name: 'foo.v1.2.0-2', package: 'foo', image: img(9), properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.2.0+2' } }] });
    c.channels[0]!.entries.push({ name: 'foo.v1.2.0-2', replaces: 'foo.v1.2.0' });
    const r = resolveUpgrade(c, { installed: '1.2.0', channels: ['stable'] });
    assert.equal(r.selected!.bundle, 'foo.v1.2.0-2');
    assert.equal(r.selected!.version, '1.2.0+2');
  });

  it('needs a package name when the catalog has several, and a parsable installed version', () => {
    const c = catalog();
    c.packages.push({ schema: 'olm.package', name: 'bar', defaultChannel: 'x' });
    assert.throws(() => resolveUpgrade(c, { installed: '1.0.0' }), /the catalog has 2 packages/);
    assert.equal(resolveUpgrade(c, { packageName: 'foo', installed: '1.0.0' }).packageName, 'foo');
    assert.throws(() => resolveUpgrade(catalog(), { installed: 'latest' }), /neither a bundle of foo nor a semver version/);
  });
});
