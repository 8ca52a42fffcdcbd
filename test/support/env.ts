/**
 * Access to the real test environment (scripts/testenv) and the reference tools (scripts/tools.sh).
 * A missing component fails the test loudly: it never turns into a silent pass.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const cache = new Map<string, string>();

/** One setting of the running test environment: KUBECONFIG, APISERVER, REGISTRY, AUTH_REGISTRY, ... */
export function testenv(key: string): string {
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  try {
    const value = execFileSync(join(REPO_ROOT, 'scripts/testenv'), ['env', key], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    cache.set(key, value);
    return value;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`the test environment is not available (${stderr.trim() || (err as Error).message}); start it with "scripts/testenv up"`);
  }
}

/** Directory holding a reference tool's binaries, built from the Go module proxy on first use (minutes). */
export function toolBin(tool: 'k8s' | 'etcd' | 'kwok' | 'helm' | 'opm' | 'oras' | 'crane' | 'olm'): string {
  const key = `tool:${tool}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const dir = execFileSync(join(REPO_ROOT, 'scripts/tools.sh'), ['path', tool], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  cache.set(key, dir);
  return dir;
}

/** Polls `check` until it returns a truthy value or the deadline passes; no fixed sleeps. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false | null>, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The operator-controller module's CRD folder (helm/olmv1/base) in the Go module cache; never copied into the repo. */
export function olmCrdDir(): string {
  const cached = cache.get('olm-crds');
  if (cached !== undefined) return cached;
  toolBin('olm'); // downloads the module into the cache if needed
  const version = execFileSync(join(REPO_ROOT, 'scripts/tools.sh'), ['list'], { encoding: 'utf8' }).split('\n').find((l) => l.startsWith('olm '))!.split(/\s+/)[1]!;
  const modcache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const dir = join(modcache, `github.com/operator-framework/operator-controller@${version}/helm/olmv1/base`);
  cache.set('olm-crds', dir);
  return dir;
}

/** Environment for containers/image tools (opm): a HOME whose policy.json and registries.conf fit the testenv registries. */
export function containersEnv(): NodeJS.ProcessEnv {
  return { ...process.env, HOME: testenv('CONTAINERS_HOME') };
}
