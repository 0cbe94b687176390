// install_harness: the manifest's install command, run as the run user into the per-run prefix, bounded by the
// run's maximum runtime. Installing at run time means every run exercises the newest published release.
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessManifest } from '../../shared/manifest.ts';
import { runProcess } from '../process.ts';
import { OutputTail, StageFailure, stage } from './context.ts';
import { publishedRelease, resolveNewestInstallable } from './newest-version.ts';
import { ReleaseCorrupt, StoreUnusable, discardRelease, pruneReleases, restoreRelease, saveRelease } from './release-store.ts';
import type { ReleaseId } from '../../shared/release-store.ts';
import { withNpmAuth } from './npm-auth.ts';
import { droppedOptionalInNpmLog, isTransientInstallFailure, unfetchedInNpmLog } from './transient.ts';
import type { StageContext } from './context.ts';
import { HeldDir, openRegularFileIn } from '../confined-fs.ts';
import { emptyRunPrefix } from '../run-dirs.ts';

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

/** The release the run installs: the newest (with its platform package, when the CLI ships one), with integrities. */
async function resolveRelease(ctx: StageContext, manifest: HarnessManifest, pkg: string): Promise<ReleaseId> {
  const { platform_package: platform, release_pattern: releasePattern } = installOf(manifest);
  const spec = platform ? await resolveNewestInstallable(ctx, pkg, platform, releasePattern) : 'latest';
  const [main, native] = await Promise.all([publishedRelease(ctx, pkg, spec), platform ? publishedRelease(ctx, platform, spec) : undefined]);
  return { slug: manifest.slug, package: pkg, version: main.version, integrity: main.integrity, ...(platform && native ? { platform: { package: platform, integrity: native.integrity } } : {}), command: installOf(manifest).command };
}

/**
 * Whether the install command installs the version the driver names (`<package>@latest` or `{version}` in it): only
 * then is the installed tree known to be the release the store keys it by (a release published between the
 * driver's `npm view` and the install would otherwise be stored under the older one's name).
 */
export function pinsVersion(manifest: HarnessManifest, pkg: string): boolean {
  return installOf(manifest).command.some((arg) => arg.includes('{version}') || arg === `${pkg}@latest`);
}

const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const files = (n: number) => `${n} file${n === 1 ? '' : 's'}`;
const secondsSince = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)}s`;

export async function installHarness(ctx: StageContext, manifest: HarnessManifest): Promise<void> {
  const install = installOf(manifest);
  const what = install.npm_package ?? manifest.binary;
  await stage(ctx, 'install_harness', `installing ${what} (newest release) into ${ctx.dirs.prefix}`, async () => {
    const started = Date.now();
    const { npm_package: pkg, platform_package: platform } = install;
    // With a store, the newest release is resolved first (npm view, as the run user) and looked up by its integrity.
    const release = ctx.releaseStore && pkg && pinsVersion(manifest, pkg) ? await resolveRelease(ctx, manifest, pkg) : undefined;
    const restored = release && ctx.releaseStore ? await restoreFromStore(ctx, ctx.releaseStore, release, what) : undefined;
    if (restored) return { value: undefined, message: `${restored} in ${secondsSince(started)}` };
    const version = release?.version ?? (pkg && platform ? await resolveNewestInstallable(ctx, pkg, platform, install.release_pattern) : undefined);
    const tail = new OutputTail();
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
    // per-platform binary package, when the registry answered 503, the connection failed, or the download was cut
    // off mid-body) without an error.
    const log = await readNpmLogs(ctx.dirs.tmp);
    const missing = [...unfetchedInNpmLog(log).map((u) => `${u.url} (${u.error})`), ...droppedOptionalInNpmLog(log).map((path) => `the optional dependency at ${path} (its download or unpacking failed)`)];
    if (missing.length > 0) {
      const list = missing.slice(0, 5).join(', ');
      throw new StageFailure('install_harness', 'infrastructure', `npm ended the install of ${what} with exit 0 but gave up fetching ${list}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}: npm leaves out an optional dependency it cannot fetch (a per-platform binary) without an error, so the install is incomplete`, { transient: true });
    }
    const installed = `installed ${what}${version ? `@${version} (newest${platform ? ` with ${platform}` : ''})` : ''} in ${(outcome.durationMs / 1000).toFixed(1)}s`;
    if (!release || !ctx.releaseStore) return { value: undefined, message: installed };
    return { value: undefined, message: `${installed}; ${await storeInstalled(ctx, ctx.releaseStore, release)}` };
  });
}

/**
 * The release from the store into the run's prefix, or undefined when the store has none. An entry that fails its
 * check (or a store that cannot be used) is a `release_store_refused` warning: the entry discarded, the prefix
 * emptied, and undefined (the caller installs from the registry).
 */
async function restoreFromStore(ctx: StageContext, store: string, release: ReleaseId, what: string): Promise<string | undefined> {
  try {
    const restored = await restoreRelease(store, release, ctx.dirs.prefix, ctx.user);
    if (!restored.restored) return undefined;
    return `installed ${what}@${release.version} (newest) from the release store: ${files(restored.files)}, ${megabytes(restored.bytes)}, each checked against its SHA-256 and ${restored.linked ? 'hard-linked (read-only)' : 'copied'},`;
  } catch (error) {
    if (!(error instanceof ReleaseCorrupt) && !(error instanceof StoreUnusable)) throw error;
    if (error instanceof ReleaseCorrupt) await discardRelease(store, release);
    await emptyRunPrefix(ctx.dirs, ctx.user);
    ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message: `release store: ${error.message}; installing ${what}@${release.version} from the registry instead`, code: 'release_store_refused' });
    return undefined;
  }
}

/**
 * Stores what the install just made, before any session (what the next run gets is what this install made, before
 * an agent ran), and prunes the package's older releases. Never fails the install: says what it did.
 */
async function storeInstalled(ctx: StageContext, store: string, release: ReleaseId): Promise<string> {
  const storing = Date.now();
  const saved = await saveRelease(store, release, ctx.dirs.prefix, ctx.user).catch((error: unknown) => ({ stored: false as const, reason: (error as Error).message }));
  if (!saved.stored) return `not stored in the release store: ${saved.reason}`;
  const pruned = await pruneReleases(store, release.package).catch(() => []);
  return `stored in the release store for the next run (${files(saved.files)}, ${megabytes(saved.bytes)}) in ${secondsSince(storing)}${pruned.length > 0 ? `; removed older ${pruned.join(', ')}` : ''}`;
}
