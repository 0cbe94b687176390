// install_harness: the manifest's install command, run as the run user into the per-run prefix, bounded by the
// run's maximum runtime. Installing at run time means every run exercises the newest published release.
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { runProcess } from '../process.ts';
import { OutputTail, StageFailure, stage } from './context.ts';
import { resolveNewestInstallable } from './newest-version.ts';
import { withNpmAuth } from './npm-auth.ts';
import { isTransientInstallFailure, unfetchedInNpmLog } from './transient.ts';
import type { StageContext } from './context.ts';
import { HeldDir, openRegularFileIn } from '../confined-fs.ts';

/** npm's debug logs of the install, in the run's TMPDIR (npm makes the directory, as the run user). */
const NPM_LOGS = 'npm-install-logs';
/** More than npm writes for any harness here (Claude Code's install: ~100 KB); a larger file is read this far. */
export const MAX_LOG_BYTES = 8 << 20;
/**
 * At most this many logs are read: the newest by name. npm names each `<ISO time, ':' and '.' as '_'>-debug-<n>.log`
 * (2026-01-02T10_11_12_345Z-debug-0.log), so name order is time order, and known from the directory listing alone:
 * no stat per entry (a directory the run user filled with a million entries costs one pass over their names), and
 * an mtime would be no more trustworthy (whoever can plant a file can set its mtime). The logs dir is the run's own,
 * and the install one npm command: npm writes one log (it keeps at most 10, logs-max); 16 leaves room for an install
 * command that runs npm a few times. Worst case read: MAX_LOG_FILES × MAX_LOG_BYTES.
 */
export const MAX_LOG_FILES = 16;

/**
 * The text of npm's debug logs in `<tmp>/npm-install-logs`, oldest first ('' when there are none). The directory is
 * the run user's (the install runs as it, and anything it started may still write there), so it is read as hostile
 * input: neither the directory nor a log is followed through a symlink, anything but a regular file (a FIFO, a
 * device, a directory) is skipped without blocking (opened O_NONBLOCK and checked on the descriptor), only the
 * newest MAX_LOG_FILES `.log` names, and each at most MAX_LOG_BYTES (a line cut there is dropped).
 */
export async function readNpmLogs(tmp: string): Promise<string> {
  let dir: HeldDir;
  try {
    const parent = await HeldDir.open(tmp, { follow: false });
    try {
      dir = await parent.sub(NPM_LOGS);
    } finally {
      await parent.close();
    }
  } catch {
    return ''; // no log written (an npm that writes none, or none of ours), or not a directory we would read
  }
  try {
    const texts: string[] = [];
    for (const name of await newestLogNames(dir)) {
      const file = await openRegularFileIn(dir, name).catch(() => undefined);
      if (!file) continue;
      try {
        const buffer = Buffer.alloc(Math.min(file.info.size, MAX_LOG_BYTES));
        let filled = 0;
        while (filled < buffer.length) {
          const { bytesRead } = await file.handle.read(buffer, filled, buffer.length - filled, filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        let text = buffer.subarray(0, filled);
        // Cut at the cap: the last line is partial ("failed with 5" of "failed with 503"), not read as a line.
        if (file.info.size > MAX_LOG_BYTES) text = text.subarray(0, text.lastIndexOf(0x0a) + 1);
        texts.push(text.toString('utf8'));
      } finally {
        await file.handle.close();
      }
    }
    return texts.join('\n');
  } finally {
    await dir.close();
  }
}

/** The MAX_LOG_FILES greatest `.log` names in `dir`, ascending (oldest first); never more names than that held. */
async function newestLogNames(dir: HeldDir): Promise<string[]> {
  const newest: string[] = [];
  for await (const entry of await opendir(dir.path)) {
    const { name } = entry;
    if (!name.endsWith('.log')) continue;
    if (newest.length === MAX_LOG_FILES && name <= newest[0]!) continue;
    const at = newest.findIndex((n) => n > name);
    newest.splice(at === -1 ? newest.length : at, 0, name);
    if (newest.length > MAX_LOG_FILES) newest.shift();
  }
  return newest;
}

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
      env: { ...ctx.baseEnv, ...auth, npm_config_cache: ctx.dirs.npmCache, npm_config_logs_dir: join(ctx.dirs.tmp, NPM_LOGS), npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
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
    // exit 0 is not the whole story: npm leaves out an optional dependency it could not fetch (Claude Code's
    // per-platform binary package, when the registry answered 503 or the connection failed) without an error.
    const unfetched = unfetchedInNpmLog(await readNpmLogs(ctx.dirs.tmp));
    if (unfetched.length > 0) {
      const list = unfetched.slice(0, 5).map((u) => `${u.url} (${u.error})`).join(', ');
      throw new StageFailure('install_harness', 'infrastructure', `npm ended the install of ${what} with exit 0 but gave up fetching ${list}${unfetched.length > 5 ? ` and ${unfetched.length - 5} more` : ''}: npm leaves out an optional dependency it cannot fetch (a per-platform binary) without an error, so the install is incomplete`, { transient: true });
    }
    return { value: undefined, message: `installed ${what}${version ? `@${version} (newest with ${platform})` : ''} in ${(outcome.durationMs / 1000).toFixed(1)}s` };
  });
}
