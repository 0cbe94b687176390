// "Install the newest release" when a CLI ships its binary in a per-platform package: the newest version that
// both packages have published (a registry can lag on the platform package, and installing the wrapper alone
// gives a CLI that cannot start). Pure version arithmetic plus one `npm view` per package.
import type { StageContext } from './context.ts';
import { runProcess } from '../process.ts';
import { withNpmAuth } from './npm-auth.ts';
import { OutputTail, StageFailure } from './context.ts';
import { isTransientInstallFailure } from './transient.ts';

/**
 * What counts as a release unless the manifest says otherwise (`install.release_pattern`): x.y.z, so a pre-release
 * (7.8.0-beta.1) is never "the newest release". Amp tags every release with its commit (0.0.1790142911-g7618fb).
 */
export const DEFAULT_RELEASE_PATTERN = '^\\d+\\.\\d+\\.\\d+$';

const CORE = /^(\d+)\.(\d+)\.(\d+)/;

/**
 * Orders versions by their x.y.z core, numerically (1.2.10 after 1.2.9); what follows the core (a release tag such
 * as Amp's -g<commit>) only orders equal cores, as text, so the order is total. The release pattern has already
 * decided what counts: this is not a full semver comparison and needs none.
 */
function compare(a: string, b: string): number {
  const x = CORE.exec(a)!;
  const y = CORE.exec(b)!;
  for (let i = 1; i <= 3; i++) {
    const d = Number(x[i]) - Number(y[i]);
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Newest release (a version matching `releasePattern`, with an x.y.z core) present in both lists. */
export function newestCommonRelease(wrapper: readonly string[], platform: readonly string[], releasePattern = DEFAULT_RELEASE_PATTERN): string | undefined {
  const release = new RegExp(releasePattern);
  const available = new Set(platform);
  return wrapper.filter((v) => CORE.test(v) && release.test(v) && available.has(v)).sort(compare).at(-1);
}

/** `npm view <args> --json` as the run user (its registry, auth and cache), parsed; a failed view is an install failure. */
async function npmView(ctx: StageContext, args: readonly string[]): Promise<unknown> {
  let out = '';
  const tail = new OutputTail();
  const outcome = await withNpmAuth(ctx, (auth) => runProcess({
    argv: ['npm', 'view', ...args, '--json', '--registry', ctx.npmRegistry],
    cwd: ctx.dirs.home,
    env: { ...ctx.baseEnv, ...auth, npm_config_cache: ctx.dirs.npmCache, npm_config_update_notifier: 'false' },
    user: ctx.user,
    deadline: ctx.deadline,
    signal: ctx.signal,
    onStdout: (line) => void (out += line.text),
    onStderr: tail.add,
  }));
  // A cancel or the run's deadline stopped it: that is the run's end, not a registry failure (a retry would be wrong).
  if (outcome.cancelled) throw new StageFailure('install_harness', 'cancelled', 'install cancelled');
  if (outcome.timedOut) throw new StageFailure('install_harness', 'timeout', `install did not finish within the run's maximum runtime`);
  // On the registry's 503 or a refused connection, another attempt may find it back (as for the install itself).
  if (outcome.code !== 0) throw new StageFailure('install_harness', 'infrastructure', `npm view ${args.join(' ')} failed (exit ${outcome.code ?? outcome.signal}): ${tail.text() || 'no output'}`, { transient: isTransientInstallFailure(tail.text()) });
  try {
    return JSON.parse(out) as unknown;
  } catch {
    throw new StageFailure('install_harness', 'infrastructure', `npm view ${args.join(' ')} printed no JSON: ${out.slice(0, 200) || 'nothing'}`);
  }
}

async function publishedVersions(ctx: StageContext, pkg: string): Promise<string[]> {
  const parsed = await npmView(ctx, [pkg, 'versions']);
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : typeof parsed === 'string' ? [parsed] : [];
}

/** A published version and the registry's integrity of its tarball, as `npm view <pkg>@<spec> version dist.integrity` reads them. */
export interface PublishedRelease {
  version: string;
  integrity: string;
}

/** A published version as npm writes one (semver: x.y.z, then a pre-release or build tag), at most 256 characters. */
const PUBLISHED_VERSION = /^\d{1,20}\.\d{1,20}\.\d{1,20}([-+][0-9A-Za-z.+-]{1,200})?$/;

/** What the registry answered for one version, or undefined when it is not one version with an integrity. */
export function parsePublishedRelease(parsed: unknown): PublishedRelease | undefined {
  // A range that matches several versions gives an array of objects; a spec resolves to one version here.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  const version = record.version;
  const integrity = record['dist.integrity'];
  // The registry's text becomes an install argument (`<pkg>@<version>`, or `{version}` in a manifest's command): only
  // a version's characters, never a space, a shell character or a path.
  if (typeof version !== 'string' || !PUBLISHED_VERSION.test(version)) return undefined;
  if (typeof integrity !== 'string' || !/^sha(256|384|512)-[A-Za-z0-9+/]+=*$/.test(integrity)) return undefined;
  return { version, integrity };
}

/** The release `<pkg>@<spec>` (a version or a dist-tag such as latest) is, in the registry, now. */
export async function publishedRelease(ctx: StageContext, pkg: string, spec: string): Promise<PublishedRelease> {
  const release = parsePublishedRelease(await npmView(ctx, [`${pkg}@${spec}`, 'version', 'dist.integrity']));
  if (!release) throw new StageFailure('install_harness', 'infrastructure', `the registry gave no single version with an integrity for ${pkg}@${spec}`);
  return release;
}

export async function resolveNewestInstallable(ctx: StageContext, pkg: string, platformPackage: string, releasePattern?: string): Promise<string> {
  const [wrapper, platform] = await Promise.all([publishedVersions(ctx, pkg), publishedVersions(ctx, platformPackage)]);
  const version = newestCommonRelease(wrapper, platform, releasePattern);
  if (!version) throw new Error(`no version of ${pkg} has a matching ${platformPackage} in the registry`);
  return version;
}
