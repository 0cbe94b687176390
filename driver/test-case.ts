// Seeds the workspace from the run's test case: a local directory (copied), a git repository (cloned as the run
// user), or inline files. Credentials never go here: they live in the run user's HOME only.
//
// What a local test case copy takes (the driver may be root; the test case and the workspace are not trusted):
// - directories and regular files are copied; a hard link becomes an independent copy (its source is only read);
// - symlinks are recreated as symlinks with the same target and never followed, neither when reading the test
//   case nor when writing the workspace;
// - FIFOs, sockets and devices are skipped (a FIFO would block the copy forever), as is anything on another
//   filesystem than the test case directory (a mount point) and anything nested deeper than MAX_DEPTH levels;
//   skipped entries are returned so the run reports them;
// - everything created in the workspace belongs to the run user (fchown/lchown on what was created, nothing else);
//   file modes keep their permission bits (never setuid/setgid/sticky).
// Every step goes through held directory descriptors (confined-fs.ts), so a concurrent swap of a directory for a
// symlink on either side cannot redirect the copy.
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { TestCase } from '../shared/run.ts';
import type { RunUser } from './process.ts';
import { runProcess } from './process.ts';
import type { ProcessOutcome } from './process.ts';
import { ConfinementError, HeldDir, MAX_DEPTH, openRegularFileIn, replaceFileIn, replaceSymlinkIn, writeConfinedFile } from './confined-fs.ts';

export class TestCaseError extends Error {
  override name = 'TestCaseError';
}

export interface SeedContext {
  workspace: string;
  user: RunUser;
  env: Record<string, string>;
  deadline: number;
}

export interface SkippedEntry {
  /** Relative to the test case directory. */
  path: string;
  reason: string;
}

export interface Seeded {
  message: string;
  skipped: SkippedEntry[];
}

/**
 * Why a local test case cannot be used, or undefined when it is a directory: checked before anything is installed
 * (`tcab run --test-case`, the driver's first step), so a wrong path costs no install.
 */
export async function localTestCaseProblem(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    return info.isDirectory() ? undefined : `${path} is not a directory (a test case is a directory that is copied into the workspace)`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${path} does not exist` : `${path} cannot be read: ${(error as Error).message}`;
  }
}

export async function seedWorkspace(testCase: TestCase | undefined, ctx: SeedContext): Promise<Seeded> {
  const source = testCase?.source;
  if (!source) return { message: 'empty workspace', skipped: [] };
  if ('local' in source) {
    const problem = await localTestCaseProblem(source.local.path);
    if (problem) throw new TestCaseError(`cannot copy the test case: ${problem}`);
    try {
      const skipped = await copyTestCase(source.local.path, ctx.workspace, ctx.user, ctx.deadline);
      return { message: `copied ${source.local.path}`, skipped };
    } catch (cause) {
      throw new TestCaseError(`cannot copy test case directory ${source.local.path}: ${(cause as Error).message}`, { cause });
    }
  }
  if ('git' in source) {
    const git = (args: string[]): Promise<ProcessOutcome> =>
      runProcess({ argv: ['git', ...args], cwd: ctx.workspace, env: ctx.env, user: ctx.user, deadline: ctx.deadline });
    const clone = await git(['clone', '--quiet', source.git.url, '.']);
    if (clone.code !== 0) throw new TestCaseError(`git clone ${source.git.url} failed (exit ${clone.code ?? clone.signal})`);
    if (source.git.ref) {
      const checkout = await git(['checkout', '--quiet', source.git.ref]);
      if (checkout.code !== 0) throw new TestCaseError(`git checkout ${source.git.ref} failed (exit ${checkout.code ?? checkout.signal})`);
    }
    return { message: `cloned ${source.git.url}${source.git.ref ? ` at ${source.git.ref}` : ''}`, skipped: [] };
  }
  for (const file of source.files) {
    try {
      await writeConfinedFile(ctx.workspace, file.path, file.content, { mode: file.mode ?? 0o644, dirMode: 0o755, owner: ctx.user });
    } catch (cause) {
      throw new TestCaseError(`cannot write test case file ${file.path}: ${(cause as Error).message}`, { cause });
    }
  }
  return { message: `wrote ${source.files.length} file(s)`, skipped: [] };
}

/** Copies the test case directory into the workspace under the policy above; returns what it skipped. */
export async function copyTestCase(from: string, workspace: string, owner: RunUser, deadline = Infinity): Promise<SkippedEntry[]> {
  const skipped: SkippedEntry[] = [];
  // The operator named the test case, so a symlink there is theirs to follow; below it nothing is followed.
  const source = await HeldDir.open(from, { follow: true });
  try {
    const target = await HeldDir.open(workspace, { follow: false });
    try {
      const { dev } = await source.handle.stat();
      await copyEntries(source, target, '', { dev, owner, deadline, skipped, depth: 0, buffer: Buffer.allocUnsafe(1 << 20) });
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
  return skipped;
}

interface CopyState {
  dev: number;
  owner: RunUser;
  deadline: number;
  skipped: SkippedEntry[];
  depth: number;
  /** One copy buffer for the whole copy. */
  buffer: Buffer;
}

const PERMISSION_BITS = 0o777;

async function copyEntries(from: HeldDir, to: HeldDir, prefix: string, state: CopyState): Promise<void> {
  for (const name of await readdir(from.path)) {
    if (Date.now() > state.deadline) throw new TestCaseError(`the copy did not finish within the run's maximum runtime`);
    const path = prefix + name;
    const info = await lstat(from.at(name));
    if (info.dev !== state.dev) {
      state.skipped.push({ path, reason: 'on another filesystem: a mount point' });
    } else if (info.isSymbolicLink()) {
      await replaceSymlinkIn(to, name, await readlink(from.at(name)), state.owner);
    } else if (info.isDirectory()) {
      await copyDirectory(from, to, name, path, info.mode & PERMISSION_BITS, state);
    } else if (info.isFile()) {
      await copyFile(from, to, name, path, state);
    } else {
      state.skipped.push({ path, reason: kindOf(info) });
    }
  }
}

async function copyDirectory(from: HeldDir, to: HeldDir, name: string, path: string, mode: number, state: CopyState): Promise<void> {
  if (state.depth + 1 >= MAX_DEPTH) {
    state.skipped.push({ path, reason: `nested deeper than ${MAX_DEPTH} levels` });
    return;
  }
  let source: HeldDir;
  try {
    source = await from.sub(name);
  } catch (error) {
    // Swapped for a symlink or a file since it was listed: what it is now is not what was listed, so skip it.
    if (error instanceof ConfinementError) return void state.skipped.push({ path, reason: 'changed while it was copied' });
    throw error;
  }
  try {
    const target = await to.sub(name, { mode: mode | 0o700, owner: state.owner });
    try {
      await copyEntries(source, target, `${path}/`, { ...state, depth: state.depth + 1 });
      // The copy's own mode last, so a read-only source directory does not stop its own copy.
      if (mode !== (mode | 0o700)) await target.handle.chmod(mode);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function copyFile(from: HeldDir, to: HeldDir, name: string, path: string, state: CopyState): Promise<void> {
  let opened: Awaited<ReturnType<typeof openRegularFileIn>>;
  try {
    opened = await openRegularFileIn(from, name);
  } catch (error) {
    // A symlink (ELOOP) or a socket (ENXIO) now, where a regular file was listed.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENXIO') return void state.skipped.push({ path, reason: 'changed while it was copied' });
    throw error;
  }
  if (!opened) return void state.skipped.push({ path, reason: 'changed while it was copied' });
  const { handle, info } = opened;
  try {
    await replaceFileIn(to, name, info.mode & PERMISSION_BITS, state.owner, (out) => pump(handle, out, state.buffer));
  } finally {
    await handle.close();
  }
}

async function pump(input: FileHandle, output: FileHandle, buffer: Buffer): Promise<void> {
  for (;;) {
    const { bytesRead } = await input.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return;
    let written = 0;
    while (written < bytesRead) written += (await output.write(buffer, written, bytesRead - written)).bytesWritten;
  }
}

function kindOf(info: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a file, directory or symlink';
}

/** The warning a run emits for entries its copy skipped (the first 20 named). */
export function skippedMessage(skipped: readonly SkippedEntry[]): string {
  const named = skipped.slice(0, 20).map((s) => `${s.path} (${s.reason})`).join(', ');
  const more = skipped.length > 20 ? ` and ${skipped.length - 20} more` : '';
  return `${skipped.length} test case entr${skipped.length === 1 ? 'y was' : 'ies were'} not copied: ${named}${more}`;
}
