/**
 * References: `host[:port]/repository[:tag][@digest]` for registries (Docker Hub defaults when no host is
 * given) and `oci:PATH[:TAG|@DIGEST]` for an OCI image layout on disk.
 */
import { usageError } from '../../lib/errors.js';
import { isDigest } from './digest.js';

export interface RegistryReference {
  /** The registry as written (`docker.io` for Docker Hub), with port if any. */
  registry: string;
  /** The repository path, e.g. `library/alpine`. */
  repository: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const REPOSITORY_RE = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const HOST_RE = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$/;

export const DOCKER_HUB = 'docker.io';
/** Where Docker Hub's API is served. */
export const DOCKER_HUB_API_HOST = 'registry-1.docker.io';

export const isValidTag = (tag: string): boolean => TAG_RE.test(tag);

function bad(ref: string, why: string, hint?: string): never {
  throw usageError('oci-bad-reference', `invalid reference "${ref}": ${why}`, {
    hint: hint ?? 'write host[:port]/repository[:tag][@sha256:<digest>], e.g. 127.0.0.1:5000/olmpub/operator:1.0.0',
  });
}

export function parseReference(ref: string): RegistryReference {
  if (!ref) bad(ref, 'it is empty');
  if (/\s/.test(ref)) bad(ref, 'it contains whitespace');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) {
    bad(ref, 'a registry reference has no scheme', 'drop the "https://" or "oci://" prefix; use --plain-http for plain HTTP registries');
  }
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!isDigest(digest)) bad(ref, `"${digest}" is not a digest`, 'a digest is sha256: followed by 64 lowercase hex characters');
  }
  let registry = DOCKER_HUB;
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  if (slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('['))) {
    registry = first;
    rest = rest.slice(slash + 1);
    if (!HOST_RE.test(registry)) bad(ref, `"${registry}" is not a valid registry host`);
    const port = /:(\d+)$/.exec(registry)?.[1];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) bad(ref, `port ${port} is out of range`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon >= 0 && !rest.slice(colon).includes('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG_RE.test(tag)) {
      bad(ref, `"${tag}" is not a valid tag`, 'a tag is up to 128 letters, digits, "_", "." and "-", not starting with "." or "-" (Helm turns "+" into "_")');
    }
  }
  if (!rest) bad(ref, 'the repository is missing');
  if (rest !== rest.toLowerCase()) bad(ref, `repository "${rest}" must be lowercase`);
  if (!REPOSITORY_RE.test(rest)) bad(ref, `"${rest}" is not a valid repository path`, 'repository path components are lowercase letters and digits separated by ".", "_", "__" or "-", joined by "/"');
  if (registry === DOCKER_HUB && !rest.includes('/')) rest = `library/${rest}`;
  if (rest.length > 255) bad(ref, 'the repository name is longer than 255 characters');
  return { registry, repository: rest, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The host the API is served from (`docker.io` → `registry-1.docker.io`). */
export const apiHost = (registry: string): string => (registry === DOCKER_HUB || registry === 'index.docker.io' ? DOCKER_HUB_API_HOST : registry);

/** The reference the registry is asked for: the digest when there is one, else the tag, else `latest`. */
export const referenceOf = (r: RegistryReference): string => r.digest ?? r.tag ?? 'latest';

export function formatReference(r: RegistryReference): string {
  return `${r.registry}/${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

/** A reference as the CLI takes it: an OCI layout on disk, or a registry. */
export type StoreReference =
  | { kind: 'layout'; path: string; tag?: string; digest?: string }
  | ({ kind: 'registry' } & RegistryReference);

/** Parses `oci:PATH[:TAG|@DIGEST]` or a registry reference. */
export function parseStoreReference(ref: string): StoreReference {
  if (ref.startsWith('oci:')) {
    let rest = ref.slice('oci:'.length);
    if (rest.startsWith('//')) {
      bad(ref, '"oci://" is a Helm registry URL, not an OCI layout', 'write oci:PATH[:TAG] for an OCI layout directory, or host/repository[:tag] for a registry');
    }
    let tag: string | undefined;
    let digest: string | undefined;
    const at = rest.lastIndexOf('@');
    if (at >= 0 && isDigest(rest.slice(at + 1))) {
      digest = rest.slice(at + 1);
      rest = rest.slice(0, at);
    } else {
      const colon = rest.lastIndexOf(':');
      if (colon >= 0 && !rest.slice(colon).includes('/')) {
        tag = rest.slice(colon + 1);
        rest = rest.slice(0, colon);
        if (!TAG_RE.test(tag)) bad(ref, `"${tag}" is not a valid tag`, 'write oci:PATH[:TAG|@DIGEST]');
      }
    }
    if (!rest) bad(ref, 'the layout path is missing', 'write oci:PATH[:TAG|@DIGEST], e.g. oci:./out/image:1.0.0');
    return { kind: 'layout', path: rest, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
  }
  return { kind: 'registry', ...parseReference(ref) };
}

/** Helm's tag for a chart version: `+` is not allowed in OCI tags, so it becomes `_`. */
export const helmTag = (version: string): string => version.replace(/\+/g, '_');
/** The chart version a Helm tag stands for (`_` back to `+`). */
export const helmVersionFromTag = (tag: string): string => tag.replace(/_/g, '+');
