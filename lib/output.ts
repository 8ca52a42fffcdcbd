/** Output for people by default, JSON or YAML for machines (`-o json|yaml`). Respects NO_COLOR. */
import { canonicalYAML } from './canonical.js';
import { usageError } from './errors.js';

export type OutputFormat = 'text' | 'json' | 'yaml';

export function parseOutputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === 'text' || value === 'human') return 'text';
  if (value === 'json' || value === 'yaml') return value;
  throw usageError('bad-output-format', `unknown output format "${value}"`, { hint: 'use -o json or -o yaml, or leave -o out for text' });
}

/** Prints `data` as JSON or YAML, or calls `human` for text. */
export function emit(format: OutputFormat, data: unknown, human: () => string, out: NodeJS.WritableStream = process.stdout): void {
  if (format === 'json') out.write(JSON.stringify(data, null, 2) + '\n');
  else if (format === 'yaml') out.write(canonicalYAML(data, false));
  else {
    const text = human();
    if (text) out.write(text.endsWith('\n') ? text : text + '\n');
  }
}

const useColor = (stream: NodeJS.WritableStream & { isTTY?: boolean }) => !process.env.NO_COLOR && stream.isTTY === true;
const paint = (code: number) => (s: string, stream: NodeJS.WritableStream = process.stdout) =>
  useColor(stream) ? `\x1b[${code}m${s}\x1b[0m` : s;
export const color = { red: paint(31), green: paint(32), yellow: paint(33), bold: paint(1), dim: paint(2) };

/** A plain table: columns padded to the widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * Progress on long work, shown only on a TTY (stderr), so logs and pipes stay clean.
 * `update(done, total)` redraws one line; `finish()` clears it.
 */
export class Progress {
  private readonly tty: boolean;
  private last = 0;
  constructor(private readonly label: string, private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = stream.isTTY === true && !process.env.CI;
  }
  update(done: number, total: number): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 24;
    const fraction = total > 0 ? Math.min(1, done / total) : 0;
    const filled = Math.round(fraction * width);
    this.stream.write(`\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${formatBytes(done)}/${formatBytes(total)}`);
  }
  finish(): void {
    if (this.tty) this.stream.write('\r\x1b[K');
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
