// A run's private directories: a fresh HOME for the run user, the test-case workspace, and the per-run install
// prefix. All live under one root, `<base>/runs/<run id>`, that the run creates (an existing one is refused: it
// belongs to another run) and teardown removes. The npm cache is shared between runs (it only holds published
// tarballs) so the "newest release" install stays fast after the first run on a machine.
//
// With TCAB_PREFIX_ROOT the prefix lives outside the root, as `<prefix root>/<expiry>.<uuid>`: on the release
// store's mount a root driver hard-links a stored release into it instead of copying it (link(2) never crosses a
// mount). Teardown removes it like the root; a driver killed before its teardown leaves it, and a later driver
// removes it once the time in its name has passed (the run's maximum runtime, and a margin).
//
// The run id is checked against its grammar (shared/run-id.ts) before any path is built from it, so `''`, `..`
// or `a/b` can never name runs/ itself or a directory outside it. Removal refuses a root that does not resolve to
// `<base>/runs/<id>` and never follows a symlink inside it (confined-fs.ts).
import { randomUUID } from 'node:crypto';
import { chmod, chown, lchown, lstat, mkdir, readdir, realpath, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isRunId, parseRunId } from '../shared/run-id.ts';
import { parseDriverEnvFields } from '../shared/driver-env.ts';
import type { RunUser } from './process.ts';
import { onlyDriverWrites, removeConfinedTree } from './confined-fs.ts';

export interface RunDirs {
  /** `<base>/runs`: the parent of every run's root. */
  runs: string;
  root: string;
  home: string;
  /** TMPDIR for every child: harness temp files (error reports, caches) go with the run. */
  tmp: string;
  workspace: string;
  prefix: string;
  /** TCAB_PREFIX_ROOT: the parent of `prefix` when it is not inside `root`. */
  prefixRoot?: string;
  npmCache: string;
}

/** Where a run's prefix is made outside its root, and the time after which no run can still be using it. */
export interface PrefixPlacement {
  root: string;
  expiresAt: Date;
}

/** `<expiry in epoch seconds>.<uuid>`: nothing else in a prefix root is a prefix a driver made. */
const PREFIX_NAME = /^(\d{1,12})\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function prefixName(expiresAt: Date, id: string = randomUUID()): string {
  return `${Math.ceil(expiresAt.getTime() / 1000)}.${id}`;
}

/** When the prefix named `name` expires, or undefined when the name is not one prefixName makes. */
export function prefixExpiry(name: string): Date | undefined {
  const match = PREFIX_NAME.exec(name);
  return match ? new Date(Number(match[1]) * 1000) : undefined;
}

/** TCAB_RUN_ROOT from an environment (default `$TMPDIR/tcab`), decoded by the driver env schema. */
export function defaultRunBase(env: Readonly<Record<string, string | undefined>>): string {
  return parseDriverEnvFields(env, ['TCAB_RUN_ROOT']).TCAB_RUN_ROOT;
}

/** Hands a directory the driver just made to the run user (lchown: the name itself, never a link's target). */
async function handOver(path: string, user: RunUser): Promise<void> {
  if (user.uid !== undefined) await lchown(path, user.uid, user.gid ?? user.uid);
}

/**
 * Where a run's directories are (pure: the offline stub needs the workspace path before they exist).
 * @param prefixAt `{root, name}` of a prefix outside the run's root (TCAB_PREFIX_ROOT).
 */
export function runDirsFor(base: string, runId: string, user: RunUser = {}, npmCache?: string, prefixAt?: { root: string; name: string }): RunDirs {
  const runs = join(base, 'runs');
  const root = join(runs, parseRunId(runId, 'run id'));
  return {
    runs,
    root,
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    workspace: join(root, 'workspace'),
    prefix: prefixAt ? join(prefixAt.root, prefixAt.name) : join(root, 'prefix'),
    ...(prefixAt ? { prefixRoot: prefixAt.root } : {}),
    npmCache: npmCache ?? join(base, user.uid !== undefined ? `npm-cache-${user.uid}` : 'npm-cache'),
  };
}

export class RunDirsError extends Error {
  override name = 'RunDirsError';
}

/**
 * The base and runs/ must be the driver's own: a directory someone else owns or can write to (e.g. a /tmp/tcab
 * another local user created first) could have runs/ or a run root swapped for a link to anywhere.
 */
async function refuseForeign(dir: string): Promise<void> {
  const info = await lstat(dir);
  const me = process.getuid?.();
  if (!info.isDirectory() || !onlyDriverWrites(info, me)) {
    throw new RunDirsError(`${dir} must be a directory owned by uid ${me} and writable by it alone (set TCAB_RUN_ROOT to another directory, or remove it)`);
  }
}

/**
 * Removes the prefixes in `prefixRoot` whose time has passed (their drivers were killed before teardown). Entries
 * not named as prefixName names them are not ours and stay; one that cannot be removed stays for the next driver.
 * Returns the names removed.
 */
export async function sweepExpiredPrefixes(prefixRoot: string, now: Date): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(prefixRoot)) {
    const expiry = prefixExpiry(name);
    if (!expiry || expiry.getTime() > now.getTime()) continue;
    const path = join(prefixRoot, name);
    // Only the driver writes here, so anything but a directory is a stray name: unlinked, never followed.
    const isDir = await lstat(path).then((info) => info.isDirectory(), () => undefined);
    if (isDir === undefined) continue;
    const left = isDir ? await removeConfinedTree(path).catch(() => ['(refused)']) : await unlink(path).then(() => [], () => ['(refused)']);
    if (left.length === 0) removed.push(name);
  }
  return removed;
}

export async function createRunDirs(base: string, runId: string, user: RunUser, npmCache?: string, placement?: PrefixPlacement): Promise<RunDirs> {
  const dirs = runDirsFor(base, runId, user, npmCache, placement && { root: placement.root, name: prefixName(placement.expiresAt) });
  await mkdir(dirs.runs, { recursive: true, mode: 0o755 });
  for (const dir of [base, dirs.runs]) await refuseForeign(dir);
  const traversed = [base, dirs.runs];
  if (dirs.prefixRoot) {
    // The driver's alone and not listable by the run user (0711): a run finds no other run's prefix in it.
    await mkdir(dirs.prefixRoot, { recursive: true, mode: 0o711 });
    await refuseForeign(dirs.prefixRoot);
    traversed.push(dirs.prefixRoot);
    await sweepExpiredPrefixes(dirs.prefixRoot, new Date());
  }
  if (user.uid !== undefined) {
    // The run user must be able to traverse to its own directories; a private base (e.g. a mkdtemp dir) is not.
    for (const dir of traversed) {
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o711);
    }
  }
  try {
    await mkdir(dirs.root, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new RunDirsError(`run directory ${dirs.root} already exists: run id "${runId}" is taken by another run`, { cause: error });
    throw error;
  }
  try {
    // The root stays the driver's (0700) until its directories exist and are handed over, so no process of the
    // run user (another run's harness runs as the same uid) can swap one of them for a link in between.
    const own = [dirs.home, dirs.tmp, dirs.workspace, dirs.prefix];
    for (const dir of own) await mkdir(dir, { mode: 0o700 });
    for (const dir of [...own, dirs.root]) await handOver(dir, user);
    await mkdir(dirs.npmCache, { recursive: true, mode: 0o700 });
    if (user.uid !== undefined) await chown(dirs.npmCache, user.uid, user.gid ?? user.uid);
  } catch (error) {
    await removeConfinedTree(dirs.root).catch(() => undefined);
    if (dirs.prefixRoot) await removeConfinedTree(dirs.prefix).catch(() => undefined);
    throw error;
  }
  return dirs;
}

/** The run's prefix emptied (a restore that failed half way): made again as createRunDirs makes it, the run user's. */
export async function emptyRunPrefix(dirs: RunDirs, user: RunUser): Promise<void> {
  await removeConfinedTree(dirs.prefix);
  await mkdir(dirs.prefix, { mode: 0o700 });
  await handOver(dirs.prefix, user);
}

/** Removes a prefix made outside the run's root: only a prefixName entry directly in its prefix root. */
async function removeOutsidePrefix(dirs: RunDirs): Promise<string[]> {
  const { prefix, prefixRoot } = dirs;
  if (!prefixRoot) return [];
  const name = basename(prefix);
  if (!prefixExpiry(name) || dirname(prefix) !== prefixRoot) throw new RunDirsError(`refusing to remove ${prefix}: it is not a run prefix directly in ${prefixRoot}`);
  try {
    if (!(await lstat(prefix)).isDirectory()) throw new RunDirsError(`refusing to remove ${prefix}: it is not a directory`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return removeConfinedTree(prefix);
}

/**
 * Removes the run's root and everything the run put in it. Refuses (RunDirsError) a root that is a symlink or does
 * not resolve to `<runs>/<its own name>`; throws when something could not be removed, naming it.
 */
export async function removeRunDirs(dirs: RunDirs): Promise<void> {
  const left = [...(await removeOutsidePrefix(dirs)), ...(await removeRoot(dirs))];
  if (left.length > 0) throw new RunDirsError(`could not remove ${left.length} entr${left.length === 1 ? 'y' : 'ies'} of ${dirs.root}${dirs.prefixRoot ? ` and ${dirs.prefix}` : ''}: ${left.slice(0, 10).join(', ')}`);
}

async function removeRoot(dirs: RunDirs): Promise<string[]> {
  let info;
  try {
    info = await lstat(dirs.root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const id = basename(dirs.root);
  const resolvesInside = isRunId(id) && dirs.root === join(dirs.runs, id) && (await realpath(dirs.root)) === join(await realpath(dirs.runs), id);
  if (!info.isDirectory() || !resolvesInside) throw new RunDirsError(`refusing to remove ${dirs.root}: it does not resolve to a run directory under ${dirs.runs}`);
  return removeConfinedTree(dirs.root);
}

