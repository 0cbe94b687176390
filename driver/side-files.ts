// Side files (Invocation.sideFiles): what a CLI writes below HOME beside its stream. The run user owns HOME and the
// agent runs model-written commands as that user while the driver (root) reads, so every path is walked through
// directories held open (confined-fs.ts): a symlink anywhere below HOME is never followed, a FIFO or device is never
// opened, and what is read is capped. `lines` files are tailed while the session runs (polled; a CLI flushes its
// JSONL records as it goes); `document` files are read once after the session.
import { readdir } from 'node:fs/promises';
import type { SideFile } from '../shared/adapter.ts';
import { LineSplitter } from '../shared/translate/lines.ts';
import type { SplitLine } from '../shared/translate/lines.ts';
import { ConfinementError, confinedSegments, HeldDir, openRegularFileIn } from './confined-fs.ts';
import { MAX_REPORT_BYTES } from './home-files.ts';
import type { Timers } from './stages/stderr-flush.ts';
import { systemTimers } from './stages/stderr-flush.ts';

/** How often a `lines` file is looked at while the session runs. */
export const SIDE_POLL_MS = 200;
/** Names a `*` level looks at: a session directory holds a handful; an agent that makes thousands costs nothing. */
export const MAX_ENTRIES_PER_LEVEL = 256;
/** Files one pattern may match: one per session of the run, with room to spare. */
export const MAX_MATCHES = 32;
/** Bytes read from one `lines` file over a session; past it the file is no longer read (and the translator is told). */
export const MAX_SIDE_FILE_BYTES = 256 * 1024 * 1024;
/** Bytes read from one file per poll, so a burst never holds more than this in memory. */
const READ_CHUNK = 1024 * 1024;

interface Found {
  /** The match's path below HOME (for messages and as the key of what is tracked). */
  path: string;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Files matching `pattern` below `home`, never through a symlink; at most MAX_MATCHES. */
export async function findSideFiles(home: string, pattern: string): Promise<Found[]> {
  const segments = confinedSegments(pattern);
  let root: HeldDir;
  try {
    root = await HeldDir.open(home, { follow: false });
  } catch {
    return [];
  }
  const found: Found[] = [];
  try {
    await walk(root, segments, '', found);
  } finally {
    await root.close();
  }
  return found;
}

async function walk(dir: HeldDir, segments: readonly string[], shown: string, found: Found[]): Promise<void> {
  const [segment, ...rest] = segments;
  if (segment === undefined || found.length >= MAX_MATCHES) return;
  const names = segment === '*' ? await listNames(dir) : [segment];
  for (const name of names) {
    if (found.length >= MAX_MATCHES) return;
    const path = shown ? `${shown}/${name}` : name;
    if (rest.length === 0) {
      const file = await openRegularFileIn(dir, name).catch(() => undefined);
      if (!file) continue;
      found.push({ path, ino: file.info.ino, size: file.info.size, mtimeMs: file.info.mtimeMs });
      await file.handle.close();
      continue;
    }
    let sub: HeldDir;
    try {
      sub = await dir.sub(name);
    } catch (error) {
      if (error instanceof ConfinementError || (error as NodeJS.ErrnoException).code) continue;
      throw error;
    }
    try {
      await walk(sub, rest, path, found);
    } finally {
      await sub.close();
    }
  }
}

/** Directory entries that are directories or regular files (lstat's view: a symlink is neither), sorted. */
async function listNames(dir: HeldDir): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir.path, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() || e.isFile())
    .slice(0, MAX_ENTRIES_PER_LEVEL)
    .map((e) => e.name)
    .sort();
}

/** Reads `path` below `home` (confined) from `offset`, at most `max` bytes; undefined when it is no regular file now. */
async function readFrom(home: string, path: string, ino: number | undefined, offset: number, max: number): Promise<{ bytes: Buffer; ino: number; size: number } | undefined> {
  const segments = confinedSegments(path);
  const name = segments.pop()!;
  let dir = await HeldDir.open(home, { follow: false }).catch(() => undefined);
  if (!dir) return undefined;
  try {
    for (const segment of segments) {
      const sub: HeldDir | undefined = await dir.sub(segment).catch(() => undefined);
      await dir.close();
      dir = sub;
      if (!dir) return undefined;
    }
    const file = await openRegularFileIn(dir, name).catch(() => undefined);
    if (!file) return undefined;
    try {
      // Replaced by another file (or truncated): read the new one from its start.
      const from = (ino !== undefined && file.info.ino !== ino) || file.info.size < offset ? 0 : offset;
      const length = Math.max(0, Math.min(file.info.size - from, max));
      const bytes = Buffer.alloc(length);
      const { bytesRead } = length > 0 ? await file.handle.read(bytes, 0, length, from) : { bytesRead: 0 };
      return { bytes: bytes.subarray(0, bytesRead), ino: file.info.ino, size: from + bytesRead };
    } finally {
      await file.handle.close();
    }
  } finally {
    await dir?.close();
  }
}

interface Tailed {
  name: string;
  path: string;
  ino: number | undefined;
  offset: number;
  splitter: LineSplitter;
  stopped: boolean;
}

export interface SideFileEvents {
  /** A complete line of the `lines` side file `name`. */
  line(name: string, line: SplitLine): void;
  /** Something the driver could not read as asked (a file past its cap). */
  warning(message: string): void;
}

/**
 * One session's side files: `start` before the CLI is spawned notes what is already there (earlier sessions' files
 * are read only from where they ended), `stop` after it exited reads what is left and the documents.
 */
export class SideFileReader {
  private readonly tailed = new Map<string, Tailed>();
  private readonly before = new Map<string, Found>();
  private handle: unknown;
  private polling: Promise<void> = Promise.resolve();
  private stopped = false;

  private readonly home: string;
  private readonly files: readonly SideFile[];
  private readonly events: SideFileEvents;
  private readonly timers: Timers;
  private readonly pollMs: number;

  constructor(home: string, files: readonly SideFile[], events: SideFileEvents, timers: Timers = systemTimers, pollMs = SIDE_POLL_MS) {
    for (const file of files) confinedSegments(file.path);
    this.home = home;
    this.files = files;
    this.events = events;
    this.timers = timers;
    this.pollMs = pollMs;
  }

  async start(): Promise<void> {
    for (const file of this.files) {
      for (const found of await findSideFiles(this.home, file.path)) {
        this.before.set(`${file.name}\0${found.path}`, found);
        if (file.read === 'lines') this.tailed.set(`${file.name}\0${found.path}`, { name: file.name, path: found.path, ino: found.ino, offset: found.size, splitter: new LineSplitter(), stopped: false });
      }
    }
    if (this.files.some((f) => f.read === 'lines')) this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.handle = this.timers.setTimeout(() => {
      this.polling = this.pollSafely().finally(() => this.schedule());
    }, this.pollMs);
  }

  /** A look that cannot fail the session: a read error (EIO, a file gone mid-read) is a warning, the next look retries. */
  private async pollSafely(): Promise<void> {
    try {
      await this.poll();
    } catch (error) {
      this.events.warning(`a side file could not be read: ${(error as Error).message}`);
    }
  }

  /** Reads what every `lines` file gained since the last look (the poll timer calls it; tests too). */
  async poll(): Promise<void> {
    for (const file of this.files) {
      if (file.read !== 'lines') continue;
      for (const found of await findSideFiles(this.home, file.path)) {
        const key = `${file.name}\0${found.path}`;
        if (!this.tailed.has(key)) this.tailed.set(key, { name: file.name, path: found.path, ino: undefined, offset: 0, splitter: new LineSplitter(), stopped: false });
      }
    }
    for (const tail of this.tailed.values()) await this.drain(tail);
  }

  private async drain(tail: Tailed): Promise<void> {
    while (!tail.stopped) {
      const room = MAX_SIDE_FILE_BYTES - tail.offset;
      if (room <= 0) {
        tail.stopped = true;
        this.events.warning(`${tail.path} grew past ${MAX_SIDE_FILE_BYTES} bytes; the rest of it was not read`);
        return;
      }
      const read = await readFrom(this.home, tail.path, tail.ino, tail.offset, Math.min(READ_CHUNK, room));
      if (!read || read.bytes.length === 0) return;
      if (tail.ino !== undefined && read.ino !== tail.ino) tail.splitter = new LineSplitter();
      tail.ino = read.ino;
      tail.offset = read.size;
      for (const line of tail.splitter.push(read.bytes)) this.events.line(tail.name, line);
    }
  }

  /** After the CLI exited: the rest of every `lines` file (a last line without a newline too), and the documents. */
  async stop(): Promise<Record<string, string>> {
    this.stopped = true;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    await this.polling;
    await this.pollSafely();
    for (const tail of this.tailed.values()) for (const line of tail.splitter.end()) this.events.line(tail.name, line);
    const documents: Record<string, string> = {};
    for (const file of this.files) {
      if (file.read !== 'document') continue;
      try {
        const text = await this.document(file);
        if (text !== undefined) documents[file.name] = text;
      } catch (error) {
        this.events.warning(`the side file ${file.path} could not be read: ${(error as Error).message}`);
      }
    }
    return documents;
  }

  /** The newest match of a `document` file that changed during the session, whole; undefined when none did. */
  private async document(file: SideFile): Promise<string | undefined> {
    const changed = (await findSideFiles(this.home, file.path)).filter((found) => {
      const was = this.before.get(`${file.name}\0${found.path}`);
      return !was || was.ino !== found.ino || was.size !== found.size || was.mtimeMs !== found.mtimeMs;
    });
    const newest = changed.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
    if (!newest) return undefined;
    if (newest.size > MAX_REPORT_BYTES) {
      this.events.warning(`${newest.path} is larger than ${MAX_REPORT_BYTES} bytes; it was not read`);
      return undefined;
    }
    const read = await readFrom(this.home, newest.path, undefined, 0, MAX_REPORT_BYTES);
    return read?.bytes.toString('utf8');
  }
}
