/** Shared pieces of the OCI integration tests: the real registries of scripts/testenv and the reference tools. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { testenv, toolBin } from '../../support/env.js';
import { RegistryClient, type RemoteOptions, type RequestEvent } from '../../../bundle/oci/remote.js';
import { anonymous } from '../../../bundle/oci/credentials.js';

export interface Registries {
  registry: string;
  authRegistry: string;
  user: string;
  password: string;
}

export function registries(): Registries {
  return {
    registry: testenv('REGISTRY'),
    authRegistry: testenv('AUTH_REGISTRY'),
    user: testenv('AUTH_REGISTRY_USER'),
    password: testenv('AUTH_REGISTRY_PASSWORD'),
  };
}

/** A repository name no other test run uses. */
export const uniqueRepo = (prefix: string): string => `olmpub-it/${prefix}-${randomBytes(4).toString('hex')}`;

/** A plain-HTTP client for a testenv registry that records every exchange. */
export function client(host: string, options: RemoteOptions = {}): { client: RegistryClient; events: RequestEvent[] } {
  const events: RequestEvent[] = [];
  const c = new RegistryClient(host, {
    plainHttp: true,
    credentials: anonymous,
    ...options,
    onRequest: (e) => {
      events.push(e);
      options.onRequest?.(e);
    },
  });
  return { client: c, events };
}

export const count = (events: RequestEvent[], method: string, pathPart = ''): number => events.filter((e) => e.method === method && e.url.includes(pathPart)).length;

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `olmpub-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A docker config.json with Basic credentials for `host`, in its own DOCKER_CONFIG directory. */
export async function dockerConfigDir(entries: Record<string, { user: string; password: string }>): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const t = await tempDir('docker-config');
  const auths = Object.fromEntries(Object.entries(entries).map(([host, c]) => [host, { auth: Buffer.from(`${c.user}:${c.password}`).toString('base64') }]));
  await writeFile(join(t.dir, 'config.json'), JSON.stringify({ auths }));
  return t;
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a reference tool (crane, oras, helm) built from the Go module proxy. */
export function tool(name: 'crane' | 'oras' | 'helm', args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<ToolResult> {
  const bin = join(toolBin(name), name);
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      args,
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...options.env }, cwd: options.cwd, maxBuffer: 64 * 1024 * 1024, timeout: 120_000, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export async function mustTool(name: 'crane' | 'oras' | 'helm', args: string[], options: Parameters<typeof tool>[2] = {}): Promise<string> {
  const r = await tool(name, args, options);
  if (r.code !== 0) throw new Error(`${name} ${args.join(' ')} failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}
