// A streaming reader of text/event-stream (html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
// that hands each event's data on as it arrives instead of collecting it: lines end with CRLF, LF or CR (a CRLF
// cut between two chunks is one line end), `data:` lines are joined with "\n", a blank line ends the event, and
// every other field (event, id, retry, comments) is skipped. It holds no line and no event: the only state is a
// few flags, so a 50 MB data line costs what its consumer keeps of it. Never throws.

export interface SseSink {
  /** Bytes of the current event's data, in order: a data line's value, or the "\n" that joins two data lines. */
  data(buf: Uint8Array, from: number, to: number): void;
  /** The event ended (a blank line, or the end of the stream); called only for an event that had a data field. */
  dispatch(): void;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const DATA = Buffer.from('data');
const JOIN = Buffer.from('\n');

// States.
const FIELD = 0; // reading a field name at the start of a line
const AFTER_COLON = 1; // just after "data:": one space may follow and is not data
const VALUE = 2; // in a data line's value
const SKIP = 3; // in a line that is not data

export class SseReader {
  private readonly sink: SseSink;
  private state = FIELD;
  /** Bytes of the line read so far while in FIELD (only its first DATA.length matter). */
  private fieldLength = 0;
  /** The field name read so far is a prefix of "data". */
  private fieldIsData = true;
  /** The last byte was a CR: an LF right after it is the same line end. */
  private afterCr = false;
  private eventHasData = false;

  constructor(sink: SseSink) {
    this.sink = sink;
  }

  push(buf: Uint8Array): void {
    const n = buf.length;
    let i = 0;
    if (this.afterCr && n > 0) {
      this.afterCr = false;
      if (buf[0] === LF) i = 1;
    }
    // Next CR / LF at or after i, searched once per chunk and reused until passed (-1: none left).
    let crAt = -2;
    let lfAt = -2;
    while (i < n) {
      if (this.state === VALUE || this.state === SKIP) {
        if (crAt !== -1 && crAt < i) crAt = buf.indexOf(CR, i);
        if (lfAt !== -1 && lfAt < i) lfAt = buf.indexOf(LF, i);
        const stop = crAt === -1 ? (lfAt === -1 ? n : lfAt) : lfAt === -1 ? crAt : Math.min(crAt, lfAt);
        if (this.state === VALUE && stop > i) this.sink.data(buf, i, stop);
        if (stop === n) return;
        i = this.lineEnd(buf, stop);
        continue;
      }
      const b = buf[i]!;
      if (b === CR || b === LF) {
        i = this.lineEnd(buf, i);
        continue;
      }
      i += 1;
      if (this.state === AFTER_COLON) {
        this.state = VALUE;
        if (b !== SPACE) i -= 1; // the byte is data
        continue;
      }
      // FIELD
      if (b === COLON) {
        if (this.fieldIsData && this.fieldLength === DATA.length) {
          this.startData();
          this.state = AFTER_COLON;
        } else {
          this.state = SKIP;
        }
        continue;
      }
      if (this.fieldLength >= DATA.length || b !== DATA[this.fieldLength]) {
        this.fieldIsData = false;
        this.state = SKIP; // not "data": nothing on this line matters
      }
      this.fieldLength += 1;
    }
  }

  /** The stream ended: an event still open is dispatched (its data arrived, only the blank line did not). */
  end(): void {
    if (this.state === FIELD && this.fieldIsData && this.fieldLength === DATA.length) this.startData();
    if (this.eventHasData) this.sink.dispatch();
    this.eventHasData = false;
    this.resetLine();
  }

  /** Handles the line end at `at` (a CR or an LF); returns where the next line starts. */
  private lineEnd(buf: Uint8Array, at: number): number {
    if (this.state === FIELD) {
      if (this.fieldLength === 0) {
        // A blank line ends the event.
        if (this.eventHasData) this.sink.dispatch();
        this.eventHasData = false;
      } else if (this.fieldIsData && this.fieldLength === DATA.length) {
        this.startData(); // "data" alone: a data line with an empty value
      }
    }
    this.resetLine();
    let next = at + 1;
    if (buf[at] === CR) {
      if (next < buf.length) {
        if (buf[next] === LF) next += 1;
      } else {
        this.afterCr = true;
      }
    }
    return next;
  }

  private startData(): void {
    if (this.eventHasData) this.sink.data(JOIN, 0, 1);
    this.eventHasData = true;
  }

  private resetLine(): void {
    this.state = FIELD;
    this.fieldLength = 0;
    this.fieldIsData = true;
  }
}
