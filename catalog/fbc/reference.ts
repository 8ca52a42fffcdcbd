/**
 * Image references as opm checks them (`reference.ParseNormalizedNamed` of go.podman.io/image/v5, the
 * distribution/reference grammar): bundle `image` and `relatedImages[].image` must parse. Deliberately
 * apart from bundle/oci/reference.ts, the registry client's parser (olmpub's own errors and hints, `oci:`
 * layouts): this one must accept and reject what opm does, with opm's messages.
 */

const alphaNumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]*)';
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const tag = '[\\w][\\w.-]{0,127}';
const digestPat = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}';
const nameComponent = `${alphaNumeric}(?:(?:${separator}${alphaNumeric})+)?`;
const domain = `${domainComponent}(?:(?:\\.${domainComponent})+)?(?::[0-9]+)?`;
const namePat = `(?:${domain}/)?${nameComponent}(?:(?:/${nameComponent})+)?`;
const referenceRegexp = new RegExp(`^(${namePat})(?::(${tag}))?(?:@(${digestPat}))?$`);
const anchoredIdentifier = /^[a-f0-9]{64}$/;

const DIGEST_LENGTHS: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

function splitDockerDomain(name: string): [string, string] {
  const i = name.indexOf('/');
  let domainPart: string;
  let remainder: string;
  if (i === -1 || (!/[.:]/.test(name.slice(0, i)) && name.slice(0, i) !== 'localhost')) {
    domainPart = 'docker.io';
    remainder = name;
  } else {
    domainPart = name.slice(0, i);
    remainder = name.slice(i + 1);
  }
  if (domainPart === 'index.docker.io') domainPart = 'docker.io';
  if (domainPart === 'docker.io' && !remainder.includes('/')) remainder = 'library/' + remainder;
  return [domainPart, remainder];
}

function validateDigest(d: string): void {
  const i = d.indexOf(':');
  if (i <= 0 || i + 1 === d.length) throw new Error('invalid checksum digest format');
  const alg = d.slice(0, i);
  const encoded = d.slice(i + 1);
  const len = DIGEST_LENGTHS[alg];
  if (len === undefined) throw new Error('unsupported digest algorithm');
  if (encoded.length !== len || !/^[a-f0-9]+$/.test(encoded)) throw new Error('invalid checksum digest length');
}

/** Throws the reference library's message when `s` is not a valid image reference. */
export function parseNormalizedNamed(s: string): { name: string; tag?: string; digest?: string } {
  if (anchoredIdentifier.test(s)) throw new Error(`invalid repository name (${s}), cannot specify 64-byte hexadecimal strings`);
  const [dom, remainder] = splitDockerDomain(s);
  const tagSep = remainder.indexOf(':');
  const remoteName = tagSep > -1 ? remainder.slice(0, tagSep) : remainder;
  if (remoteName.toLowerCase() !== remoteName) throw new Error('invalid reference format: repository name must be lowercase');
  const full = `${dom}/${remainder}`;
  const m = referenceRegexp.exec(full);
  if (!m) {
    if (referenceRegexp.test(full.toLowerCase())) throw new Error('repository name must be lowercase');
    throw new Error('invalid reference format');
  }
  if (m[1]!.length > 255) throw new Error('repository name must not be more than 255 characters');
  if (m[3]) validateDigest(m[3]);
  return { name: m[1]!, ...(m[2] ? { tag: m[2] } : {}), ...(m[3] ? { digest: m[3] } : {}) };
}

export function imageReferenceError(s: string): string | undefined {
  try {
    parseNormalizedNamed(s);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** True when the reference pins a digest (`name@sha256:...`), as catalog bundle images should. */
export function isDigestReference(s: string): boolean {
  try {
    return parseNormalizedNamed(s).digest !== undefined;
  } catch {
    return false;
  }
}
