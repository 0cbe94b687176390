// Splits a byte stream into lines without ever holding more than one capped line in memory.
// Handles CRLF, a final line without a newline, invalid UTF-8 (replaced with U+FFFD, never thrown) and lines of
// any length: bytes past `maxLineBytes` are counted but not kept, so a 16 MiB line costs at most the cap.

export interface SplitLine {
  /** The line's text (without the newline / CRLF), cut to the cap when `truncated`. */
  text: string;
  /** Size of the whole original line in bytes, terminator excluded. */
  bytes: number;
  truncated: boolean;
}

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;
const NEWLINE = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  readonly maxLineBytes: number;
  /** Pieces of the current (unfinished) line kept so far, at most maxLineBytes in total. */
  private parts: Buffer[] = [];
  private keptBytes = 0;
  private totalBytes = 0;
  /** Last byte seen of the current line, kept or not: a CR there is the CRLF's, not the line's. */
  private lastByte = -1;

  constructor(maxLineBytes = DEFAULT_MAX_LINE_BYTES) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1) throw new RangeError('maxLineBytes must be a positive integer');
    this.maxLineBytes = maxLineBytes;
  }

  /** Feeds a chunk; returns the lines it completed, in order. */
  push(chunk: Buffer | Uint8Array | string): SplitLine[] {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const out: SplitLine[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(NEWLINE, start);
      if (nl === -1) break;
      if (this.totalBytes === 0) {
        // Fast path: the whole line lies inside this chunk.
        out.push(this.finishSlice(buf, start, nl));
      } else {
        this.keep(buf, start, nl);
        out.push(this.finishParts());
      }
      start = nl + 1;
    }
    if (start < buf.length) this.keep(buf, start, buf.length);
    return out;
  }

  /** End of stream: a final line without a newline is still a line. */
  end(): SplitLine[] {
    return this.totalBytes > 0 ? [this.finishParts()] : [];
  }

  private keep(buf: Buffer, from: number, to: number): void {
    const len = to - from;
    this.totalBytes += len;
    if (len > 0) this.lastByte = buf[to - 1]!;
    const room = this.maxLineBytes - this.keptBytes;
    if (room <= 0) return;
    // Copy: the caller may reuse its chunk buffer.
    const piece = Buffer.from(buf.subarray(from, from + Math.min(len, room)));
    this.parts.push(piece);
    this.keptBytes += piece.length;
  }

  private finishSlice(buf: Buffer, from: number, to: number): SplitLine {
    let end = to;
    if (end > from && buf[end - 1] === CR) end -= 1;
    const bytes = end - from;
    if (bytes <= this.maxLineBytes) return { text: buf.toString('utf8', from, end), bytes, truncated: false };
    return { text: buf.toString('utf8', from, from + this.maxLineBytes), bytes, truncated: true };
  }

  private finishParts(): SplitLine {
    let joined = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.keptBytes);
    let bytes = this.totalBytes;
    const truncated = bytes > this.maxLineBytes;
    if (!truncated && joined.length > 0 && joined[joined.length - 1] === CR) {
      joined = joined.subarray(0, joined.length - 1);
      bytes -= 1;
    } else if (truncated && this.lastByte === CR) {
      bytes -= 1;
    }
    this.parts = [];
    this.keptBytes = 0;
    this.totalBytes = 0;
    this.lastByte = -1;
    return { text: joined.toString('utf8'), bytes, truncated };
  }

}

/** Splits a whole stream (e.g. a child's stdout or a file) into lines. */
export async function* splitLines(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): AsyncGenerator<SplitLine> {
  const splitter = new LineSplitter(maxLineBytes);
  for await (const chunk of source) yield* splitter.push(chunk);
  yield* splitter.end();
}
