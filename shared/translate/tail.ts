// The end of a stream kept for a failure message, bounded in characters in total: a harness printing lines of
// 8 MiB must not make the engine hold dozens of them (64 such lines once took RSS past 700 MB).

export class TailBuffer {
  readonly limit: number;
  /** Kept lines, oldest first from `head`; their joined length (with '\n') never exceeds `limit`. */
  private lines: string[] = [];
  private head = 0;
  private joinedLength = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('the failure tail limit must be a positive integer');
    this.limit = limit;
  }

  add(line: string): void {
    if (line.length >= this.limit) {
      // The line alone fills the tail: keep its end as a copy, so the long original can be collected (a slice
      // of it would keep the whole string alive).
      this.lines = [copyOf(line.slice(line.length - this.limit))];
      this.head = 0;
      this.joinedLength = this.limit;
      return;
    }
    // References only on the hot path: a short line costs no copy.
    this.joinedLength += (this.lines.length > this.head ? 1 : 0) + line.length;
    this.lines.push(line);
    while (this.joinedLength > this.limit) {
      this.joinedLength -= this.lines[this.head]!.length + 1;
      this.lines[this.head] = '';
      this.head += 1;
    }
    if (this.head > 64 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  /** Characters held (what the tail costs in memory, apart from the array itself). */
  get size(): number {
    return this.joinedLength;
  }

  text(): string {
    return this.lines.slice(this.head).join('\n');
  }
}

/** A flat copy of a string (V8 keeps the parent of a sliced string alive). */
function copyOf(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}
