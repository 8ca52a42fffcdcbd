/**
 * Version constraints as github.com/Masterminds/semver/v3 (v3.5.0) reads them: the syntax of
 * ClusterExtension `spec.source.catalog.version` (operator-controller `compare.NewVersionRange`).
 *
 * Comma or space = AND, `||` = OR; operators `= != < > >= <= => =< ~ ~> ^`; wildcards `x X *`; an
 * optional `v`; hyphen ranges `1.2 - 1.4.5`. Prereleases only match when a constraint in the same AND
 * group names a prerelease. Ported line by line (regular expressions included) so the quirks agree.
 */

export interface MMVersion {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

const LOOSE = /^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$/;
const NUM = /^[0-9]*$/;
const ALLOWED = /^[0-9A-Za-z-]*$/;

/** Masterminds NewVersion with its default CoerceNewVersion = true (leading zeroes are accepted). */
export function newVersion(v: string): MMVersion {
  if (v.length > 256) throw new Error('version string is too long (max 256 bytes)');
  const m = LOOSE.exec(v);
  if (!m) throw new Error('invalid semantic version');
  const sv: MMVersion = {
    major: BigInt(m[1]!),
    minor: m[2] ? BigInt(m[2].slice(1)) : 0n,
    patch: m[3] ? BigInt(m[3].slice(1)) : 0n,
    pre: m[5] ?? '',
    metadata: m[8] ?? '',
    original: v,
  };
  const max = (1n << 64n) - 1n;
  if (sv.major > max || sv.minor > max || sv.patch > max) throw new Error('error parsing version segment');
  if (sv.pre) {
    for (const p of sv.pre.split('.')) {
      if (p === '') throw new Error('invalid prerelease string');
      if (NUM.test(p)) {
        if (p.length > 1 && p[0] === '0') throw new Error('version segment starts with 0');
      } else if (!ALLOWED.test(p)) throw new Error('invalid prerelease string');
    }
  }
  if (sv.metadata) {
    for (const p of sv.metadata.split('.')) if (p === '' || !ALLOWED.test(p)) throw new Error('invalid metadata string');
  }
  return sv;
}

export function mmFromParts(major: bigint, minor: bigint, patch: bigint, pre: string, metadata: string): MMVersion {
  let original = `${major}.${minor}.${patch}`;
  if (pre) original += '-' + pre;
  if (metadata) original += '+' + metadata;
  return { major, minor, patch, pre, metadata, original };
}

const cmpSeg = (a: bigint, b: bigint) => (a === b ? 0 : a > b ? 1 : -1);

function isUint(s: string): boolean {
  return /^[0-9]+$/.test(s) && BigInt(s) <= (1n << 64n) - 1n;
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return s !== '' ? 1 : -1;
  const oNum = isUint(o);
  const sNum = isUint(s);
  if (!oNum && !sNum) return s > o ? 1 : -1;
  if (!oNum) return -1;
  if (!sNum) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sp = v.split('.');
  const op = o.split('.');
  const l = Math.max(sp.length, op.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sp[i] ?? '', op[i] ?? '');
    if (d) return d;
  }
  return 0;
}

export function mmCompare(v: MMVersion, o: MMVersion): number {
  const d = cmpSeg(v.major, o.major) || cmpSeg(v.minor, o.minor) || cmpSeg(v.patch, o.patch);
  if (d) return d;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  return comparePrerelease(v.pre, o.pre);
}

// ---------------------------------------------------------------------------------------------

const CV = String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
const OPS = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
// Go's \s is [\t\n\f\r ]; JavaScript's is wider, so spell it out.
const S = String.raw`[\t\n\f\r ]`;
const constraintRegex = new RegExp(`^${S}*(${OPS})${S}*(${CV})${S}*$`);
const constraintRangeRegex = () => new RegExp(`${S}*(${CV})${S}+-${S}+(${CV})${S}*`, 'g');
const findConstraintRegex = () => new RegExp(`(${OPS})${S}*(${CV})`, 'g');
const validConstraintRegex = new RegExp(`^(${S}*(${OPS})${S}*(${CV})${S}*)((?:${S}+|,${S}*)(${OPS})${S}*(${CV})${S}*)*$`);

interface Constraint {
  con: MMVersion;
  orig: string;
  origfunc: string;
  minorDirty: boolean;
  dirty: boolean;
  patchDirty: boolean;
}

const isX = (x: string) => x === 'x' || x === '*' || x === 'X';

function parseConstraint(c: string): Constraint {
  if (c.length > 0) {
    const m = constraintRegex.exec(c);
    if (!m) throw new Error(`improper constraint: ${JSON.stringify(c)}`);
    // Group numbers follow Go's: m[1] op, m[2] version, m[3] major, m[4] .minor, m[5] .patch, m[6] -pre.
    const g = (i: number) => m[i] ?? '';
    let ver = g(2);
    let minorDirty = false;
    let patchDirty = false;
    let dirty = false;
    if (isX(g(3)) || g(3) === '') {
      ver = `0.0.0${g(6)}`;
      dirty = true;
    } else if (isX(g(4).replace(/^\./, '')) || g(4) === '') {
      minorDirty = true;
      dirty = true;
      ver = `${g(3)}.0.0${g(6)}`;
    } else if (isX(g(5).replace(/^\./, '')) || g(5) === '') {
      dirty = true;
      patchDirty = true;
      ver = `${g(3)}${g(4)}.0${g(6)}`;
    }
    let con: MMVersion;
    try {
      con = newVersion(ver);
    } catch {
      throw new Error('constraint parser error');
    }
    return { con, orig: g(2), origfunc: g(1), minorDirty, patchDirty, dirty };
  }
  return { con: newVersion('0.0.0'), orig: c, origfunc: '', minorDirty: false, patchDirty: false, dirty: true };
}

type CFunc = (v: MMVersion, c: Constraint, includePre: boolean) => boolean;

const notEqual: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (c.dirty) {
    if (c.con.major !== v.major) return true;
    if (c.con.minor !== v.minor && !c.minorDirty) return true;
    else if (c.minorDirty) return false;
    else if (c.con.patch !== v.patch && !c.patchDirty) return true;
    else if (c.patchDirty) {
      if (v.pre !== '' || c.con.pre !== '') return comparePrerelease(v.pre, c.con.pre) !== 0;
      return false;
    }
  }
  return mmCompare(v, c.con) !== 0;
};

const greaterThan: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (!c.dirty) return mmCompare(v, c.con) === 1;
  if (v.major > c.con.major) return true;
  if (v.major < c.con.major) return false;
  if (c.minorDirty) return false;
  if (c.patchDirty) return v.minor > c.con.minor;
  return mmCompare(v, c.con) === 1;
};

const lessThan: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  return mmCompare(v, c.con) < 0;
};

const greaterThanEqual: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  return mmCompare(v, c.con) >= 0;
};

const lessThanEqual: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (!c.dirty) return mmCompare(v, c.con) <= 0;
  if (v.major > c.con.major) return false;
  if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
  return true;
};

const tilde: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (mmCompare(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
};

const tildeOrEqual: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (c.dirty) return tilde(v, c, includePre);
  return mmCompare(v, c.con) === 0;
};

const caret: CFunc = (v, c, includePre) => {
  if (v.pre !== '' && !includePre) return false;
  if (mmCompare(v, c.con) < 0) return false;
  if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
  if (c.con.major === 0n && v.major > 0n) return false;
  if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
  if (c.con.minor === 0n && v.minor > 0n) return false;
  return c.con.patch === v.patch;
};

const OPERATORS: Record<string, CFunc> = {
  '': tildeOrEqual,
  '=': tildeOrEqual,
  '!=': notEqual,
  '>': greaterThan,
  '<': lessThan,
  '>=': greaterThanEqual,
  '=>': greaterThanEqual,
  '<=': lessThanEqual,
  '=<': lessThanEqual,
  '~': tilde,
  '~>': tilde,
  '^': caret,
};

function rewriteRange(i: string): string {
  const matches = [...i.matchAll(constraintRangeRegex())];
  let o = i;
  for (const m of matches) {
    // Go's group 1 is the first version, group 11 the second (each CV has 9 groups, plus the wrapper).
    const t = `>= ${m[1]}, <= ${m[11]} `;
    o = o.replace(m[0], t);
  }
  return o;
}

export interface Constraints {
  readonly source: string;
  check(v: MMVersion): boolean;
  /** The parsed constraint, normalised like Masterminds `Constraints.String()`. */
  toString(): string;
}

/** Masterminds `NewConstraint`; throws its message (`improper constraint: "..."`). */
export function newConstraint(source: string): Constraints {
  if (source.length > 512) throw new Error('constraint string is too long (max 512 bytes)');
  const c = rewriteRange(source);
  const ors = c.split('||');
  if (ors.length > 32) throw new Error('too many constraint groups (max 32)');
  const groups: Constraint[][] = [];
  const hasPre: boolean[] = [];
  ors.forEach((v, k) => {
    if (!validConstraintRegex.test(v)) throw new Error(`improper constraint: ${JSON.stringify(v)}`);
    let cs = [...v.matchAll(findConstraintRegex())].map((m) => m[0]);
    if (cs.length === 0) cs = [v];
    groups.push(
      cs.map((s) => {
        const pc = parseConstraint(s);
        if (pc.con.pre !== '') hasPre[k] = true;
        return pc;
      }),
    );
  });
  return {
    source,
    check(v: MMVersion): boolean {
      return groups.some((group, i) => group.every((con) => OPERATORS[con.origfunc]!(v, con, hasPre[i] === true)));
    },
    toString(): string {
      return groups.map((g) => g.map((con) => con.origfunc + con.orig).join(' ')).join(' || ');
    },
  };
}
