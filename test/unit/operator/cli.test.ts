import assert from 'node:assert/strict';
import YAML from 'yaml';
import type { CommandContext } from '../../../cli/command.js';
import { COMMANDS } from '../../../cli/commands/index.js';
import { operatorCrds } from '../../../cli/commands/operator.js';
import { OlmpubError } from '../../../lib/errors.js';
import { inferenceServiceCRD } from '../../../operator/api/index.js';

async function run(output: CommandContext['output'], values: CommandContext['values'] = {}, positionals: string[] = []): Promise<string> {
  let out = '';
  const stdout = { write: (chunk: string) => ((out += chunk), true) } as unknown as NodeJS.WriteStream;
  const code = await operatorCrds.run({ values: { 'webhook-service': 'olmpub-system/olmpub-webhook', ...values }, positionals, output, stdout, stderr: stdout });
  assert.equal(code, 0);
  return out;
}

describe('olmpub operator crds', () => {
  it('is registered', () => {
    assert.ok(COMMANDS.some((c) => c.noun === 'operator' && c.verb === 'crds'));
  });

  it('prints the CRD as YAML by default, the same object the API builds', async () => {
    const text = await run('text');
    assert.ok(text.startsWith('---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n'));
    const docs = YAML.parseAllDocuments(text).map((d) => d.toJSON());
    assert.deepEqual(docs, [inferenceServiceCRD()]);
    assert.equal(await run('yaml'), text);
    assert.equal(await run('text'), text);
  });

  it('prints a v1 List with -o json', async () => {
    const list = JSON.parse(await run('json'));
    assert.equal(list.kind, 'List');
    assert.deepEqual(list.items, [inferenceServiceCRD()]);
  });

  it('points the conversion webhook at another Service on request, and rejects a malformed one', async () => {
    const [crd] = YAML.parseAllDocuments(await run('text', { 'webhook-service': 'ml/isvc-hook' })).map((d) => d.toJSON());
    assert.deepEqual(crd.spec.conversion.webhook.clientConfig, { service: { namespace: 'ml', name: 'isvc-hook', path: '/convert', port: 443 } });
    await assert.rejects(run('text', { 'webhook-service': 'no-slash' }), (err: unknown) => err instanceof OlmpubError && err.exitCode === 2);
    await assert.rejects(run('text', {}, ['extra']), (err: unknown) => err instanceof OlmpubError && err.exitCode === 2);
  });
});
