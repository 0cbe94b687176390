// install_harness: the manifest's install command, run as the run user into the per-run prefix, bounded by the
// run's maximum runtime. Installing at run time means every run exercises the newest published release.
import { join } from 'node:path';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { runProcess } from '../process.ts';
import { OutputTail, StageFailure, stage } from './context.ts';
import { resolveNewestInstallable } from './newest-version.ts';
import { withNpmAuth } from './npm-auth.ts';
import { isTransientInstallFailure } from './transient.ts';
import type { StageContext } from './context.ts';

/** The manifest's install section; a built-in harness has none and never reaches the install stage. */
function installOf(manifest: HarnessManifest): NonNullable<HarnessManifest['install']> {
  if (!manifest.install) throw new Error(`${manifest.slug} is built in: it has nothing to install`);
  return manifest.install;
}

export function installArgv(manifest: HarnessManifest, prefix: string, registry: string, version?: string): string[] {
  const install = installOf(manifest);
  const pkg = install.npm_package;
  return install.command.map((arg) => {
    const filled = arg.replaceAll('{prefix}', prefix).replaceAll('{registry}', registry).replaceAll('{version}', version ?? 'latest');
    return version && pkg && filled === `${pkg}@latest` ? `${pkg}@${version}` : filled;
  });
}

/** Where the installed CLI lives inside the prefix. */
export function installedBinary(manifest: HarnessManifest, prefix: string): string {
  const { bin_path: binPath } = installOf(manifest);
  return binPath ? join(prefix, binPath) : join(prefix, 'bin', manifest.binary);
}

export async function installHarness(ctx: StageContext, manifest: HarnessManifest): Promise<void> {
  const install = installOf(manifest);
  const what = install.npm_package ?? manifest.binary;
  await stage(ctx, 'install_harness', `installing ${what} (newest release) into ${ctx.dirs.prefix}`, async () => {
    const tail = new OutputTail();
    const { npm_package: pkg, platform_package: platform, release_pattern: releasePattern } = install;
    const version = pkg && platform ? await resolveNewestInstallable(ctx, pkg, platform, releasePattern) : undefined;
    const outcome = await withNpmAuth(ctx, (auth) => runProcess({
      argv: installArgv(manifest, ctx.dirs.prefix, ctx.npmRegistry, version),
      cwd: ctx.dirs.home,
      env: { ...ctx.baseEnv, ...auth, npm_config_cache: ctx.dirs.npmCache, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
      user: ctx.user,
      deadline: ctx.deadline,
      signal: ctx.signal,
      onStdout: tail.add,
      onStderr: tail.add,
    }));
    if (outcome.cancelled) throw new StageFailure('install_harness', 'cancelled', 'install cancelled');
    if (outcome.timedOut) throw new StageFailure('install_harness', 'timeout', `install did not finish within the run's maximum runtime`);
    if (outcome.spawnError) throw new StageFailure('install_harness', 'infrastructure', `cannot start the install command: ${outcome.spawnError.message}`);
    if (outcome.code !== 0) {
      const output = tail.text();
      throw new StageFailure('install_harness', 'infrastructure', `install of ${what} failed (exit ${outcome.code ?? outcome.signal}): ${output || 'no output'}`, { transient: isTransientInstallFailure(output) });
    }
    return { value: undefined, message: `installed ${what}${version ? `@${version} (newest with ${platform})` : ''} in ${(outcome.durationMs / 1000).toFixed(1)}s` };
  });
}
