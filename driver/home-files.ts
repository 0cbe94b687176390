// Writes files into the run user's HOME (CLI config an invocation asks for, skills a scenario needs), never
// outside it, owned by the run user, private by default.
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { FileToWrite } from '../shared/adapter.ts';
import type { RunUser } from './process.ts';

export async function writeHomeFiles(home: string, user: RunUser, files: FileToWrite[]): Promise<void> {
  for (const file of files) {
    const target = join(home, file.path);
    if (relative(home, target).startsWith('..')) throw new Error(`file escapes the run HOME: ${file.path}`);
    const mode = file.mode ?? 0o600;
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await writeFile(target, file.content, { mode });
    await chmod(target, mode);
    if (user.uid !== undefined) {
      const gid = user.gid ?? user.uid;
      for (let dir = dirname(target); dir.startsWith(home) && dir !== home; dir = dirname(dir)) await chown(dir, user.uid, gid);
      await chown(target, user.uid, gid);
    }
  }
}
