/**
 * What OLM v1 (operator-controller v1.11, `resolve/catalog.go`) would install for a ClusterExtension,
 * computed from a catalog, with the reason each candidate is eligible.
 *
 * Filters, in OLM's order: membership of the selected channels (which also limits the upgrade edges
 * to those channels); the version range (Masterminds syntax); with `CatalogProvided` and an installed
 * bundle, successors only: an entry that `replaces` the installed bundle, lists it in `skips`, or has a
 * `skipRange` (blang) containing the installed version, or the installed version itself. Then
 * non-deprecated bundles first, then the highest version (and release). `SelfCertified` drops the
 * successor filter: any version in range, downgrades included.
 */
import * as blang from '../semver/blang.js';
import { mmFromParts, newConstraint, type Constraints } from '../semver/masterminds.js';
import { packageProperties } from '../fbc/properties.js';
import { SCHEMA_BUNDLE, type Bundle, type Channel, type DeclarativeConfig } from '../fbc/types.js';
import { releaseError } from '../validate/validate.js';
import { usageError } from '../../lib/errors.js';

export type UpgradePolicy = 'CatalogProvided' | 'SelfCertified';

export interface ResolveQuery {
  /** The package; may be omitted when the catalog has one. */
  packageName?: string;
  /** The installed bundle: its version (`1.2.0`) or its name (`inference-operator.v1.2.0`). Omit for a fresh install. */
  installed?: string;
  /** ClusterExtension `spec.source.catalog.channels`. */
  channels?: string[];
  /** ClusterExtension `spec.source.catalog.version` (Masterminds constraint). */
  versionRange?: string;
  /** Default CatalogProvided. */
  policy?: UpgradePolicy;
}

export type ReasonKind = 'installed' | 'replaces' | 'skips' | 'skipRange' | 'self-certified' | 'fresh-install';

export interface Reason {
  kind: ReasonKind;
  channel?: string;
  detail: string;
}

export interface Candidate {
  bundle: string;
  version: string;
  channels: string[];
  deprecated?: string;
  /** Relative to the installed version. */
  direction: 'upgrade' | 'same' | 'downgrade' | 'install';
  reasons: Reason[];
}

export interface Rejection {
  bundle: string;
  version: string;
  reason: string;
}

export interface ResolveResult {
  packageName: string;
  policy: UpgradePolicy;
  installed?: { bundle?: string; version: string };
  /** The bundle OLM v1 would install; equal to the installed one when there is nothing newer. */
  selected?: Candidate;
  /** Every eligible bundle, in OLM's order (the first is selected). */
  candidates: Candidate[];
  rejected: Rejection[];
  /** OLM's resolution error when nothing is eligible. */
  error?: string;
  notes: string[];
}

/** declcfg.VersionRelease with OLM v1's legacy reading: build metadata that parses as a release is one. */
interface VersionRelease {
  version: blang.Version;
  release: blang.PRVersion[];
}

function legacyVersionRelease(v: string): VersionRelease {
  const version = blang.parse(v);
  const build = version.build.join('.');
  if (build && !releaseError(build)) {
    return { version: { ...version, build: [] }, release: build.split('.').map(blang.newPRVersion) };
  }
  return { version, release: [] };
}

function compareRelease(a: blang.PRVersion[], b: blang.PRVersion[]): number {
  if (a.length === 0 && b.length > 0) return -1;
  if (b.length === 0 && a.length > 0) return 1;
  const zero = { major: 0n, minor: 0n, patch: 0n, build: [] };
  return blang.compare({ ...zero, pre: a }, { ...zero, pre: b });
}

function compareVR(a: VersionRelease, b: VersionRelease): number {
  return blang.compare(a.version, b.version) || compareRelease(a.release, b.release);
}

function vrOf(b: Bundle): VersionRelease | undefined {
  const p = packageProperties(b)[0];
  if (!p) return undefined;
  try {
    return legacyVersionRelease(p.version);
  } catch {
    return undefined;
  }
}

const vrString = (vr: VersionRelease) => blang.format(vr.version) + (vr.release.length ? `+${vr.release.map(blang.prString).join('.')}` : '');

export function resolveUpgrade(cfg: DeclarativeConfig, query: ResolveQuery): ResolveResult {
  const policy = query.policy ?? 'CatalogProvided';
  const notes: string[] = [];
  const packages = [...new Set([...cfg.packages.map((p) => p.name), ...cfg.bundles.map((b) => b.package)])].sort();
  const packageName = query.packageName ?? (packages.length === 1 ? packages[0]! : '');
  if (!packageName) throw usageError('package-required', `the catalog has ${packages.length} packages`, { hint: `name one with --package: ${packages.join(', ')}` });
  if (!packages.includes(packageName)) throw usageError('unknown-package', `package ${JSON.stringify(packageName)} is not in the catalog`, { hint: `packages: ${packages.join(', ') || '(none)'}` });

  const bundles = cfg.bundles.filter((b) => b.package === packageName);
  const allChannels = cfg.channels.filter((c) => c.package === packageName);
  const deprecation = cfg.deprecations.find((d) => d.package === packageName);
  const deprecatedBundles = new Map((deprecation?.entries ?? []).filter((e) => e.reference.schema === SCHEMA_BUNDLE).map((e) => [e.reference.name ?? '', e.message]));

  let constraint: Constraints | undefined;
  if (query.versionRange) {
    try {
      constraint = newConstraint(query.versionRange);
    } catch (err) {
      throw usageError('bad-version-range', `desired version range ${JSON.stringify(query.versionRange)} is invalid: ${(err as Error).message}`, {
        hint: 'use Masterminds syntax: ">=1.2.0 <2.0.0", "~1.2", "^1", "1.2.x", "1.0.0 || 2.0.0"',
      });
    }
  }

  // The installed bundle.
  let installed: ResolveResult['installed'];
  let installedVR: VersionRelease | undefined;
  let installedBlang: blang.Version | undefined;
  if (query.installed !== undefined) {
    const byName = bundles.find((b) => b.name === query.installed);
    let version = query.installed;
    let name: string | undefined;
    if (byName) {
      name = byName.name;
      version = packageProperties(byName)[0]?.version ?? '';
    } else {
      const parsed = blang.tryParse(query.installed.replace(/^v(?=\d)/, ''));
      if (!parsed) throw usageError('bad-installed', `${JSON.stringify(query.installed)} is neither a bundle of ${packageName} nor a semver version`, { hint: 'pass the installed version (e.g. 1.2.0) or bundle name (e.g. inference-operator.v1.2.0), as in the ClusterExtension status.install.bundle' });
      version = blang.format(parsed);
      const sameVersion = bundles.filter((b) => {
        const vr = vrOf(b);
        return vr !== undefined && compareVR(vr, legacyVersionRelease(version)) === 0;
      });
      if (sameVersion.length === 1) name = sameVersion[0]!.name;
      else notes.push(`version ${version} is not in the catalog, so only skipRange edges can start from it (OLM matches replaces/skips by bundle name)`);
    }
    installedVR = legacyVersionRelease(version);
    installedBlang = blang.parse(version);
    installed = { ...(name ? { bundle: name } : {}), version };
  }

  // Channel selection limits both membership and the edges considered.
  let channels: Channel[] = allChannels;
  if (query.channels && query.channels.length) {
    const unknown = query.channels.filter((c) => !allChannels.some((x) => x.name === c));
    if (unknown.length) notes.push(`no channel named ${unknown.join(', ')} in ${packageName} (channels: ${allChannels.map((c) => c.name).sort().join(', ')})`);
    channels = allChannels.filter((c) => query.channels!.includes(c.name));
  }

  const candidates: (Candidate & { vr: VersionRelease })[] = [];
  const rejected: Rejection[] = [];
  for (const b of bundles) {
    const vr = vrOf(b);
    if (!vr) {
      rejected.push({ bundle: b.name, version: '?', reason: 'no valid olm.package property' });
      continue;
    }
    const version = vrString(vr);
    const inChannels = channels.filter((c) => c.entries.some((e) => e.name === b.name)).map((c) => c.name).sort();
    if (query.channels?.length && inChannels.length === 0) {
      rejected.push({ bundle: b.name, version, reason: `not in channel${query.channels.length > 1 ? 's' : ''} ${query.channels.join(', ')}` });
      continue;
    }
    if (constraint && !constraint.check(mmFromParts(vr.version.major, vr.version.minor, vr.version.patch, vr.version.pre.map(blang.prString).join('.'), vr.version.build.join('.')))) {
      rejected.push({ bundle: b.name, version, reason: `outside version range ${JSON.stringify(query.versionRange)}` });
      continue;
    }
    const reasons: Reason[] = [];
    let direction: Candidate['direction'] = 'install';
    if (installedVR) {
      const c = compareVR(vr, installedVR);
      direction = c > 0 ? 'upgrade' : c < 0 ? 'downgrade' : 'same';
    }
    if (installedVR && policy === 'CatalogProvided') {
      if (direction === 'same') reasons.push({ kind: 'installed', detail: 'the installed version (stay)' });
      for (const ch of channels) {
        for (const e of ch.entries) {
          if (e.name !== b.name) continue;
          if (installed?.bundle && e.replaces === installed.bundle) reasons.push({ kind: 'replaces', channel: ch.name, detail: `replaces ${installed.bundle}` });
          if (installed?.bundle && (e.skips ?? []).includes(installed.bundle)) reasons.push({ kind: 'skips', channel: ch.name, detail: `skips ${installed.bundle}` });
          if (e.skipRange) {
            const range = blang.tryParseRange(e.skipRange);
            if (range && range(installedBlang!)) reasons.push({ kind: 'skipRange', channel: ch.name, detail: `skipRange ${JSON.stringify(e.skipRange)} contains ${installed!.version}` });
          }
        }
      }
      if (reasons.length === 0) {
        rejected.push({ bundle: b.name, version, reason: `no replaces/skips/skipRange edge from ${installed!.bundle ?? installed!.version}${query.channels?.length ? ' in the selected channels' : ''}${direction === 'downgrade' ? ' (a downgrade needs upgradeConstraintPolicy: SelfCertified)' : ''}` });
        continue;
      }
    } else if (installedVR) {
      reasons.push({ kind: 'self-certified', detail: direction === 'same' ? 'the installed version' : `SelfCertified allows any version in range (${direction})` });
    } else {
      reasons.push({ kind: 'fresh-install', detail: 'nothing installed: any bundle in the selected channels and range' });
    }
    const dep = deprecatedBundles.get(b.name);
    candidates.push({ bundle: b.name, version, channels: inChannels.length ? inChannels : allChannels.filter((c) => c.entries.some((e) => e.name === b.name)).map((c) => c.name).sort(), ...(dep !== undefined ? { deprecated: dep } : {}), direction, reasons, vr });
  }
  candidates.sort((a, b) => {
    const da = a.deprecated !== undefined ? 1 : 0;
    const db = b.deprecated !== undefined ? 1 : 0;
    return da - db || compareVR(b.vr, a.vr);
  });
  const clean = candidates.map(({ vr: _vr, ...c }) => c);
  const result: ResolveResult = { packageName, policy, ...(installed ? { installed } : {}), candidates: clean, rejected: rejected.sort((a, b) => (a.bundle < b.bundle ? -1 : 1)), notes };
  if (clean.length) result.selected = clean[0]!;
  else {
    let msg = installed ? `error upgrading from currently installed version ${JSON.stringify(installed.version)}: ` : '';
    msg += `no bundles found for package ${JSON.stringify(packageName)}`;
    if (query.versionRange) msg += ` matching version ${JSON.stringify(query.versionRange)}`;
    if (query.channels?.length) msg += ` in channels [${query.channels.join(' ')}]`;
    result.error = msg;
  }
  return result;
}
