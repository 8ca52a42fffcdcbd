/**
 * Registry credentials from Docker's `config.json`, resolved as oras-go's credentials store does:
 * `credHelpers[host]`, else `credsStore` (both through `docker-credential-<name> get`), else
 * `auths[host]` (`auth` = base64 `user:password`, `username`/`password`, `identitytoken`, `registrytoken`).
 * Keys written with a scheme or path match by host; Docker Hub's key is `https://index.docker.io/v1/`.
 * Secrets never reach logs or errors.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { environmentError, validationError } from '../../lib/errors.js';

export interface Credential {
  username?: string;
  password?: string;
  /** A refresh token, exchanged at the token endpoint (`grant_type=refresh_token`). */
  identityToken?: string;
  /** A bearer token used as it is. */
  registryToken?: string;
  /** Where it came from, for messages: `~/.docker/config.json`, `docker-credential-pass`, … (never the secret). */
  source: string;
}

/** Looks up the credential for a registry host (`host[:port]`); undefined for anonymous access. */
export type CredentialProvider = (host: string) => Promise<Credential | undefined>;

export interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string; registrytoken?: string; email?: string }>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

export const DOCKER_HUB_CONFIG_KEY = 'https://index.docker.io/v1/';

/** `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return env.DOCKER_CONFIG ? join(env.DOCKER_CONFIG, 'config.json') : join(home, '.docker', 'config.json');
}

const isDockerHub = (host: string) => host === 'docker.io' || host === 'index.docker.io' || host === 'registry-1.docker.io';

/** A config key reduced to `host[:port]`: `https://reg.example:5000/v1/` → `reg.example:5000`. */
export function normalizeConfigKey(key: string): string {
  let k = key.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(k);
  if (scheme) k = k.slice(scheme[0].length);
  const slash = k.indexOf('/');
  if (slash >= 0) k = k.slice(0, slash);
  return k.toLowerCase();
}

/** The key a credential helper is asked for: Docker Hub's legacy URL, else the host. */
export const helperServerUrl = (host: string): string => (isDockerHub(host) ? DOCKER_HUB_CONFIG_KEY : host);

export type ConfigLookup =
  | { kind: 'helper'; helper: string; serverUrl: string }
  | { kind: 'credential'; credential: Credential }
  | { kind: 'none' };

/** Pure resolution of a host against a parsed config.json. */
export function lookupDockerConfig(config: DockerConfig, host: string, source = 'docker config.json'): ConfigLookup {
  const wanted = isDockerHub(host) ? ['index.docker.io', 'docker.io', 'registry-1.docker.io'] : [host.toLowerCase()];
  const find = <T>(map: Record<string, T> | undefined): T | undefined => {
    if (!map) return undefined;
    for (const w of wanted) if (map[w] !== undefined && (isDockerHub(host) || w === host.toLowerCase())) return map[w];
    for (const [key, value] of Object.entries(map)) if (wanted.includes(normalizeConfigKey(key))) return value;
    return undefined;
  };
  const helper = find(config.credHelpers);
  if (helper) return { kind: 'helper', helper, serverUrl: helperServerUrl(host) };
  if (config.credsStore) return { kind: 'helper', helper: config.credsStore, serverUrl: helperServerUrl(host) };
  const entry = find(config.auths);
  if (!entry) return { kind: 'none' };
  const credential: Credential = { source };
  if (entry.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw validationError('oci-bad-docker-config', `${source}: the "auth" entry for ${host} is not base64 of "user:password"`, {
        hint: 'log in again (oras login / docker login) or fix the entry',
      });
    }
    credential.username = decoded.slice(0, colon);
    credential.password = decoded.slice(colon + 1);
  } else if (entry.username !== undefined || entry.password !== undefined) {
    credential.username = entry.username ?? '';
    credential.password = entry.password ?? '';
  }
  if (entry.identitytoken) credential.identityToken = entry.identitytoken;
  if (entry.registrytoken) credential.registryToken = entry.registrytoken;
  if (!credential.username && !credential.password && !credential.identityToken && !credential.registryToken) return { kind: 'none' };
  return { kind: 'credential', credential };
}

/** Runs `docker-credential-<helper> get` with the server URL on stdin. */
export type HelperRunner = (helper: string, serverUrl: string) => Promise<{ Username?: string; Secret?: string } | undefined>;

export const runCredentialHelper: HelperRunner = (helper, serverUrl) =>
  new Promise((resolve, reject) => {
    if (!/^[A-Za-z0-9._-]+$/.test(helper)) {
      reject(validationError('oci-bad-docker-config', `credential helper name "${helper}" is not valid`));
      return;
    }
    const bin = `docker-credential-${helper}`;
    const child = execFile(bin, ['get'], { timeout: 30_000, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const text = `${stdout}\n${stderr}`;
        if (/credentials not found/i.test(text)) return resolve(undefined);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(
            environmentError('oci-credential-helper', `the credential helper ${bin} named in docker config.json is not installed`, {
              hint: `install ${bin}, or remove it from credHelpers/credsStore`,
            }),
          );
        }
        // The helper's output may contain secrets: report only its exit.
        return reject(environmentError('oci-credential-helper', `${bin} get failed (exit ${(err as { code?: unknown }).code ?? 'unknown'})`));
      }
      try {
        const json = JSON.parse(stdout) as { Username?: string; Secret?: string };
        resolve(json);
      } catch {
        reject(environmentError('oci-credential-helper', `${bin} get did not print JSON`));
      }
    });
    child.stdin?.end(serverUrl);
  });

export interface DockerCredentialOptions {
  /** config.json path (default: dockerConfigPath()). */
  configPath?: string;
  runHelper?: HelperRunner;
}

/** Credentials from Docker's config.json and its helpers, read fresh on each lookup. */
export function dockerCredentials(options: DockerCredentialOptions = {}): CredentialProvider {
  return async (host) => {
    const path = options.configPath ?? dockerConfigPath();
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
    let config: DockerConfig;
    try {
      config = JSON.parse(text) as DockerConfig;
    } catch (err) {
      throw validationError('oci-bad-docker-config', `${path} is not valid JSON: ${(err as Error).message}`, { place: path });
    }
    const found = lookupDockerConfig(config, host, path);
    if (found.kind === 'none') return undefined;
    if (found.kind === 'credential') return found.credential;
    const answer = await (options.runHelper ?? runCredentialHelper)(found.helper, found.serverUrl);
    if (!answer || (!answer.Username && !answer.Secret)) return undefined;
    const source = `docker-credential-${found.helper}`;
    if (answer.Username === '<token>') return { identityToken: answer.Secret ?? '', source };
    return { username: answer.Username ?? '', password: answer.Secret ?? '', source };
  };
}

/** Fixed credentials per host (e.g. from flags); other hosts fall through to `fallback`. */
export function staticCredentials(byHost: Record<string, Omit<Credential, 'source'>>, fallback?: CredentialProvider): CredentialProvider {
  return async (host) => {
    const c = byHost[host];
    if (c) return { ...c, source: 'explicit credentials' };
    return fallback?.(host);
  };
}

export const anonymous: CredentialProvider = async () => undefined;
