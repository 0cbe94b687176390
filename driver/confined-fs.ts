// Filesystem writes the root driver makes inside directories the run user controls (the run HOME after the
// harness install ran there, the workspace). The run user may have planted a symlink or a hard link anywhere in
// them, or may still be running a process that swaps a directory for a symlink between two of our calls. So every
// operation goes through a directory we hold open: `/proc/self/fd/<fd>/<name>` resolves to a name inside exactly
// that directory (Linux's openat through a path), a final component is never followed (O_NOFOLLOW, lchown, rename
// and unlink act on the link itself), a file is written under a fresh temporary name and renamed over its target
// (a planted link is replaced, never written through), and ownership is set on the open descriptor (fchown).
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lchown, lstat, mkdir, open, readdir, rename, rmdir, symlink, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { RunUser } from './process.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

/** A write or removal refused because it would go through a link or out of its directory. */
export class ConfinementError extends Error {
  override name = 'ConfinementError';
}

/** Directories nested deeper than this are not walked: each level holds a descriptor. */
export const MAX_DEPTH = 128;

/**
 * Whether only the driver can change what `info` describes: the driver's uid owns it and no group or other write
 * bit is set (the run directories' base, the prefix root, the release store and each of its entries).
 */
export function onlyDriverWrites(info: Pick<Stats, 'uid' | 'mode'>, driverUid: number | undefined): boolean {
  return (driverUid === undefined || info.uid === driverUid) && (info.mode & 0o022) === 0;
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** An open directory; names under it never resolve through a path someone can change. */
export class HeldDir {
  readonly handle: FileHandle;
  /** For messages only: where the directory was when it was opened. */
  readonly shown: string;
  private constructor(handle: FileHandle, shown: string) {
    this.handle = handle;
    this.shown = shown;
  }

  /** Opens a directory the caller names; with `follow: false` a symlink in the last component is refused. */
  static async open(path: string, options: { follow: boolean }): Promise<HeldDir> {
    try {
      return new HeldDir(await open(path, O_RDONLY | O_DIRECTORY | (options.follow ? 0 : O_NOFOLLOW)), path);
    } catch (error) {
      if (errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') throw new ConfinementError(`${path} is a symlink or not a directory`, { cause: error });
      throw error;
    }
  }

  get path(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  at(name: string): string {
    return `${this.path}/${name}`;
  }

  /** The subdirectory `name`, never through a symlink; made (mode, owner) when absent and `create` is given. */
  async sub(name: string, create?: { mode: number; owner: RunUser }): Promise<HeldDir> {
    let made = false;
    if (create) {
      try {
        await mkdir(this.at(name), { mode: create.mode });
        made = true;
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
    }
    let handle: FileHandle;
    try {
      handle = await open(this.at(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      if (errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') throw new ConfinementError(`refusing to go through ${this.shown}/${name}: it is a symlink or not a directory`, { cause: error });
      throw error;
    }
    const dir = new HeldDir(handle, `${this.shown}/${name}`);
    if (made && create) {
      await handle.chmod(create.mode);
      await chownHandle(handle, create.owner);
    }
    return dir;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

async function chownHandle(handle: FileHandle, owner: RunUser): Promise<void> {
  if (owner.uid !== undefined) await handle.chown(owner.uid, owner.gid ?? owner.uid);
}

/** Path segments of a relative path inside a directory; '..', an absolute path or nothing at all is refused. */
export function confinedSegments(relativePath: string): string[] {
  const parts = relativePath.split('/').filter((p) => p !== '' && p !== '.');
  if (relativePath.startsWith('/') || parts.length === 0 || parts.includes('..')) throw new ConfinementError(`not a path inside the directory: ${JSON.stringify(relativePath)}`);
  return parts;
}

/**
 * Creates `name` in `dir` atomically: `fill` writes a fresh file opened with O_EXCL under a temporary name, then it
 * is renamed over whatever `name` was (a planted symlink or hard link is replaced, its target untouched).
 */
export async function replaceFileIn(dir: HeldDir, name: string, mode: number, owner: RunUser, fill: (handle: FileHandle) => Promise<void>): Promise<void> {
  const temporary = `.tcab-${randomBytes(6).toString('hex')}`;
  const handle = await open(dir.at(temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      await fill(handle);
      await handle.chmod(mode);
      await chownHandle(handle, owner);
    } finally {
      await handle.close();
    }
    await rename(dir.at(temporary), dir.at(name));
  } catch (error) {
    await unlink(dir.at(temporary)).catch(() => undefined);
    if (errnoOf(error) === 'EISDIR' || errnoOf(error) === 'ENOTEMPTY') throw new ConfinementError(`cannot write ${dir.shown}/${name}: a directory is in the way`, { cause: error });
    throw error;
  }
}

/** Creates the symlink `name` -> `target` in `dir` (replacing what was there), owned by `owner` (lchown). */
export async function replaceSymlinkIn(dir: HeldDir, name: string, target: string, owner: RunUser): Promise<void> {
  const temporary = `.tcab-${randomBytes(6).toString('hex')}`;
  await symlink(target, dir.at(temporary));
  try {
    if (owner.uid !== undefined) await lchown(dir.at(temporary), owner.uid, owner.gid ?? owner.uid);
    await rename(dir.at(temporary), dir.at(name));
  } catch (error) {
    await unlink(dir.at(temporary)).catch(() => undefined);
    throw error;
  }
}

export interface ConfinedWrite {
  /** Mode of the file (default 0600). */
  mode?: number;
  /** Mode of directories made on the way (default 0700). */
  dirMode?: number;
  owner: RunUser;
}

/**
 * Writes `relativePath` under `root` (a directory whose last component may not be a symlink) without following a
 * symlink in any component below `root`: missing directories are made (dirMode, owner), the file replaces what was
 * there (mode, owner). Refuses (ConfinementError) when a component is a symlink or a file.
 */
export async function writeConfinedFile(root: string, relativePath: string, content: string | Uint8Array, options: ConfinedWrite): Promise<void> {
  const parts = confinedSegments(relativePath);
  const name = parts.pop()!;
  const held: HeldDir[] = [await HeldDir.open(root, { follow: false })];
  try {
    for (const part of parts) held.push(await held.at(-1)!.sub(part, { mode: options.dirMode ?? 0o700, owner: options.owner }));
    await replaceFileIn(held.at(-1)!, name, options.mode ?? 0o600, options.owner, async (handle) => {
      await handle.writeFile(content);
    });
  } finally {
    await Promise.all(held.map((d) => d.close()));
  }
}

/**
 * Writes `relativePath` under `root` whatever the run user left in the way (a test case's check files, shipped in
 * after the agent): a symlink or file where a directory goes is unlinked and the directory made, a directory where
 * the file goes is removed (removeConfinedTree). Nothing is followed, so nothing outside `root` is touched. Refuses
 * (ConfinementError) only when what is in the way cannot be removed.
 */
export async function restoreConfinedFile(root: string, relativePath: string, content: string | Uint8Array, options: ConfinedWrite): Promise<void> {
  const parts = confinedSegments(relativePath);
  const name = parts.pop()!;
  const create = { mode: options.dirMode ?? 0o700, owner: options.owner };
  const held: HeldDir[] = [await HeldDir.open(root, { follow: false })];
  try {
    for (const part of parts) held.push(await subInPlaceOf(held.at(-1)!, part, create));
    const dir = held.at(-1)!;
    const info = await lstat(dir.at(name)).catch(() => undefined);
    if (info?.isDirectory()) {
      const left = await removeConfinedTree(dir.at(name));
      if (left.length > 0) throw new ConfinementError(`cannot write ${dir.shown}/${name}: the directory there could not be removed (${left.slice(0, 3).join(', ')})`);
    }
    await replaceFileIn(dir, name, options.mode ?? 0o600, options.owner, async (handle) => {
      await handle.writeFile(content);
    });
  } finally {
    await Promise.all(held.map((d) => d.close()));
  }
}

/** The subdirectory `name` of `dir`, made; a symlink or file standing there is unlinked first (never followed). */
async function subInPlaceOf(dir: HeldDir, name: string, create: { mode: number; owner: RunUser }): Promise<HeldDir> {
  try {
    return await dir.sub(name, create);
  } catch (error) {
    if (!(error instanceof ConfinementError)) throw error;
    await unlink(dir.at(name));
    return dir.sub(name, create);
  }
}

/** Opens a regular file inside `dir` for reading: no symlink, no FIFO that would block, no device. */
export async function openRegularFileIn(dir: HeldDir, name: string): Promise<{ handle: FileHandle; info: Stats } | undefined> {
  const handle = await open(dir.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  const info = await handle.stat();
  if (info.isFile()) return { handle, info };
  await handle.close();
  return undefined;
}

/**
 * Removes the directory `path` and everything in it without following a symlink anywhere: each directory is held
 * open while its entries are removed through it. Returns the entries it could not remove (nested deeper than
 * MAX_DEPTH, or still being refilled); the directory itself stays when any remain.
 */
export async function removeConfinedTree(path: string): Promise<string[]> {
  const left: string[] = [];
  const root = await HeldDir.open(path, { follow: false });
  try {
    await emptyDir(root, path, 0, left);
  } finally {
    await root.close();
  }
  if (left.length === 0) await rmdir(path);
  return left;
}

async function emptyDir(dir: HeldDir, shown: string, depth: number, left: string[]): Promise<void> {
  for (const name of await readdir(dir.path)) {
    const entry = `${shown}/${name}`;
    let info: Stats;
    try {
      info = await lstat(dir.at(name));
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') continue;
      throw error;
    }
    if (!info.isDirectory()) {
      await unlink(dir.at(name)).catch((error: unknown) => {
        if (errnoOf(error) !== 'ENOENT') left.push(entry);
      });
      continue;
    }
    if (depth + 1 >= MAX_DEPTH) {
      left.push(`${entry} (nested deeper than ${MAX_DEPTH} levels)`);
      continue;
    }
    let sub: HeldDir;
    try {
      sub = await dir.sub(name);
    } catch (error) {
      // Swapped for a symlink since the lstat: remove the link, never its target.
      if (error instanceof ConfinementError) await unlink(dir.at(name)).catch(() => left.push(entry));
      else if (errnoOf(error) !== 'ENOENT') left.push(entry);
      continue;
    }
    try {
      await emptyDir(sub, entry, depth + 1, left);
    } finally {
      await sub.close();
    }
    await rmdir(dir.at(name)).catch((error: unknown) => {
      if (errnoOf(error) !== 'ENOENT' && !left.some((l) => l.startsWith(`${entry}/`))) left.push(entry);
    });
  }
}
