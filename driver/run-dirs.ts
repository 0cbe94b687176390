// A run's private directories: a fresh HOME for the run user, the test-case workspace, and the per-run install
// prefix. All live under one root, `<base>/runs/<run id>`, that the run creates (an existing one is refused: it
// belongs to another run) and teardown removes. The npm cache is shared between runs (it only holds published
// tarballs) so the "newest release" install stays fast after the first run on a machine.
//
// The run id is checked against its grammar (shared/run-id.ts) before any path is built from it, so `''`, `..`
// or `a/b` can never name runs/ itself or a directory outside it. Removal refuses a root that does not resolve to
// `<base>/runs/<id>` and never follows a symlink inside it (confined-fs.ts).
import { chmod, chown, lchown, lstat, mkdir, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isRunId, parseRunId } from '../shared/run-id.ts';
import { parseDriverEnvFields } from '../shared/driver-env.ts';
import type { RunUser } from './process.ts';
import { removeConfinedTree } from './confined-fs.ts';

export interface RunDirs {
  /** `<base>/runs`: the parent of every run's root. */
  runs: string;
  root: string;
  home: string;
  /** TMPDIR for every child: harness temp files (error reports, caches) go with the run. */
  tmp: string;
  workspace: string;
  prefix: string;
  npmCache: string;
}

/** TCAB_RUN_ROOT from an environment (default `$TMPDIR/tcab`), decoded by the driver env schema. */
export function defaultRunBase(env: Readonly<Record<string, string | undefined>>): string {
  return parseDriverEnvFields(env, ['TCAB_RUN_ROOT']).TCAB_RUN_ROOT;
}

/** Hands a directory the driver just made to the run user (lchown: the name itself, never a link's target). */
async function handOver(path: string, user: RunUser): Promise<void> {
  if (user.uid !== undefined) await lchown(path, user.uid, user.gid ?? user.uid);
}

/** Where a run's directories are (pure: the offline stub needs the workspace path before they exist). */
export function runDirsFor(base: string, runId: string, user: RunUser = {}, npmCache?: string): RunDirs {
  const runs = join(base, 'runs');
  const root = join(runs, parseRunId(runId, 'run id'));
  return {
    runs,
    root,
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    workspace: join(root, 'workspace'),
    prefix: join(root, 'prefix'),
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
  if (!info.isDirectory() || (me !== undefined && info.uid !== me) || (info.mode & 0o022) !== 0) {
    throw new RunDirsError(`${dir} must be a directory owned by uid ${me} and writable by it alone (set TCAB_RUN_ROOT to another directory, or remove it)`);
  }
}

export async function createRunDirs(base: string, runId: string, user: RunUser, npmCache?: string): Promise<RunDirs> {
  const dirs = runDirsFor(base, runId, user, npmCache);
  await mkdir(dirs.runs, { recursive: true, mode: 0o755 });
  for (const dir of [base, dirs.runs]) await refuseForeign(dir);
  if (user.uid !== undefined) {
    // The run user must be able to traverse to its own directories; a private base (e.g. a mkdtemp dir) is not.
    for (const dir of [base, dirs.runs]) {
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
    throw error;
  }
  return dirs;
}

/**
 * Removes the run's root and everything the run put in it. Refuses (RunDirsError) a root that is a symlink or does
 * not resolve to `<runs>/<its own name>`; throws when something could not be removed, naming it.
 */
export async function removeRunDirs(dirs: RunDirs): Promise<void> {
  let info;
  try {
    info = await lstat(dirs.root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const id = basename(dirs.root);
  const resolvesInside = isRunId(id) && dirs.root === join(dirs.runs, id) && (await realpath(dirs.root)) === join(await realpath(dirs.runs), id);
  if (!info.isDirectory() || !resolvesInside) throw new RunDirsError(`refusing to remove ${dirs.root}: it does not resolve to a run directory under ${dirs.runs}`);
  const left = await removeConfinedTree(dirs.root);
  if (left.length > 0) throw new RunDirsError(`could not remove ${left.length} entr${left.length === 1 ? 'y' : 'ies'} of ${dirs.root}: ${left.slice(0, 10).join(', ')}`);
}

