/** `olmpub <noun> <verb> [args] [options]`: dispatch, help, exit codes. */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { OlmpubError, formatErrorTree, redactSecrets, usageError, EXIT_CODES } from '../lib/errors.js';
import { parseOutputFormat } from '../lib/output.js';
import { commandHelp, GLOBAL_OPTIONS, OUTPUT_OPTION, type Command, type CommandContext, type OptionSpec } from './command.js';
import { COMMANDS } from './commands/index.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function topHelp(): string {
  const nouns = [...new Set(COMMANDS.map((c) => c.noun))];
  const lines = [
    'olmpub: build, package, validate and publish the olmpub inference operator for OLM v1 clusters.',
    '',
    'Usage: olmpub <noun> <verb> [arguments] [options]',
    '       olmpub <noun> <verb> --help     explains one command',
    '',
    'Commands:',
  ];
  const width = Math.max(...COMMANDS.map((c) => `${c.noun} ${c.verb}`.trim().length));
  for (const noun of nouns) {
    for (const c of COMMANDS.filter((x) => x.noun === noun)) lines.push(`  ${`${c.noun} ${c.verb}`.trim().padEnd(width)}  ${c.summary}`);
  }
  lines.push(
    '',
    'Global options:',
    '  -h, --help        show help',
    '      --version     print the version',
    '  -o, --output FMT  json or yaml instead of text, on commands that support it',
    '',
    'Exit codes: 0 ok, 1 validation failed, 2 usage error, 3 environment (registry or cluster unreachable, auth).',
    'Colour follows the terminal; set NO_COLOR=1 to turn it off.',
  );
  return lines.join('\n') + '\n';
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  // `publish` is a noun with a single, implied verb.
  const [noun, verb] = argv;
  const exact = COMMANDS.find((c) => c.noun === noun && c.verb === verb);
  if (exact) return { command: exact, rest: argv.slice(2) };
  const implied = COMMANDS.find((c) => c.noun === noun && c.verb === '');
  return implied ? { command: implied, rest: argv.slice(1) } : undefined;
}

/** Where a run writes: the process's streams, or captures (tests run commands in-process this way). */
export interface CliIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export async function main(argv: string[], io: CliIO = process): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout.write(topHelp());
    return argv.length === 0 ? EXIT_CODES.usage : 0;
  }
  if (argv[0] === '--version' || argv[0] === 'version') {
    io.stdout.write(`olmpub ${pkg.version}\n`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const nounCommands = COMMANDS.filter((c) => c.noun === argv[0]);
    const hint = nounCommands.length
      ? `"${argv[0]}" takes one of: ${nounCommands.map((c) => c.verb).join(', ')}`
      : 'run "olmpub --help" to list the commands';
    return fail(usageError('unknown-command', `unknown command "${argv.slice(0, 2).join(' ')}"`, { hint }), 'text', io);
  }
  const { command, rest } = found;
  const options: Record<string, OptionSpec> = { ...(command.options ?? {}), ...GLOBAL_OPTIONS, ...(command.structuredOutput ? { output: OUTPUT_OPTION } : {}) };
  // Boolean flags also take an explicit value, as Kubernetes tools accept them: --leader-elect=false.
  const explicitFalse = new Set<string>();
  const args: string[] = [];
  for (const arg of rest) {
    const m = /^--([^=]+)=(true|false)$/.exec(arg);
    if (!m || options[m[1]!]?.type !== 'boolean') args.push(arg);
    else if (m[2] === 'true') args.push(`--${m[1]}`);
    else explicitFalse.add(m[1]!);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
      ),
    });
  } catch (err) {
    return fail(usageError('bad-arguments', (err as Error).message, { hint: `run "olmpub ${command.noun} ${command.verb} --help"`.replace('  ', ' ') }), 'text', io);
  }
  if (parsed.values.help) {
    io.stdout.write(commandHelp(command));
    return 0;
  }
  const values = { ...parsed.values } as CommandContext["values"];
  for (const name of explicitFalse) values[name] = false;
  for (const [name, o] of Object.entries(options)) if (values[name] === undefined && o.default !== undefined) values[name] = o.default;
  let output: ReturnType<typeof parseOutputFormat> = 'text';
  try {
    output = parseOutputFormat(values.output as string | undefined);
    const code = await command.run({ values, positionals: parsed.positionals, output, stdout: io.stdout, stderr: io.stderr });
    return code ?? 0;
  } catch (err) {
    return fail(err, output, io);
  }
}

function fail(err: unknown, output: 'text' | 'json' | 'yaml', io: CliIO): number {
  if (err instanceof OlmpubError) {
    if (output === 'json') io.stdout.write(JSON.stringify({ passed: false, error: err.toJSON() }, null, 2) + '\n');
    else io.stderr.write(redactSecrets(`error: ${formatErrorTree(err)}`) + '\n');
    return err.exitCode;
  }
  io.stderr.write(redactSecrets(`internal error: ${(err as Error)?.stack ?? String(err)}`) + '\n');
  return EXIT_CODES.internal;
}
