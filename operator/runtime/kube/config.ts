/**
 * Where the apiserver is and who we are, in controller-runtime's order: an explicit kubeconfig path,
 * then $KUBECONFIG (a list, merged), then the in-cluster ServiceAccount, then ~/.kube/config.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { KubeConfig } from '@kubernetes/client-node';

// client-node takes about a second to load. Loading it on first use keeps every CLI command that
// never talks to a cluster (catalog, bundle, publish) fast; Node >= 20.19 can require() ES modules.
let clientNode: typeof import('@kubernetes/client-node') | undefined;
const loadClientNode = () => (clientNode ??= createRequire(import.meta.url)('@kubernetes/client-node') as typeof import('@kubernetes/client-node'));

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadKubeConfigOptions {
  /** A kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** A context other than the current one. */
  context?: string;
  /** Environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** ServiceAccount directory (default /var/run/secrets/kubernetes.io/serviceaccount). */
  serviceAccountDir?: string;
}

export function isInCluster(env: NodeJS.ProcessEnv = process.env, saDir = SERVICE_ACCOUNT_DIR): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(`${saDir}/token`));
}

export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kc = new (loadClientNode().KubeConfig)();
  if (options.kubeconfig) {
    kc.loadFromFile(options.kubeconfig);
  } else if (env.KUBECONFIG) {
    kc.loadFromDefault();
  } else if (isInCluster(env, options.serviceAccountDir)) {
    kc.loadFromCluster(options.serviceAccountDir ? options.serviceAccountDir.replace(SERVICE_ACCOUNT_DIR, '') : '');
  } else {
    kc.loadFromDefault();
  }
  if (options.context) kc.setCurrentContext(options.context);
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set KUBECONFIG or run in a Pod');
  return kc;
}

/** The namespace this Pod runs in: POD_NAMESPACE, the ServiceAccount's namespace file, or undefined. */
export function inClusterNamespace(env: NodeJS.ProcessEnv = process.env, saDir = SERVICE_ACCOUNT_DIR): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    const ns = readFileSync(`${saDir}/namespace`, 'utf8').trim();
    return ns || undefined;
  } catch {
    return undefined;
  }
}

/**
 * WATCH_NAMESPACE semantics: unset or empty means all namespaces (returns []); one name or a
 * comma-separated list means exactly those (trimmed, deduplicated, sorted).
 */
export function parseWatchNamespaces(value: string | undefined): string[] {
  if (!value) return [];
  return [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))].sort();
}
