/** `olmpub operator crds`: the operator's CustomResourceDefinitions, generated from the typed API. */
import type { Command } from '../command.js';
import { canonicalJSON, yamlStream } from '../../lib/canonical.js';
import { usageError } from '../../lib/errors.js';
import { operatorCRDs, type WebhookClientConfig } from '../../operator/api/index.js';

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

export const OPERATOR_COMMANDS: Command[] = [operatorCrds];
