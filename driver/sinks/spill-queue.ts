// A FIFO of serialized messages that stays bounded in memory: past `maxMemoryBytes` new items are appended to a
// spill file and read back in order once the memory part drains. Order is preserved across both parts.
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';

export class SpillQueue {
  private memory: string[] = [];
  private memoryBytes = 0;
  private spillFd: number | undefined;
  private spillWriteOffset = 0;
  private spillReadOffset = 0;
  private spilledCount = 0;
  private readonly spillPath: string;
  private readonly maxMemoryBytes: number;

  constructor(spillPath: string, maxMemoryBytes = 32 * 1024 * 1024) {
    this.spillPath = spillPath;
    this.maxMemoryBytes = maxMemoryBytes;
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
    this.spillFd ??= openSync(this.spillPath, 'w+', 0o600);
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
    rmSync(this.spillPath, { force: true });
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
