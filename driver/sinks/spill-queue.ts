// A FIFO that stays bounded in memory: past `maxMemoryBytes` new items are serialized (the codec) and appended to
// a spill file, and read back in order once the memory part drains. Order is preserved across both parts. Items in
// memory are kept as they are: an item is serialized only if it spills.
// The spill file lives in a fresh private directory (mkdtemp, 0700) created on the first spill and is opened
// with O_EXCL|O_NOFOLLOW: the driver runs as root and the spill parent is often a shared /tmp, where a guessable
// file name would let anyone plant a symlink and have root truncate its target.
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** How items are weighed in memory and written to / read from the spill file (one line each). */
export interface SpillCodec<T> {
  size(item: T): number;
  encode(item: T): string;
  decode(line: string): T;
}

const TEXT: SpillCodec<string> = { size: (item) => item.length, encode: (item) => item, decode: (line) => line };

export class SpillQueue<T = string> {
  private memory: T[] = [];
  private memoryBytes = 0;
  private spillFd: number | undefined;
  private spillWriteOffset = 0;
  private spillReadOffset = 0;
  private spilledCount = 0;
  private readonly spillParent: string;
  private spillDir: string | undefined;
  private readonly maxMemoryBytes: number;
  private readonly codec: SpillCodec<T>;

  /** @param spillParent the directory the private spill directory is created in (e.g. os.tmpdir()). */
  constructor(spillParent: string, maxMemoryBytes = 32 * 1024 * 1024, codec: SpillCodec<T> = TEXT as unknown as SpillCodec<T>) {
    this.spillParent = spillParent;
    this.maxMemoryBytes = maxMemoryBytes;
    this.codec = codec;
  }

  /** The spill file's path once something was spilled (diagnostics and tests). */
  get spillPath(): string | undefined {
    return this.spillDir === undefined ? undefined : join(this.spillDir, 'spill.ndjson');
  }

  private openSpill(): number {
    this.spillDir = mkdtempSync(join(this.spillParent, 'tcab-nats-spill-'));
    return openSync(this.spillPath!, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  }

  get length(): number {
    return this.memory.length + this.spilledCount;
  }

  push(item: T): void {
    // Text is checked at once (it may never spill, but it is a caller's mistake either way); the others when encoded.
    if (typeof item === 'string' && item.includes('\n')) throw new Error('SpillQueue items must be single-line');
    // Once anything is on disk, everything after it goes to disk too, or order would break.
    const size = this.codec.size(item);
    if (this.spilledCount === 0 && this.memoryBytes + size <= this.maxMemoryBytes) {
      this.memory.push(item);
      this.memoryBytes += size;
      return;
    }
    const encoded = this.codec.encode(item);
    if (encoded.includes('\n')) throw new Error('SpillQueue items must be single-line');
    this.spillFd ??= this.openSpill();
    const line = Buffer.from(`${encoded}\n`);
    writeSync(this.spillFd, line, 0, line.length, this.spillWriteOffset);
    this.spillWriteOffset += line.length;
    this.spilledCount += 1;
  }

  /** Up to `n` items from the head, without removing them. */
  peek(n: number): T[] {
    if (this.memory.length < n && this.spilledCount > 0) this.refill(n - this.memory.length);
    return this.memory.slice(0, n);
  }

  /** Removes `n` items from the head (after they were delivered). */
  drop(n: number): void {
    const removed = this.memory.splice(0, n);
    for (const item of removed) this.memoryBytes -= this.codec.size(item);
  }

  /** Everything still queued, in order (for the give-up path). */
  drain(): T[] {
    const all = this.peek(Number.MAX_SAFE_INTEGER);
    this.drop(all.length);
    return all;
  }

  dispose(): void {
    if (this.spillFd !== undefined) closeSync(this.spillFd);
    this.spillFd = undefined;
    if (this.spillDir !== undefined) rmSync(this.spillDir, { recursive: true, force: true });
    this.spillDir = undefined;
  }

  private refill(want: number): void {
    if (this.spillFd === undefined) return;
    const chunk = Buffer.alloc(1024 * 1024);
    let pending = Buffer.alloc(0);
    let filePos = this.spillReadOffset;
    while (want > 0 && this.spilledCount > 0) {
      const read = readSync(this.spillFd, chunk, 0, chunk.length, filePos);
      if (read === 0) break;
      filePos += read;
      pending = Buffer.concat([pending, chunk.subarray(0, read)]);
      let start = 0;
      let nl: number;
      while (want > 0 && (nl = pending.indexOf(0x0a, start)) !== -1) {
        const item = this.codec.decode(pending.toString('utf8', start, nl));
        this.memory.push(item);
        this.memoryBytes += this.codec.size(item);
        this.spilledCount -= 1;
        want -= 1;
        start = nl + 1;
      }
      this.spillReadOffset += start;
      pending = pending.subarray(start);
    }
    if (this.spilledCount === 0) {
      this.spillWriteOffset = 0;
      this.spillReadOffset = 0;
    }
  }
}
