// "Install the newest release" when a CLI ships its binary in a per-platform package: the newest version that
// both packages have published (a registry can lag on the platform package, and installing the wrapper alone
// gives a CLI that cannot start). Pure version arithmetic plus one `npm view` per package.
import type { StageContext } from './context.ts';
import { runProcess } from '../process.ts';

const RELEASE = /^\d+\.\d+\.\d+$/;

function compare(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** Newest release (no pre-releases) present in both lists. */
export function newestCommonRelease(wrapper: readonly string[], platform: readonly string[]): string | undefined {
  const available = new Set(platform);
  return wrapper.filter((v) => RELEASE.test(v) && available.has(v)).sort(compare).at(-1);
}

async function publishedVersions(ctx: StageContext, pkg: string): Promise<string[]> {
  let out = '';
  const outcome = await runProcess({
    argv: ['npm', 'view', pkg, 'versions', '--json', '--registry', ctx.npmRegistry],
    cwd: ctx.dirs.home,
    env: { ...ctx.baseEnv, npm_config_cache: ctx.dirs.npmCache },
    user: ctx.user,
    deadline: ctx.deadline,
    signal: ctx.signal,
    onStdout: (line) => void (out += line.text),
  });
  if (outcome.code !== 0) throw new Error(`npm view ${pkg} versions failed (exit ${outcome.code ?? outcome.signal})`);
  const parsed = JSON.parse(out) as unknown;
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : typeof parsed === 'string' ? [parsed] : [];
}

export async function resolveNewestInstallable(ctx: StageContext, pkg: string, platformPackage: string): Promise<string> {
  const [wrapper, platform] = await Promise.all([publishedVersions(ctx, pkg), publishedVersions(ctx, platformPackage)]);
  const version = newestCommonRelease(wrapper, platform);
  if (!version) throw new Error(`no version of ${pkg} has a matching ${platformPackage} in the registry`);
  return version;
}
