import assert from 'node:assert/strict';
import { main } from '../../../cli/main.js';

/** Runs the CLI in-process, capturing what it prints. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => (err.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(args), out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

describe('cli', () => {
  it('lists every command in --help and exits 0', async () => {
    const r = await cli(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['publish', 'catalog validate', 'bundle build', 'extension manifests', 'operator run']) assert.match(r.out, new RegExp(`\\n  ${c} `));
  });

  it('explains one command with --help, and accepts --flag=true / --flag=false like Kubernetes tools', async () => {
    const help = await cli(['crd', 'diff', '--help=true']);
    assert.equal(help.code, 0);
    assert.match(help.out, /^Usage: olmpub crd diff OLD NEW/);
    const noHelp = await cli(['crd', 'diff', '--help=false']);
    assert.equal(noHelp.code, 2, 'help=false runs the command, which then wants its arguments');
    assert.match(noHelp.err, /exactly two arguments/);
  });

  it('names the verbs of a known noun and exits 2 on an unknown command', async () => {
    const r = await cli(['catalog', 'frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown command "catalog frobnicate"/);
    assert.match(r.err, /render, validate, graph/);
  });

  it('rejects an unknown option with a hint', async () => {
    const r = await cli(['catalog', 'validate', '--nope']);
    assert.equal(r.code, 2);
    assert.match(r.err, /hint: run "olmpub catalog validate --help"/);
  });
});
