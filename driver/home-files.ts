// Writes files into the run user's HOME (CLI config an invocation asks for, skills a scenario needs), never
// outside it, owned by the run user, private by default; reads back the reports a CLI wrote there. The harness
// install and earlier sessions ran in HOME as the run user, so HOME may hold planted symlinks or hard links:
// writes go through confined-fs.ts (no component below HOME is followed, a planted link is replaced, never
// written through, ownership is set on what was created).
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileToWrite } from '../shared/adapter.ts';
import type { RunUser } from './process.ts';
import { writeConfinedFile } from './confined-fs.ts';

export async function writeHomeFiles(home: string, user: RunUser, files: FileToWrite[]): Promise<void> {
  for (const file of files) {
    await writeConfinedFile(home, file.path, file.content, { mode: file.mode ?? 0o600, dirMode: 0o700, owner: user });
  }
}

/** A report larger than this is not read: usage reports are a few KiB, and the driver must not load a huge file. */
export const MAX_REPORT_BYTES = 4 * 1024 * 1024;

/**
 * Reads the report files a session wrote into HOME (see Invocation.reports). The run user controls HOME, so a
 * name is a bare file name, the file is opened without following a symlink and must be a regular file: a link
 * to the driver's own secrets is never read. Missing, irregular or oversized files are left out; the translator
 * reports what is missing.
 */
export async function readHomeReports(home: string, names: readonly string[]): Promise<Record<string, string>> {
  const reports: Record<string, string> = {};
  for (const name of names) {
    if (name.includes('/') || name === '.' || name === '..') throw new Error(`a report is a file name directly in HOME: ${name}`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(join(home, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_REPORT_BYTES) continue;
      reports[name] = await handle.readFile('utf8');
    } catch {
      // not written (the CLI failed early) or a symlink: absent
    } finally {
      await handle?.close();
    }
  }
  return reports;
}
