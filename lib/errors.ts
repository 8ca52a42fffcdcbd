/**
 * Errors that reach users. Each carries a stable code, the place it is about (a file and line, or an
 * object path) and what to do about it. The CLI maps the kind to its exit code.
 */

/** What went wrong, which decides the exit code: validation 1, usage 2, environment 3. */
export type ErrorKind = 'validation' | 'usage' | 'environment' | 'internal';

export const EXIT_CODES: Record<ErrorKind, number> = { validation: 1, usage: 2, environment: 3, internal: 4 };

export interface ErrorDetails {
  /** Where: `file:line`, `file:line:col`, or an object path such as `package/channel/bundle`. */
  place?: string;
  /** What the user can do about it. */
  hint?: string;
  /** Nested problems (a validation tree: package → channel → bundle). */
  children?: OlmpubError[];
  cause?: unknown;
}

export class OlmpubError extends Error {
  readonly place?: string;
  readonly hint?: string;
  readonly children: OlmpubError[];

  constructor(
    readonly code: string,
    readonly kind: ErrorKind,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'OlmpubError';
    this.place = details.place;
    this.hint = details.hint;
    this.children = details.children ?? [];
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }

  /** A plain object for `-o json|yaml`. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.place ? { place: this.place } : {}),
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.children.length ? { children: this.children.map((c) => c.toJSON()) } : {}),
    };
  }
}

export const validationError = (code: string, message: string, details?: ErrorDetails) =>
  new OlmpubError(code, 'validation', message, details);
export const usageError = (code: string, message: string, details?: ErrorDetails) =>
  new OlmpubError(code, 'usage', message, details);
export const environmentError = (code: string, message: string, details?: ErrorDetails) =>
  new OlmpubError(code, 'environment', message, details);

/** Renders an error and its children as a `├──`/`└──` tree, the shape opm validate prints. */
export function formatErrorTree(err: OlmpubError): string {
  const lines: string[] = [];
  const label = (e: OlmpubError) => `${e.place ? `${e.place}: ` : ''}${e.message}${e.code ? ` [${e.code}]` : ''}`;
  const walk = (e: OlmpubError, prefix: string) => {
    e.children.forEach((child, i) => {
      const last = i === e.children.length - 1;
      lines.push(`${prefix}${last ? '└── ' : '├── '}${label(child)}`);
      if (child.hint) lines.push(`${prefix}${last ? '    ' : '│   '}    hint: ${child.hint}`);
      walk(child, prefix + (last ? '    ' : '│   '));
    });
  };
  lines.push(label(err));
  if (err.hint) lines.push(`    hint: ${err.hint}`);
  walk(err, '');
  return lines.join('\n');
}

/** Errors may quote URLs and headers; never let a credential through. */
export function redactSecrets(text: string): string {
  return text
    .replace(/(authorization:\s*)(basic|bearer)\s+[^\s,"]+/gi, '$1$2 <redacted>')
    .replace(/(\/\/)[^/@\s:]+:[^/@\s]+@/g, '$1<redacted>@')
    .replace(/("?(?:password|token|access_token|refresh_token|identitytoken|auth)"?\s*[:=]\s*)"[^"]*"/gi, '$1"<redacted>"');
}
