/**
 * `olmpub operator crds`: the operator's CustomResourceDefinitions, generated from the typed API.
 * `olmpub operator run`: the operator itself (the operator image's entrypoint).
 */
import type { Command, OptionSpec } from '../command.js';
import { canonicalJSON, yamlStream } from '../../lib/canonical.js';
import { usageError } from '../../lib/errors.js';
import { operatorCRDs, type WebhookClientConfig } from '../../operator/api/index.js';
import { ENV_FALLBACKS, parseOperatorConfig, runOperator } from '../../operator/main.js';

/** `NAMESPACE/NAME` of the conversion webhook Service. */
function parseService(value: string): WebhookClientConfig['service'] {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(value);
  if (!m) throw usageError('bad-webhook-service', `--webhook-service must be NAMESPACE/NAME, got "${value}"`, { hint: 'for example: --webhook-service olmpub-system/olmpub-webhook' });
  return { namespace: m[1]!, name: m[3]!, path: '/convert', port: 443 };
}

export const operatorCrds: Command = {
  noun: 'operator',
  verb: 'crds',
  summary: 'print the InferenceService CRD (YAML by default, -o json for a v1 List)',
  description: `
Prints the CustomResourceDefinitions the operator owns, generated from the same typed schema as the
operator's TypeScript types: InferenceService (inference.olmpub.dev) with v1alpha1 (served, deprecated)
and v1 (served, storage), status and scale subresources, printer columns, CEL rules and webhook
conversion (ConversionReview v1). The output is deterministic (sorted keys).

The conversion webhook points at the Service olmpub-system/olmpub-webhook, path /convert, without a
caBundle; installers (OLM, cert-manager's CA injector, the Helm chart) fill in the real values. Use
--webhook-service to print another Service.`,
  examples: ['olmpub operator crds | kubectl apply --server-side -f -', 'olmpub operator crds -o json', 'olmpub operator crds --webhook-service ml-system/inference-webhook'],
  options: {
    'webhook-service': { type: 'string', value: 'NS/NAME', description: 'Service that serves the conversion webhook', default: 'olmpub-system/olmpub-webhook' },
  },
  structuredOutput: true,
  async run(ctx) {
    if (ctx.positionals.length) throw usageError('unexpected-arguments', `unexpected arguments: ${ctx.positionals.join(' ')}`, { hint: 'olmpub operator crds takes no arguments' });
    const service = parseService(String(ctx.values['webhook-service']));
    const crds = operatorCRDs({ conversionClientConfig: { service } });
    if (ctx.output === 'json') ctx.stdout.write(canonicalJSON({ apiVersion: 'v1', kind: 'List', items: crds }, 2) + '\n');
    else ctx.stdout.write(yamlStream(crds));
    return 0;
  },
};

const runOption = (flag: string, o: Omit<OptionSpec, 'description'> & { description: string; shownDefault?: string }): OptionSpec => ({
  type: o.type,
  ...(o.value ? { value: o.value } : {}),
  // Defaults are documented, not applied here: an absent flag falls back to its environment variable first.
  description: `${o.description} [env ${ENV_FALLBACKS[flag]}]${o.shownDefault ? ` (default: ${o.shownDefault})` : ''}`,
});

export const operatorRun: Command = {
  noun: 'operator',
  verb: 'run',
  summary: 'run the InferenceService operator (the operator image entrypoint)',
  description: `
Runs the operator until SIGTERM or SIGINT: the InferenceService controller (on the leader only, with
--leader-elect), the conversion webhook (/convert) and the GPU quota webhook
(/validate-inference-olmpub-dev-v1-inferenceservice) on the webhook server, /healthz and /readyz (ready
once the caches synced) on the probe server, and /metrics over HTTPS behind TokenReview and
SubjectAccessReview. Logs are JSON lines on stderr.

Every flag falls back to the environment variable named in brackets, then to its default. The cluster
comes from --kubeconfig, KUBECONFIG, the in-cluster ServiceAccount, or ~/.kube/config. WATCH_NAMESPACE
empty means all namespaces; one name or a comma list restricts the caches to those namespaces.

Exit codes: 0 after a graceful shutdown, 1 when the operator failed or lost its leader lease (it exits
at once, as controller-runtime, and its Deployment restarts it), 2 for bad flags, 3 when the cluster
configuration cannot be loaded.`,
  examples: [
    'olmpub operator run --leader-elect --health-probe-bind-address=:8081 --metrics-bind-address=:8443',
    'WATCH_NAMESPACE=team-a,team-b olmpub operator run --webhook-cert-dir /tmp/k8s-webhook-server/serving-certs',
    'olmpub operator run --kubeconfig ~/.kube/config --webhook-bind-address 0 --metrics-bind-address 0 --log-level debug',
  ],
  options: {
    'leader-elect': runOption('leader-elect', { type: 'boolean', description: 'elect a leader through a Lease; only the leader reconciles', shownDefault: 'false' }),
    'leader-election-id': runOption('leader-election-id', { type: 'string', value: 'NAME', description: 'name of the Lease', shownDefault: 'inference-operator.olmpub.dev' }),
    'leader-election-namespace': runOption('leader-election-namespace', { type: 'string', value: 'NS', description: 'namespace of the Lease', shownDefault: 'POD_NAMESPACE or the in-cluster namespace' }),
    'leader-elect-lease-duration': runOption('leader-elect-lease-duration', { type: 'string', value: 'DURATION', description: 'how long a standby waits before taking over', shownDefault: '15s' }),
    'leader-elect-renew-deadline': runOption('leader-elect-renew-deadline', { type: 'string', value: 'DURATION', description: 'how long the leader retries renewing before it gives up', shownDefault: '10s' }),
    'leader-elect-retry-period': runOption('leader-elect-retry-period', { type: 'string', value: 'DURATION', description: 'time between lease attempts', shownDefault: '2s' }),
    'health-probe-bind-address': runOption('health-probe-bind-address', { type: 'string', value: 'ADDR', description: 'address of /healthz and /readyz; 0 disables', shownDefault: ':8081' }),
    'metrics-bind-address': runOption('metrics-bind-address', { type: 'string', value: 'ADDR', description: 'address of /metrics (HTTPS, TokenReview + SubjectAccessReview); 0 disables', shownDefault: ':8443' }),
    'webhook-bind-address': runOption('webhook-bind-address', { type: 'string', value: 'ADDR', description: 'address of the webhook server (HTTPS); 0 disables the webhooks', shownDefault: ':9443' }),
    'webhook-cert-dir': runOption('webhook-cert-dir', { type: 'string', value: 'DIR', description: 'directory with tls.crt and tls.key of the webhook server (reloaded when they change)', shownDefault: '<tmp>/k8s-webhook-server/serving-certs' }),
    'max-concurrent-reconciles': runOption('max-concurrent-reconciles', { type: 'string', value: 'N', description: 'InferenceServices reconciled in parallel', shownDefault: '1' }),
    'log-level': runOption('log-level', { type: 'string', value: 'LEVEL', description: 'error, warn, info, debug or trace', shownDefault: 'info' }),
    'watch-namespace': runOption('watch-namespace', { type: 'string', value: 'NS[,NS...]', description: 'namespaces to watch; empty: all', shownDefault: 'all' }),
    kubeconfig: runOption('kubeconfig', { type: 'string', value: 'FILE', description: 'kubeconfig file', shownDefault: 'in-cluster, then ~/.kube/config' }),
    'sync-period': runOption('sync-period', { type: 'string', value: 'DURATION', description: 'how often every InferenceService is reconciled again from the cache', shownDefault: '10h' }),
    'graceful-shutdown-timeout': runOption('graceful-shutdown-timeout', { type: 'string', value: 'DURATION', description: 'how long running reconciles may finish after SIGTERM', shownDefault: '30s' }),
    gateway: runOption('gateway', { type: 'string', value: 'NS/NAME', description: 'Gateway the HTTPRoutes attach to (canary split by weight); none: split by replicas' }),
    'ingress-domain': runOption('ingress-domain', { type: 'string', value: 'DOMAIN', description: 'with --gateway: routes get the hostname NAME.NAMESPACE.DOMAIN' }),
    'cluster-domain': runOption('cluster-domain', { type: 'string', value: 'DOMAIN', description: 'cluster DNS domain, for status.url', shownDefault: 'cluster.local' }),
    'storage-initializer-image': runOption('storage-initializer-image', { type: 'string', value: 'IMAGE', description: 'image that downloads model.storageUri', shownDefault: 'docker.io/kserve/storage-initializer:v0.15.2' }),
  },
  async run(ctx) {
    if (ctx.positionals.length) throw usageError('unexpected-arguments', `unexpected arguments: ${ctx.positionals.join(' ')}`, { hint: 'olmpub operator run takes only flags' });
    const config = parseOperatorConfig(ctx.values);
    const code = await runOperator(config);
    // Something left open must not keep a stopped operator alive (its Pod would hang in Terminating).
    setTimeout(() => process.exit(code), 5_000).unref();
    return code;
  },
};

export const OPERATOR_COMMANDS: Command[] = [operatorCrds, operatorRun];
