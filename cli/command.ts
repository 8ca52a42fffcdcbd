/** The shape of an `olmpub <noun> <verb>` command and the help text generated from it. */
import type { OutputFormat } from '../lib/output.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in help as `--name VALUE`. */
  value?: string;
  description: string;
  /** Documented default (help prints it); applied when the option is absent. */
  default?: string | boolean;
}

export interface CommandContext {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  output: OutputFormat;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export interface Command {
  noun: string;
  verb: string;
  summary: string;
  /** Positional arguments as shown in usage, e.g. `[DIR]`. */
  args?: string;
  /** Longer explanation printed by `--help`. */
  description?: string;
  examples?: string[];
  options?: Record<string, OptionSpec>;
  /** Whether the command honours `-o json|yaml`. */
  structuredOutput?: boolean;
  /** Returns the exit code (0 when omitted). */
  run(ctx: CommandContext): Promise<number | void>;
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  help: { type: 'boolean', short: 'h', description: 'show help for the command' },
};

export const OUTPUT_OPTION: OptionSpec = { type: 'string', short: 'o', value: 'FORMAT', description: 'output format: json or yaml (default: text for people)' };

export function commandHelp(c: Command): string {
  const lines = [`Usage: olmpub ${`${c.noun} ${c.verb}`.trim()}${c.args ? ' ' + c.args : ''} [options]`, '', c.summary];
  if (c.description) lines.push('', c.description.trim());
  const options = { ...(c.options ?? {}), ...(c.structuredOutput ? { output: OUTPUT_OPTION } : {}), ...GLOBAL_OPTIONS };
  lines.push('', 'Options:');
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
    const def = o.default !== undefined && o.default !== false ? ` (default: ${o.default})` : '';
    return [flag, `${o.description}${o.multiple ? ' (repeatable)' : ''}${def}`] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  if (c.examples?.length) lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`));
  return lines.join('\n') + '\n';
}
