/**
 * Structured JSON logs, one object per line on stderr (the shape zap gives controller-runtime):
 * `{"ts":"2026-08-01T10:00:00.000Z","level":"info","logger":"controller.inferenceservice","msg":"...",...}`.
 * The level comes from LOG_LEVEL (error, warn, info, debug, trace; default info). Error values are
 * rendered as `{message, code, reason, status}` with credentials redacted.
 */
import { redactSecrets } from '../../lib/errors.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

export type LogFields = Record<string, unknown>;

export interface LoggerOptions {
  /** Minimum level written. Default: LOG_LEVEL, else `info`. */
  level?: LogLevel;
  /** Where lines go. Default: process.stderr. */
  sink?: (line: string) => void;
  /** Dotted logger name. */
  name?: string;
  /** Fields added to every line. */
  fields?: LogFields;
  /** Timestamp source (ms). Default: Date.now. */
  now?: () => number;
}

/** Parses a LOG_LEVEL value; unknown values fall back to `info`. Numeric zap-style levels: 0 info, 1 debug, >=2 trace. */
export function parseLogLevel(value: string | undefined): LogLevel {
  const v = (value ?? '').trim().toLowerCase();
  if (v in RANK) return v as LogLevel;
  if (v === 'warning') return 'warn';
  if (/^\d+$/.test(v)) return Number(v) === 0 ? 'info' : Number(v) === 1 ? 'debug' : 'trace';
  return 'info';
}

export class Logger {
  readonly level: LogLevel;
  readonly name: string;
  private readonly sink: (line: string) => void;
  private readonly fields: LogFields;
  private readonly now: () => number;

  constructor(options: LoggerOptions = {}) {
    this.level = options.level ?? parseLogLevel(process.env.LOG_LEVEL);
    this.sink = options.sink ?? ((line) => process.stderr.write(line + '\n'));
    this.name = options.name ?? '';
    this.fields = options.fields ?? {};
    this.now = options.now ?? Date.now;
  }

  /** A logger with a longer name (`parent.child`) and/or extra fields. */
  child(name?: string, fields: LogFields = {}): Logger {
    return new Logger({
      level: this.level,
      sink: this.sink,
      name: name ? (this.name ? `${this.name}.${name}` : name) : this.name,
      fields: { ...this.fields, ...fields },
      now: this.now,
    });
  }

  withFields(fields: LogFields): Logger {
    return this.child(undefined, fields);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= RANK[this.level];
  }

  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }
  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }
  trace(msg: string, fields?: LogFields): void {
    this.write('trace', msg, fields);
  }

  private write(level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.enabled(level)) return;
    const entry: LogFields = { ts: new Date(this.now()).toISOString(), level };
    if (this.name) entry.logger = this.name;
    entry.msg = redactSecrets(msg);
    for (const [k, v] of Object.entries({ ...this.fields, ...fields })) {
      if (v === undefined || k === 'ts' || k === 'level' || k === 'msg' || k === 'logger') continue;
      entry[k] = v instanceof Error ? renderError(v) : v;
    }
    let line: string;
    try {
      line = JSON.stringify(entry);
    } catch {
      line = JSON.stringify({ ts: entry.ts, level, logger: entry.logger, msg: entry.msg, logError: 'fields not serialisable' });
    }
    this.sink(line);
  }
}

function renderError(err: Error): LogFields {
  const e = err as Error & { code?: unknown; reason?: unknown; status?: unknown };
  const out: LogFields = { message: redactSecrets(err.message) };
  if (e.code !== undefined) out.code = e.code;
  if (e.reason !== undefined) out.reason = e.reason;
  if (typeof e.status === 'number') out.status = e.status;
  if (err.name && err.name !== 'Error') out.type = err.name;
  return out;
}

/** A logger that writes nothing (tests). */
export const silentLogger = new Logger({ level: 'error', sink: () => {} });
