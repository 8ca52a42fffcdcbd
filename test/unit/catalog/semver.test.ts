import assert from 'node:assert/strict';
import * as blang from '../../../catalog/semver/blang.js';
import { mmCompare, newConstraint, newVersion } from '../../../catalog/semver/masterminds.js';
import { BLANG_RANGES, CHECKS, NEW_CONSTRAINT } from './semver-vectors.js';

describe('catalog/semver: blang (opm and OLM skipRange)', () => {
  it('parses strict semver and formats it back', () => {
    for (const v of ['0.0.0', '1.2.3', '1.2.3-rc.1', '1.2.3-0.alpha.9', '1.2.3+build.7', '1.2.3-rc.1+b', '10.20.30']) assert.equal(blang.format(blang.parse(v)), v);
  });

  it('rejects what opm rejects, with blang messages', () => {
    const cases: [string, RegExp][] = [
      ['', /Version string empty/],
      ['v1.0.0', /Invalid character\(s\) found in major number "v1"/],
      ['1.0', /No Major.Minor.Patch elements found/],
      ['01.0.0', /Major number must not contain leading zeroes/],
      ['1.02.0', /Minor number must not contain leading zeroes/],
      ['1.0.03', /Patch number must not contain leading zeroes/],
      ['1.0.0-01', /Numeric PreRelease version must not contain leading zeroes/],
      ['1.0.0-', /Prerelease is empty/],
      ['1.0.0+', /Build meta data is empty/],
      ['1.0.0-a_b', /Invalid character\(s\) found in prerelease/],
      ['1.0.0+a_b', /Invalid character\(s\) found in build meta data/],
      ['18446744073709551616.0.0', /value out of range/],
    ];
    for (const [v, re] of cases) assert.throws(() => blang.parse(v), re, v);
  });

  it('orders by semver precedence (prerelease before release, numeric before alphanumeric, build ignored)', () => {
    const order = ['1.0.0-0', '1.0.0-1', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0', '2.0.0'];
    for (let i = 0; i + 1 < order.length; i++) assert.equal(blang.compare(blang.parse(order[i]!), blang.parse(order[i + 1]!)), -1, `${order[i]} < ${order[i + 1]}`);
    assert.equal(blang.compare(blang.parse('1.0.0+a'), blang.parse('1.0.0+b')), 0);
  });

  it('matches blang ParseRange test vectors', () => {
    let checked = 0;
    for (const [range, tvs] of BLANG_RANGES) {
      if (!tvs) continue;
      const r = blang.parseRange(range);
      for (const [v, want] of tvs) {
        assert.equal(r(blang.parse(v)), want, `${range} ∋ ${v}`);
        checked++;
      }
    }
    assert.ok(checked > 60);
  });

  it('rejects bad ranges with blang messages', () => {
    assert.throws(() => blang.parseRange(''), /Last element in range is '\|\|'/);
    assert.throws(() => blang.parseRange('|| >1.0.0'), /First element in range is '\|\|'/);
    assert.throws(() => blang.parseRange('>>1.2.3'), /Could not parse comparator/);
    assert.throws(() => blang.parseRange('>=1.0 <1.1.0'), /Could not parse Range ">=1.0": Could not parse version "1.0" in ">=1.0": No Major.Minor.Patch elements found/);
    assert.throws(() => blang.parseRange('string'), /Could not get version from string/);
  });

  it('includes prereleases in ranges (unlike npm semver), as OLM v0/v1 skipRange does', () => {
    assert.ok(blang.parseRange('>=1.0.0 <1.2.0')(blang.parse('1.2.0-rc.1')));
    assert.ok(!blang.parseRange('>=1.0.0 <1.2.0')(blang.parse('1.0.0-rc.1')));
    assert.ok(blang.parseRange('>= 1.0.0 < 2.0.0')(blang.parse('1.5.0')), 'spaces after operators are allowed');
  });
});

describe('catalog/semver: Masterminds (ClusterExtension version ranges)', () => {
  it('matches Masterminds TestConstraintsCheck vectors', () => {
    for (const [c, v, want] of CHECKS) assert.equal(newConstraint(c).check(newVersion(v)), want, `${c} ∋ ${v}`);
    assert.ok(CHECKS.length > 100);
  });

  it('matches Masterminds TestNewConstraint vectors (errors and group counts)', () => {
    for (const [input, , , err] of NEW_CONSTRAINT) {
      if (err) assert.throws(() => newConstraint(input), Error, input);
      else assert.doesNotThrow(() => newConstraint(input), input);
    }
    assert.equal(newConstraint('>= 1.2.3, < 2.0 || => 3.0, < 4').toString(), '>=1.2.3 <2.0 || =>3.0 <4');
    assert.equal(newConstraint('1.0.0 - 2.0.0, <=2.0.0').toString(), '>=1.0.0 <=2.0.0 <=2.0.0');
  });

  it('covers the ClusterExtension syntax: comma/space AND, ||, = != < > >= <= ~ ^, x wildcards, v prefix', () => {
    const yes = (c: string, v: string) => assert.ok(newConstraint(c).check(newVersion(v)), `${c} ∋ ${v}`);
    const no = (c: string, v: string) => assert.ok(!newConstraint(c).check(newVersion(v)), `${c} ∌ ${v}`);
    yes('>=1.2.0, <2.0.0', '1.9.9');
    yes('>=1.2.0 <2.0.0', '1.2.0');
    no('>=1.2.0 <2.0.0', '2.0.0');
    yes('1.0.0 || 2.0.0', '2.0.0');
    yes('!=1.1.0', '1.2.0');
    no('!=1.1.0', '1.1.0');
    yes('~1.2', '1.2.9');
    no('~1.2', '1.3.0');
    yes('^1.2', '1.9.0');
    no('^1.2', '2.0.0');
    yes('1.2.x', '1.2.7');
    yes('1.X', '1.4.0');
    yes('v1.2.0', '1.2.0');
    yes('0.6.0', '0.6.0');
    no('0.6.0', '0.6.1');
    no('>=1.0.0', '1.1.0-rc.1');
    yes('>=1.1.0-0', '1.1.0-rc.1');
    yes('=< 1.2', '1.2.5');
    yes('=> 1.2', '1.2.0');
  });

  it('compares like Masterminds, build metadata ignored', () => {
    assert.equal(mmCompare(newVersion('1.2.3-alpha'), newVersion('1.2.3')), -1);
    assert.equal(mmCompare(newVersion('1.2.3+a'), newVersion('1.2.3+b')), 0);
    assert.equal(mmCompare(newVersion('v1.2'), newVersion('1.2.0')), 0);
  });

  it('rejects improper constraints with Masterminds messages', () => {
    assert.throws(() => newConstraint('>= bar'), /improper constraint: ">= bar"/);
    assert.throws(() => newConstraint('x'.repeat(513)), /too long/);
  });
});
