// Multi-line stderr as one diagnostic (issue 21): a stack trace or a wrapped message is one warning, not one per
// line (one Cline deprecation trace was 76 warnings, and Gemini's counts changed from run to run with the length of
// its traces). Pure: lines go in, groups come out; concatenating the groups gives back the lines, every byte.
// A group is open until a line arrives that does not continue it; the shell edge also closes it after a short
// quiet gap (driver/stages/stderr-flush.ts), since a trace ends with no line to say so.

/** Past this many characters a group is closed anyway: a never-ending indented stream stays bounded. */
export const MAX_GROUP_CHARS = 64 * 1024;

const blank = (line: string) => line.trim().length === 0;
const INDENTED = /^[ \t]/;
/** A stack frame, even unindented (`at fn (file:1:2)`). */
const FRAME = /^\s*at\s+\S/;
/** A line that closes a bracket the group opened: the end of an error object Node prints (`}`), a list, a call. */
const CLOSING = /^[}\])]/;
/** Node's second stack after an uncaught 'error' event (`Emitted 'error' event on ChildProcess instance at:`). */
const NODE_EMITTED = /^Emitted '[^']*' event on .* at:$/;
/** Node's hint after a deprecation or process warning. */
const NODE_HINT = /^\(Use `node --trace-/;
/** Node's caret under the source line of an uncaught exception; the error and its stack follow a blank line. */
const CARET = /^\s*\^+\s*$/;
/** Node's last line after an uncaught exception, printed after a blank line. */
const NODE_FOOTER = /^Node\.js v\d/;

/**
 * Whether `next` continues a group whose last non-blank line is `previous`; `afterBlank`: blank lines came between.
 * Without a blank line: an indented line, a stack frame, a closing bracket, Node's hint or second stack, or any line after one that
 * ends with ':' (a message that says more follows). After a blank line only what is certain: a frame, the error
 * under Node's caret, Node's version footer; anything else starts the next diagnostic.
 */
export function continues(previous: string, next: string, afterBlank: boolean): boolean {
  if (afterBlank) return FRAME.test(next) || CARET.test(previous) || NODE_FOOTER.test(next);
  return INDENTED.test(next) || FRAME.test(next) || CLOSING.test(next) || NODE_HINT.test(next) || NODE_EMITTED.test(next) || previous.trimEnd().endsWith(':');
}

/**
 * Groups stderr lines as they arrive. A group holds a diagnostic's lines with the blank lines inside it; blank lines
 * between diagnostics are a group of their own (the caller shows nothing for it, as for any blank line).
 */
export class StderrGrouper {
  /** The open diagnostic's lines, up to its last non-blank one. */
  private current: string[] = [];
  private currentChars = 0;
  /** Blank lines after it: inside the diagnostic if it goes on, between two otherwise. */
  private blanks: string[] = [];

  /** One line; returns the groups it closed (zero, one, or a diagnostic and the blank lines after it). */
  push(line: string): string[][] {
    if (blank(line)) {
      this.blanks.push(line);
      return [];
    }
    const previous = this.current.at(-1);
    if (previous !== undefined && this.currentChars < MAX_GROUP_CHARS && continues(previous, line, this.blanks.length > 0)) {
      for (const b of this.blanks) this.add(b);
      this.blanks = [];
      this.add(line);
      return [];
    }
    const closed = this.flush();
    this.add(line);
    return closed;
  }

  /** Whether a diagnostic is open (what a quiet gap would flush). */
  pending(): boolean {
    return this.current.length > 0 || this.blanks.length > 0;
  }

  /** Closes what is open: the diagnostic, then the blank lines after it. */
  flush(): string[][] {
    const closed: string[][] = [];
    if (this.current.length > 0) closed.push(this.current);
    if (this.blanks.length > 0) closed.push(this.blanks);
    this.current = [];
    this.currentChars = 0;
    this.blanks = [];
    return closed;
  }

  private add(line: string): void {
    this.current.push(line);
    this.currentChars += line.length + 1;
  }
}

/** A whole stderr at once (recorded output): its groups, in order. */
export function groupStderrLines(lines: readonly string[]): string[][] {
  const grouper = new StderrGrouper();
  const groups = lines.flatMap((line) => grouper.push(line));
  return [...groups, ...grouper.flush()];
}
