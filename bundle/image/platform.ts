/** Platforms: the host's, `os/arch[/variant]` for people, and choosing a manifest from an index. */
import { validationError } from '../../lib/errors.js';
import type { Descriptor, ImageIndex, Platform } from '../oci/content.js';

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

export function hostPlatform(): Platform {
  return { os: process.platform === 'win32' ? 'windows' : process.platform, architecture: ARCH[process.arch] ?? process.arch };
}

export const formatPlatform = (p: Platform): string => `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;

/** The index entry for `want` (variant only compared when asked for). */
export function selectPlatform(index: ImageIndex, want: Platform, where: string): Descriptor {
  const match = index.manifests.find(
    (d) => d.platform && d.platform.os === want.os && d.platform.architecture === want.architecture && (!want.variant || d.platform.variant === want.variant),
  );
  if (match) return match;
  const available = index.manifests.filter((d) => d.platform).map((d) => formatPlatform(d.platform!));
  throw validationError('image-no-platform', `${where} has no image for ${formatPlatform(want)}`, {
    hint: available.length ? `available: ${available.join(', ')}` : 'the index lists no platforms',
  });
}
