// The check's files from a git repository (testCase.check.filesFrom.git, issue 39): cloned by the driver (root) before
// the agent starts, read into memory and the clone removed at once, so the agent never sees them (the hidden tests
// stay hidden) and nothing it does can change them; check.ts writes them into the workspace only after the agent is
// gone. A clone that fails is an infrastructure failure of init_test_case, before any session.
import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { CheckFilesFrom } from '../../shared/run.ts';
import { HeldDir } from '../confined-fs.ts';
import { runProcess } from '../process.ts';
import { OutputTail, StageFailure } from '../stages/context.ts';
import type { StageContext } from '../stages/context.ts';

/** At most this many files, this many bytes each and in all: a check's files, not a repository's history. */
export const MAX_CHECK_FILES = 1000;
export const MAX_CHECK_FILE_BYTES = 8 << 20;
export const MAX_CHECK_FILES_BYTES = 64 << 20;

export interface FetchedCheckFiles {
  files: { path: string; content: Buffer; mode: number }[];
  /** The commit the ref resolved to: what was fetched, exactly. */
  commit: string;
  /** Entries not taken (symbolic links, devices, FIFOs), by path. */
  skipped: string[];
}

/** Clones into a fresh root-only directory of the run's root, reads the files of `path`, removes the clone. */
export async function fetchCheckFiles(ctx: StageContext, from: CheckFilesFrom): Promise<FetchedCheckFiles> {
  const { url, ref, path = '.' } = from.git;
  const name = `check-files-${randomBytes(6).toString('hex')}`;
  const root = await HeldDir.open(ctx.dirs.root, { follow: false });
  try {
    await (await root.sub(name, { mode: 0o700, owner: {} })).close(); // root's own: the run user cannot enter it
  } finally {
    await root.close();
  }
  const clone = join(ctx.dirs.root, name, 'repo');
  try {
    const git = async (args: string[], cwd: string) => {
      const tail = new OutputTail();
      const outcome = await runProcess({ argv: ['git', '-c', 'protocol.ext.allow=never', ...args], cwd, env: { ...ctx.baseEnv, HOME: join(ctx.dirs.root, name), GIT_TERMINAL_PROMPT: '0' }, user: {}, deadline: ctx.deadline, signal: ctx.signal, onStdout: tail.add, onStderr: tail.add });
      if (outcome.cancelled) throw new StageFailure('init_test_case', 'cancelled', "cancelled while fetching the check's files");
      if (outcome.timedOut) throw new StageFailure('init_test_case', 'timeout', "fetching the check's files did not finish within the run's maximum runtime");
      if (outcome.code !== 0) throw new StageFailure('init_test_case', 'infrastructure', `fetching the check's files: git ${args[0]} failed (exit ${outcome.code ?? outcome.signal}): ${tail.text() || 'no output'}`);
      return tail.text().trim();
    };
    await git(['clone', '--quiet', '--no-checkout', '--', url, clone], join(ctx.dirs.root, name));
    // A ref is a tag, a commit, or a branch (the clone has the remote's branches as origin/<name>).
    const commit = ref ? await resolveRef(ref, (candidate) => git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{commit}`], clone).catch(() => undefined)) : await git(['rev-parse', 'HEAD'], clone);
    if (commit === undefined) throw new StageFailure('init_test_case', 'infrastructure', `check.filesFrom.git.ref ${JSON.stringify(ref)} is no branch, tag or commit of ${url}`);
    await git(['checkout', '--quiet', '--detach', commit, '--'], clone);
    const top = await realpath(clone);
    const dir = await realpath(join(clone, path)).catch(() => undefined);
    const inside = dir === undefined ? undefined : relative(top, dir);
    if (dir === undefined || inside === undefined || inside.startsWith('..') || isAbsolute(inside)) {
      throw new StageFailure('init_test_case', 'infrastructure', `check.filesFrom.git.path ${JSON.stringify(path)} is not a directory in ${url} at ${commit}`);
    }
    return { ...(await readTree(dir, dir === top)), commit };
  } finally {
    await rm(join(ctx.dirs.root, name), { recursive: true, force: true });
  }
}

/** Every regular file below `dir` (no link followed), by path relative to it; `.git` skipped at the repository's top. */
async function readTree(dir: string, isRepositoryTop: boolean): Promise<Omit<FetchedCheckFiles, 'commit'>> {
  const files: FetchedCheckFiles['files'] = [];
  const skipped: string[] = [];
  let total = 0;
  const walk = async (at: string, prefix: string): Promise<void> => {
    for (const entry of (await readdir(at)).sort()) {
      if (prefix === '' && isRepositoryTop && entry === '.git') continue;
      const full = join(at, entry);
      const shown = prefix ? `${prefix}/${entry}` : entry;
      const info = await lstat(full);
      if (info.isDirectory()) {
        await walk(full, shown);
        continue;
      }
      if (!info.isFile()) {
        skipped.push(shown);
        continue;
      }
      if (files.length === MAX_CHECK_FILES) throw new StageFailure('init_test_case', 'infrastructure', `the check's files: more than ${MAX_CHECK_FILES} files`);
      if (info.size > MAX_CHECK_FILE_BYTES) throw new StageFailure('init_test_case', 'infrastructure', `the check's file ${shown} is ${info.size} bytes; at most ${MAX_CHECK_FILE_BYTES}`);
      total += info.size;
      if (total > MAX_CHECK_FILES_BYTES) throw new StageFailure('init_test_case', 'infrastructure', `the check's files are more than ${MAX_CHECK_FILES_BYTES} bytes`);
      files.push({ path: shown, content: await readFile(full), mode: info.mode & 0o111 ? 0o755 : 0o644 });
    }
  };
  await walk(dir, '');
  return { files, skipped };
}

async function resolveRef(ref: string, commitOf: (candidate: string) => Promise<string | undefined>): Promise<string | undefined> {
  return (await commitOf(ref)) ?? (await commitOf(`origin/${ref}`));
}
