// A run's private directories: a fresh HOME for the run user, the test-case workspace, and the per-run install
// prefix. All live under one root that teardown removes. The npm cache is shared between runs (it only holds
// published tarballs) so the "newest release" install stays fast after the first run on a machine.
import { chmod, chown, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { RunUser } from './process.ts';

export interface RunDirs {
  root: string;
  home: string;
  /** TMPDIR for every child: harness temp files (error reports, caches) go with the run. */
  tmp: string;
  workspace: string;
  prefix: string;
  npmCache: string;
}

export function defaultRunBase(env: Readonly<Record<string, string | undefined>>): string {
  return env.TCAB_RUN_ROOT || join(tmpdir(), 'tcab');
}

async function ownedDir(path: string, user: RunUser, mode = 0o700): Promise<void> {
  await mkdir(path, { recursive: true, mode });
  if (user.uid !== undefined) await chown(path, user.uid, user.gid ?? user.uid);
}

/** Where a run's directories are (pure: the offline stub needs the workspace path before they exist). */
export function runDirsFor(base: string, runId: string, user: RunUser = {}, npmCache?: string): RunDirs {
  const root = join(base, 'runs', runId);
  return {
    root,
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    workspace: join(root, 'workspace'),
    prefix: join(root, 'prefix'),
    npmCache: npmCache ?? join(base, user.uid !== undefined ? `npm-cache-${user.uid}` : 'npm-cache'),
  };
}

export async function createRunDirs(base: string, runId: string, user: RunUser, npmCache?: string): Promise<RunDirs> {
  const dirs = runDirsFor(base, runId, user, npmCache);
  await mkdir(join(base, 'runs'), { recursive: true, mode: 0o755 });
  if (user.uid !== undefined) {
    // The run user must be able to traverse to its own directories; a private base (e.g. a mkdtemp dir) is not.
    for (const dir of [base, join(base, 'runs')]) {
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o711);
    }
  }
  await ownedDir(dirs.root, user);
  for (const dir of [dirs.home, dirs.tmp, dirs.workspace, dirs.prefix, dirs.npmCache]) await ownedDir(dir, user);
  return dirs;
}

export async function removeRunDirs(dirs: RunDirs): Promise<void> {
  await rm(dirs.root, { recursive: true, force: true, maxRetries: 3 });
}
