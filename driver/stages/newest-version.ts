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

async function publishedVersions(ctx: StageContext, pkg: string): Promise<string[]> {
  let out = '';
  const tail = new OutputTail();
  const outcome = await withNpmAuth(ctx, (auth) => runProcess({
    argv: ['npm', 'view', pkg, 'versions', '--json', '--registry', ctx.npmRegistry],
    cwd: ctx.dirs.home,
    env: { ...ctx.baseEnv, ...auth, npm_config_cache: ctx.dirs.npmCache },
    user: ctx.user,
    deadline: ctx.deadline,
    signal: ctx.signal,
    onStdout: (line) => void (out += line.text),
    onStderr: tail.add,
  }));
  // On the registry's 503 or a refused connection, another attempt may find it back (as for the install itself).
  if (outcome.code !== 0) throw new StageFailure('install_harness', 'infrastructure', `npm view ${pkg} versions failed (exit ${outcome.code ?? outcome.signal}): ${tail.text() || 'no output'}`, { transient: isTransientInstallFailure(tail.text()) });
  const parsed = JSON.parse(out) as unknown;
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : typeof parsed === 'string' ? [parsed] : [];
}

export async function resolveNewestInstallable(ctx: StageContext, pkg: string, platformPackage: string, releasePattern?: string): Promise<string> {
  const [wrapper, platform] = await Promise.all([publishedVersions(ctx, pkg), publishedVersions(ctx, platformPackage)]);
  const version = newestCommonRelease(wrapper, platform, releasePattern);
  if (!version) throw new Error(`no version of ${pkg} has a matching ${platformPackage} in the registry`);
  return version;
}
