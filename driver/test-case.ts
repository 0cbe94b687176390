// Seeds the workspace from the run's test case: a local directory (copied), a git repository (cloned as the run
// user), or inline files. Credentials never go here: they live in the run user's HOME only.
import { chmod, chown, cp, mkdir, writeFile, readdir, lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TestCase } from '../shared/run.ts';
import type { RunUser } from './process.ts';
import { runProcess } from './process.ts';
import type { ProcessOutcome } from './process.ts';

export class TestCaseError extends Error {
  override name = 'TestCaseError';
}

async function chownTree(path: string, user: RunUser): Promise<void> {
  if (user.uid === undefined) return;
  const gid = user.gid ?? user.uid;
  await chown(path, user.uid, gid);
  const stat = await lstat(path);
  if (!stat.isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), user);
}

export interface SeedContext {
  workspace: string;
  user: RunUser;
  env: Record<string, string>;
  deadline: number;
}

export async function seedWorkspace(testCase: TestCase | undefined, ctx: SeedContext): Promise<string> {
  const source = testCase?.source;
  if (!source) return 'empty workspace';
  if ('local' in source) {
    try {
      await cp(source.local.path, ctx.workspace, { recursive: true, errorOnExist: false, force: true });
    } catch (cause) {
      throw new TestCaseError(`cannot copy test case directory ${source.local.path}: ${(cause as Error).message}`, { cause });
    }
    await chownTree(ctx.workspace, ctx.user);
    return `copied ${source.local.path}`;
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
    return `cloned ${source.git.url}${source.git.ref ? ` at ${source.git.ref}` : ''}`;
  }
  for (const file of source.files) {
    const target = join(ctx.workspace, file.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.content);
    if (file.mode !== undefined) await chmod(target, file.mode);
  }
  await chownTree(ctx.workspace, ctx.user);
  return `wrote ${source.files.length} file(s)`;
}
