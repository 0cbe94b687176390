// A FIFO of serialized messages that stays bounded in memory: past `maxMemoryBytes` new items are appended to a
// spill file and read back in order once the memory part drains. Order is preserved across both parts.
// The spill file lives in a fresh private directory (mkdtemp, 0700) created on the first spill and is opened
// with O_EXCL|O_NOFOLLOW: the driver runs as root and the spill parent is often a shared /tmp, where a guessable
// file name would let anyone plant a symlink and have root truncate its target.
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class SpillQueue {
  private memory: string[] = [];
  private memoryBytes = 0;
  private spillFd: number | undefined;
  private spillWriteOffset = 0;
  private spillReadOffset = 0;
  private spilledCount = 0;
  private readonly spillParent: string;
  private spillDir: string | undefined;
  private readonly maxMemoryBytes: number;

  /** @param spillParent the directory the private spill directory is created in (e.g. os.tmpdir()). */
  constructor(spillParent: string, maxMemoryBytes = 32 * 1024 * 1024) {
    this.spillParent = spillParent;
    this.maxMemoryBytes = maxMemoryBytes;
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

  push(item: string): void {
    if (item.includes('\n')) throw new Error('SpillQueue items must be single-line');
    // Once anything is on disk, everything after it goes to disk too, or order would break.
    if (this.spilledCount === 0 && this.memoryBytes + item.length <= this.maxMemoryBytes) {
      this.memory.push(item);
      this.memoryBytes += item.length;
      return;
    }
    this.spillFd ??= this.openSpill();
    const line = Buffer.from(`${item}\n`);
    writeSync(this.spillFd, line, 0, line.length, this.spillWriteOffset);
    this.spillWriteOffset += line.length;
    this.spilledCount += 1;
  }

  /** Up to `n` items from the head, without removing them. */
  peek(n: number): string[] {
    if (this.memory.length < n && this.spilledCount > 0) this.refill(n - this.memory.length);
    return this.memory.slice(0, n);
  }

  /** Removes `n` items from the head (after they were delivered). */
  drop(n: number): void {
    const removed = this.memory.splice(0, n);
    for (const item of removed) this.memoryBytes -= item.length;
  }

  /** Everything still queued, in order (for the give-up path). */
  drain(): string[] {
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
        const item = pending.toString('utf8', start, nl);
        this.memory.push(item);
        this.memoryBytes += item.length;
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
