/** The production dependency closure over package-lock.json, and what pruning leaves out. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OlmpubError } from '../../../lib/errors.js';
import { isPrunable, normalizeMode, packageNameAt, productionClosure, resolveLocation, type Lockfile } from '../../../bundle/operator-image/deps.js';
import { REPO_ROOT } from '../../support/env.js';

const lock = (packages: Lockfile['packages']): Lockfile => ({ lockfileVersion: 3, packages });

describe('operator image: production dependencies', () => {
  describe('on the repository lockfile', () => {
    const real = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
    const closure = productionClosure(real);
    const locations = closure.packages.map((p) => p.location);

    it('is exactly what npm marks as not dev (npm computes the same closure)', () => {
      const npmProd = Object.entries(real.packages).filter(([k, v]) => k !== '' && !v.dev).map(([k]) => k).sort();
      assert.deepEqual(locations, npmProd);
    });

    it('holds every package.json dependency and none of the devDependencies', () => {
      const names = new Set(closure.packages.map((p) => p.name));
      for (const dep of Object.keys(real.packages['']!.dependencies ?? {})) assert.ok(names.has(dep), dep);
      for (const dev of ['typescript', 'mocha', '@types/mocha', '@types/semver', '@types/tar-stream']) assert.ok(!names.has(dev), `${dev} must not be in the image`);
      assert.ok(!locations.some((l) => l.startsWith('node_modules/@typescript/')), 'no native TypeScript compiler binaries');
    });

    it('keeps the nested copy client-node resolves (its own @types/node), apart from the hoisted one', () => {
      assert.ok(locations.includes('node_modules/@kubernetes/client-node/node_modules/@types/node'));
      assert.ok(locations.includes('node_modules/@types/node'));
    });
  });

  describe('resolution as Node.js does it', () => {
    const packages: Lockfile['packages'] = {
      '': { dependencies: { a: '1', c: '1' }, devDependencies: { dev: '1' } } as Lockfile['packages'][string],
      'node_modules/a': { version: '1.0.0', dependencies: { b: '2' } },
      'node_modules/a/node_modules/b': { version: '2.0.0' },
      'node_modules/b': { version: '1.0.0' },
      'node_modules/c': { version: '1.0.0', dependencies: { b: '1' }, optionalDependencies: { 'not-here': '1', opt: '1' }, peerDependencies: { peer: '1', 'peer-opt': '1' }, peerDependenciesMeta: { 'peer-opt': { optional: true } } },
      'node_modules/opt': { version: '1.0.0', optional: true },
      'node_modules/peer': { version: '1.0.0' },
      'node_modules/dev': { version: '1.0.0', dev: true },
    };

    it('prefers the nearest node_modules and walks up to the hoisted copy', () => {
      assert.equal(resolveLocation(packages, 'node_modules/a', 'b'), 'node_modules/a/node_modules/b');
      assert.equal(resolveLocation(packages, 'node_modules/c', 'b'), 'node_modules/b');
      assert.equal(resolveLocation(packages, 'node_modules/a/node_modules/b', 'c'), 'node_modules/c');
      assert.equal(resolveLocation(packages, '', 'nothing'), undefined);
    });

    it('follows dependencies, optional dependencies and peers; skips absent optional ones; never reaches devDependencies', () => {
      const c = productionClosure(lock(packages));
      assert.deepEqual(c.packages.map((p) => `${p.location}@${p.version}${p.optional ? ' (optional)' : ''}`), [
        'node_modules/a@1.0.0',
        'node_modules/a/node_modules/b@2.0.0',
        'node_modules/b@1.0.0',
        'node_modules/c@1.0.0',
        'node_modules/opt@1.0.0 (optional)',
        'node_modules/peer@1.0.0',
      ]);
      assert.deepEqual(c.absentOptional, ['node_modules/c → not-here', 'node_modules/c → peer-opt']);
    });

    it('makes a package required when a required edge reaches it after an optional one', () => {
      const c = productionClosure(lock({ '': { dependencies: { x: '1' }, optionalDependencies: { y: '1' } }, 'node_modules/x': { version: '1.0.0', dependencies: { y: '1' } }, 'node_modules/y': { version: '1.0.0' } }));
      assert.equal(c.packages.find((p) => p.name === 'y')!.optional, false);
    });

    it('fails on a required dependency the lockfile lacks, on links and on old lockfiles', () => {
      assert.throws(() => productionClosure(lock({ '': { dependencies: { gone: '1' } } })), (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-lockfile-missing' && /gone/.test(e.message));
      assert.throws(() => productionClosure(lock({ '': { dependencies: { w: '1' } }, 'node_modules/w': { link: true } })), (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-linked-package');
      assert.throws(() => productionClosure({ lockfileVersion: 1 } as unknown as Lockfile), (e: unknown) => e instanceof OlmpubError && e.code === 'operator-image-lockfile-version');
    });

    it('names scoped packages by their full name', () => {
      assert.equal(packageNameAt('node_modules/a/node_modules/@scope/pkg'), '@scope/pkg');
    });
  });

  it('prunes declarations, source maps, TypeScript and Markdown, never licenses or JavaScript', () => {
    for (const f of ['index.d.ts', 'index.d.mts', 'x.d.cts', 'index.js.map', 'src.ts', 'README.md', 'CHANGELOG.markdown']) assert.ok(isPrunable(f), f);
    for (const f of ['index.js', 'index.mjs', 'index.cjs', 'package.json', 'LICENSE', 'LICENSE.md', 'license.txt', 'NOTICE.md', 'data.json', 'schema.json']) assert.ok(!isPrunable(f), f);
  });

  it('normalises modes: 0644 files, 0755 executables and directories', () => {
    assert.equal(normalizeMode(0o100664, false), 0o644);
    assert.equal(normalizeMode(0o100600, false), 0o644);
    assert.equal(normalizeMode(0o100744, false), 0o755);
    assert.equal(normalizeMode(0o40700, true), 0o755);
  });
});
