/** Durations as the API writes them: `90s`, `15m`, `1h30m` (whole hours, minutes and seconds). */

/** The schema pattern; `parseDuration` accepts exactly what it matches. */
export const DURATION_PATTERN = '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$';

/** Seconds in a duration string, or undefined when it is not one (including the empty string). */
export function parseDuration(text: string): number | undefined {
  const m = new RegExp(DURATION_PATTERN).exec(text);
  if (!m || text === '') return undefined;
  const [h, min, s] = [m[1], m[2], m[3]].map((part) => (part ? Number.parseInt(part, 10) : 0));
  return h! * 3600 + min! * 60 + s!;
}

/** The shortest duration string for a number of whole seconds: 5400 → `1h30m`. */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
  return text || '0s';
}
