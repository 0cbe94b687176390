// Logins that only one run at a time may use (issue 34): a subscription whose manifest sets
// `auth.subscription.serialize` because its refresh token is single-use and rotates on refresh (Codex's auth.json).
// On a workstation every `tcab run` copies the user's own login into its run HOME, so two parallel runs would
// present the same refresh token and the second refresh would log both out. So a run that uses such a login holds
// an exclusive lock beside it (`<first file>.tcab-lock`) from before the copy until after the write-back: a
// second run waits, saying so. And the rotated login the harness wrote into the run HOME is copied back over the
// user's file (atomically: temp + rename), only when it parses and differs from what the run was given; otherwise
// the next run would present a refresh token already spent.
//
// The lock is a file made whole under a temporary name and hard-linked to the lock name (link(2) fails with EEXIST
// atomically, and a reader never sees it half-written). It records the holder's pid, host and a nonce; a lock
// whose holder on this host is gone (kill -9, a crash) is stale and is broken. A waiter wakes when the lock file
// goes (fs.watch on its directory), and re-checks every `retryMs` in case a watch event is missed.
import { randomBytes } from 'node:crypto';
import { constants, watch } from 'node:fs';
import { link, open, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { AvailableAuthResolution } from '../shared/auth.ts';
import type { HarnessManifest } from '../shared/manifest.ts';
import { HeldDir, confinedSegments, openRegularFileIn } from './confined-fs.ts';
import type { CredentialSource } from './credentials.ts';

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** A login file larger than this is not written back (credential files are a few KiB). */
export const MAX_LOGIN_BYTES = 1024 * 1024;

export interface LockHolder {
  pid: number;
  host: string;
  since: string;
  nonce: string;
}

export interface LoginLock {
  readonly path: string;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Called once per holder the caller waits for. */
  onWait?: (holder: LockHolder | undefined) => void;
  signal?: AbortSignal;
  /** How often a waiter looks again without a watch event (default 1000 ms). */
  retryMs?: number;
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const data = JSON.parse(text) as Partial<LockHolder>;
    return typeof data.pid === 'number' && typeof data.host === 'string' && typeof data.nonce === 'string' ? (data as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process on this host (EPERM: alive, someone else's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) === 'EPERM';
  }
}

/** A lock whose holder is known to be gone: on this host, its pid no longer running. */
export function isStale(holder: LockHolder | undefined): boolean {
  return holder !== undefined && holder.host === hostname() && !alive(holder.pid);
}

async function readHolder(path: string): Promise<{ text: string; holder: LockHolder | undefined } | undefined> {
  try {
    const text = await readFile(path, 'utf8');
    return { text, holder: parseHolder(text) };
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Moves a stale lock aside and removes it; a lock that turned out not to be the stale one is put back. */
async function breakStale(path: string, staleText: string): Promise<void> {
  const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return; // someone else broke (or released) it
    throw error;
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved !== undefined && moved !== staleText) await link(aside, path).catch(() => undefined); // a fresh holder's: restore it
  await unlink(aside).catch(() => undefined);
}

/** Waits until `path` changes in its directory, `ms` pass, or `signal` aborts. */
function changeOrTimeout(path: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const name = basename(path);
    let watcher: ReturnType<typeof watch> | undefined;
    const done = () => {
      clearTimeout(timer);
      watcher?.close();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    try {
      watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) done();
      });
      watcher.on('error', done);
    } catch {
      // no watch here: the timer alone
    }
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}

/** Takes the exclusive lock at `path`, waiting while another live process holds it. */
export async function acquireLoginLock(path: string, options: AcquireOptions = {}): Promise<LoginLock> {
  const me: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), nonce: randomBytes(12).toString('hex') };
  const mine = JSON.stringify(me);
  const temporary = `${path}.${me.nonce}`;
  await writeFile(temporary, mine, { mode: 0o600, flag: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW });
  let waitedFor: string | undefined;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      try {
        await link(temporary, path);
        break;
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
      const current = await readHolder(path);
      if (current === undefined) continue; // released meanwhile
      if (isStale(current.holder)) {
        await breakStale(path, current.text);
        continue;
      }
      if (waitedFor !== current.text) {
        waitedFor = current.text;
        options.onWait?.(current.holder);
      }
      await changeOrTimeout(path, options.retryMs ?? 1000, options.signal);
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  return {
    path,
    release: async () => {
      // Only our own lock: one broken as stale (it was not) and retaken by someone else stays theirs.
      const current = await readHolder(path);
      if (current?.holder?.nonce === me.nonce) await unlink(path).catch(() => undefined);
    },
  };
}

/**
 * Reads `homeRelative` from the run HOME without following a link anywhere below HOME (the run user controls it):
 * a regular file of at most MAX_LOGIN_BYTES, or undefined.
 */
export async function readRunHomeFile(home: string, homeRelative: string): Promise<Buffer | undefined> {
  const parts = confinedSegments(homeRelative);
  const name = parts.pop()!;
  const held: HeldDir[] = [];
  try {
    held.push(await HeldDir.open(home, { follow: false }));
    for (const part of parts) held.push(await held.at(-1)!.sub(part));
    const opened = await openRegularFileIn(held.at(-1)!, name);
    if (!opened) return undefined;
    try {
      if (opened.info.size > MAX_LOGIN_BYTES) return undefined;
      return await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  } catch {
    return undefined; // absent, a link, not a directory: nothing to write back
  } finally {
    await Promise.all(held.map((d) => d.close()));
  }
}

/** Replaces `target` (through a symlink to the user's real file) with `content` atomically, keeping its mode. */
export async function replaceLoginFile(target: string, content: Uint8Array): Promise<void> {
  const real = await realpath(target);
  const mode = (await stat(real)).mode & 0o777;
  const temporary = join(dirname(real), `.${basename(real)}.tcab-${randomBytes(6).toString('hex')}`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, real);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

const parses = (content: Buffer): boolean => {
  try {
    JSON.parse(content.toString('utf8'));
    return true;
  } catch {
    return false;
  }
};

export interface HeldLogin {
  /** The login's first file on the host (what the lock is named after). */
  readonly login: string;
  /** Copies each file the harness rotated back to the login: the HOME-relative paths written back. */
  writeBack(runHome: string): Promise<string[]>;
  release(): Promise<void>;
}

/**
 * For a run about to copy a serialised login from the user's HOME (subscription mode, manifest `serialize`):
 * waits for and takes the login's lock, and remembers the files as they are now (what the run is given).
 * Undefined when the run's login needs no lock: an API key, no `serialize`, or a mounted login (a cluster Secret:
 * the dispatcher runs one Run per Secret at a time, claims/decide.ts).
 */
export async function holdLogin(
  manifest: HarnessManifest,
  resolution: AvailableAuthResolution,
  source: CredentialSource,
  options: AcquireOptions = {},
): Promise<HeldLogin | undefined> {
  if (resolution.mode !== 'subscription' || manifest.auth.subscription?.serialize === undefined || source.kind !== 'home') return undefined;
  const files = resolution.files.map((homeRelative) => ({ homeRelative, host: join(source.home, homeRelative) }));
  const login = files[0]!.host;
  const lock = await acquireLoginLock(`${login}.tcab-lock`, options);
  let given: (Buffer | undefined)[];
  try {
    given = await Promise.all(files.map((f) => readFile(f.host).catch(() => undefined)));
  } catch (error) {
    await lock.release();
    throw error;
  }
  return {
    login,
    release: () => lock.release(),
    writeBack: async (runHome) => {
      const written: string[] = [];
      for (const [index, file] of files.entries()) {
        const left = await readRunHomeFile(runHome, file.homeRelative);
        const before = given[index];
        // Only a file the harness changed, and only one that is whole: a half-written or emptied login is not copied.
        if (!left || left.length === 0 || (before && left.equals(before)) || !parses(left)) continue;
        await replaceLoginFile(file.host, left);
        written.push(file.homeRelative);
      }
      return written;
    },
  };
}

/** What a run waiting for a serialised login says (a `login_busy` warning). */
export function loginBusyMessage(manifest: HarnessManifest, holder: LockHolder | undefined): string {
  const by = holder ? ` (held by pid ${holder.pid} on ${holder.host} since ${holder.since})` : '';
  return `waiting for another run to finish with the ${manifest.name} login${by}: runs sharing it go one at a time, ${manifest.auth.subscription?.serialize ?? 'its manifest says so'}`;
}
