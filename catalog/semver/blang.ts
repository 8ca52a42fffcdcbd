/**
 * Versions and ranges exactly as github.com/blang/semver/v4 reads them: the library opm uses for bundle
 * versions (`semver.Parse`) and skipRange (`semver.ParseRange`), and OLM v1 uses for skipRange.
 *
 * The npm `semver` package is close but not the same (it accepts a leading `v`, and its ranges exclude
 * prereleases), so both are ported here, quirks included; the messages are blang's.
 */

export interface PRVersion {
  readonly num?: bigint;
  readonly str?: string;
}

export interface Version {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  readonly pre: readonly PRVersion[];
  readonly build: readonly string[];
}

const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[0-9A-Za-z-]*$/;
const hasLeadingZeroes = (s: string) => s.length > 1 && s[0] === '0';
const UINT64_MAX = (1n << 64n) - 1n;

/** Go's strconv.ParseUint(s, 10, 64) on a string of digits. */
function parseUint(s: string): bigint {
  if (s === '') throw new Error(`strconv.ParseUint: parsing "": invalid syntax`);
  const n = BigInt(s);
  if (n > UINT64_MAX) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

export function newPRVersion(s: string): PRVersion {
  if (s.length === 0) throw new Error('Prerelease is empty');
  if (NUMBERS.test(s)) {
    if (hasLeadingZeroes(s)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(s)}`);
    return { num: parseUint(s) };
  }
  if (ALPHANUM.test(s)) return { str: s };
  throw new Error(`Invalid character(s) found in prerelease ${JSON.stringify(s)}`);
}

/** blang `semver.Parse`: strict MAJOR.MINOR.PATCH[-pre][+build], no `v`, no leading zeroes. Throws blang's message. */
export function parse(s: string): Version {
  if (s.length === 0) throw new Error('Version string empty');
  const first = s.indexOf('.');
  const second = first < 0 ? -1 : s.indexOf('.', first + 1);
  if (second < 0) throw new Error('No Major.Minor.Patch elements found');
  const majorStr = s.slice(0, first);
  const minorStr = s.slice(first + 1, second);
  let patchStr = s.slice(second + 1);
  if (!NUMBERS.test(majorStr)) throw new Error(`Invalid character(s) found in major number ${JSON.stringify(majorStr)}`);
  if (hasLeadingZeroes(majorStr)) throw new Error(`Major number must not contain leading zeroes ${JSON.stringify(majorStr)}`);
  const major = parseUint(majorStr);
  if (!NUMBERS.test(minorStr)) throw new Error(`Invalid character(s) found in minor number ${JSON.stringify(minorStr)}`);
  if (hasLeadingZeroes(minorStr)) throw new Error(`Minor number must not contain leading zeroes ${JSON.stringify(minorStr)}`);
  const minor = parseUint(minorStr);

  let build: string[] = [];
  let prerelease: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus !== -1) {
    build = patchStr.slice(plus + 1).split('.');
    patchStr = patchStr.slice(0, plus);
  }
  const dash = patchStr.indexOf('-');
  if (dash !== -1) {
    prerelease = patchStr.slice(dash + 1).split('.');
    patchStr = patchStr.slice(0, dash);
  }
  if (!NUMBERS.test(patchStr)) throw new Error(`Invalid character(s) found in patch number ${JSON.stringify(patchStr)}`);
  if (hasLeadingZeroes(patchStr)) throw new Error(`Patch number must not contain leading zeroes ${JSON.stringify(patchStr)}`);
  const patch = parseUint(patchStr);
  const pre = prerelease.map(newPRVersion);
  for (const b of build) {
    if (b.length === 0) throw new Error('Build meta data is empty');
    if (!ALPHANUM.test(b)) throw new Error(`Invalid character(s) found in build meta data ${JSON.stringify(b)}`);
  }
  return { major, minor, patch, pre, build };
}

/** Like `parse` but returns undefined instead of throwing. */
export function tryParse(s: string): Version | undefined {
  try {
    return parse(s);
  } catch {
    return undefined;
  }
}

export function format(v: Version): string {
  let out = `${v.major}.${v.minor}.${v.patch}`;
  if (v.pre.length) out += '-' + v.pre.map(prString).join('.');
  if (v.build.length) out += '+' + v.build.join('.');
  return out;
}

export const prString = (p: PRVersion) => (p.num !== undefined ? p.num.toString() : p.str!);

const cmpBig = (a: bigint, b: bigint) => (a === b ? 0 : a > b ? 1 : -1);

export function comparePR(a: PRVersion, b: PRVersion): number {
  const an = a.num !== undefined;
  const bn = b.num !== undefined;
  if (an && !bn) return -1;
  if (!an && bn) return 1;
  if (an && bn) return cmpBig(a.num!, b.num!);
  return a.str! === b.str! ? 0 : a.str! > b.str! ? 1 : -1;
}

/** Precedence per semver 2.0 (build metadata ignored), as blang `Version.Compare`. */
export function compare(a: Version, b: Version): number {
  const c = cmpBig(a.major, b.major) || cmpBig(a.minor, b.minor) || cmpBig(a.patch, b.patch);
  if (c) return c;
  if (a.pre.length === 0 && b.pre.length === 0) return 0;
  if (a.pre.length === 0) return 1;
  if (b.pre.length === 0) return -1;
  let i = 0;
  for (; i < a.pre.length && i < b.pre.length; i++) {
    const d = comparePR(a.pre[i]!, b.pre[i]!);
    if (d) return d;
  }
  if (i === a.pre.length && i === b.pre.length) return 0;
  return i === a.pre.length ? -1 : 1;
}

// ---------------------------------------------------------------------------------------------
// Ranges (blang ParseRange)

export type Range = (v: Version) => boolean;

type Comparator = (v1: Version, v2: Version) => boolean;

function parseComparator(s: string): Comparator | undefined {
  switch (s) {
    case '==':
    case '':
    case '=':
      return (a, b) => compare(a, b) === 0;
    case '>':
      return (a, b) => compare(a, b) === 1;
    case '>=':
      return (a, b) => compare(a, b) >= 0;
    case '<':
      return (a, b) => compare(a, b) === -1;
    case '<=':
      return (a, b) => compare(a, b) <= 0;
    case '!':
    case '!=':
      return (a, b) => compare(a, b) !== 0;
  }
  return undefined;
}

/** splitAndTrim: splits on spaces, except a space right after `>`, `<` or `=`; then drops inner spaces. */
function splitAndTrim(s: string): string[] {
  const result: string[] = [];
  let last = 0;
  let lastChar = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === ' ' && !['>', '<', '='].includes(lastChar)) {
      if (last < i - 1) result.push(s.slice(last, i));
      last = i + 1;
    } else if (s[i] !== ' ') {
      lastChar = s[i]!;
    }
  }
  if (last < s.length - 1) result.push(s.slice(last));
  return result.map((r) => r.replaceAll(' ', ''));
}

function splitORParts(parts: string[]): string[][] {
  const out: string[][] = [];
  let last = 0;
  parts.forEach((p, i) => {
    if (p === '||') {
      if (i === 0) throw new Error("First element in range is '||'");
      out.push(parts.slice(last, i));
      last = i + 1;
    }
  });
  if (last === parts.length) throw new Error("Last element in range is '||'");
  out.push(parts.slice(last));
  return out;
}

function splitComparatorVersion(s: string): [string, string] {
  const i = s.search(/[0-9]/);
  if (i === -1) throw new Error(`Could not get version from string: ${JSON.stringify(s)}`);
  return [s.slice(0, i).trim(), s.slice(i)];
}

function wildcardType(vStr: string): 0 | 1 | 2 | 3 {
  const parts = vStr.split('.');
  if (parts[parts.length - 1] === 'x' && parts.length <= 3) return parts.length as 1 | 2 | 3;
  return 0;
}

function createVersionFromWildcard(vStr: string): string {
  let v = vStr.replace('.x.x', '.x');
  v = v.replace('.x', '.0');
  return v.split('.').length === 2 ? v + '.0' : v;
}

function goAtoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  return Number.parseInt(s, 10);
}

function incrementPart(vStr: string, index: number): string {
  const parts = vStr.split('.');
  if (parts.length <= index) throw new Error('index out of range');
  parts[index] = String(goAtoi(parts[index]!) + 1);
  return parts.join('.');
}

function expandWildcardVersion(parts: string[][]): string[][] {
  return parts.map((p) => {
    const out: string[] = [];
    for (let ap of p) {
      if (ap.includes('x')) {
        const [opStr, vStr] = splitComparatorVersion(ap);
        const wt = wildcardType(vStr);
        const flat = createVersionFromWildcard(vStr);
        let resultOperator = '';
        let increment = false;
        switch (opStr) {
          case '>':
            resultOperator = '>=';
            increment = true;
            break;
          case '>=':
            resultOperator = '>=';
            break;
          case '<':
            resultOperator = '<';
            break;
          case '<=':
            resultOperator = '<';
            increment = true;
            break;
          case '':
          case '=':
          case '==':
            out.push('>=' + flat);
            resultOperator = '<';
            increment = true;
            break;
          case '!=':
          case '!':
            out.push('<' + flat);
            resultOperator = '>=';
            increment = true;
            break;
        }
        let resultVersion = '';
        if (increment) {
          // Go ignores the error here; an unparsable part leaves the version empty.
          try {
            if (wt === 3) resultVersion = incrementPart(flat, 1);
            else if (wt === 2) resultVersion = incrementPart(flat, 0);
          } catch {
            resultVersion = '';
          }
        } else {
          resultVersion = flat;
        }
        ap = resultOperator + resultVersion;
      }
      out.push(ap);
    }
    return out;
  });
}

/** blang `semver.ParseRange`; throws blang's message. AND binds tighter than `||`. */
export function parseRange(s: string): Range {
  const orParts = expandWildcardVersion(splitORParts(splitAndTrim(s)));
  const ors: Range[] = orParts.map((p) => {
    const ands: Range[] = p.map((ap) => {
      const [opStr, vStr] = splitComparatorVersion(ap);
      const c = parseComparator(opStr);
      if (!c) throw new Error(`Could not parse Range ${JSON.stringify(ap)}: Could not parse comparator ${JSON.stringify(opStr)} in ${JSON.stringify(opStr + vStr)}`);
      let v: Version;
      try {
        v = parse(vStr);
      } catch (err) {
        throw new Error(`Could not parse Range ${JSON.stringify(ap)}: Could not parse version ${JSON.stringify(vStr)} in ${JSON.stringify(opStr + vStr)}: ${(err as Error).message}`);
      }
      return (x: Version) => c(x, v);
    });
    // An empty AND group (possible only for odd inputs) is a nil function in Go; treat as never matching.
    return ands.length === 0 ? () => false : (x: Version) => ands.every((f) => f(x));
  });
  return (x: Version) => ors.some((f) => f(x));
}

export function tryParseRange(s: string): Range | undefined {
  try {
    return parseRange(s);
  } catch {
    return undefined;
  }
}
