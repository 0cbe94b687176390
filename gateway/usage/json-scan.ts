// A streaming JSON scanner that keeps only what it is asked for: bytes go in, in chunks cut anywhere (inside a
// string, a number, a UTF-8 character, a \u escape), and the values at a few paths come out (`usage`,
// `message.usage`, `[*].usageMetadata`, ...), each parsed by JSON.parse once it has arrived whole. Everything
// else is scanned and forgotten: strings are skipped with indexOf, object keys are decoded only as deep as the
// deepest path, so a body of any size costs a fixed amount of memory (the nesting stack, one key, one captured
// value, each capped). Never throws: a syntax error stops the scan, and the values that arrived before it stand.
//
// It validates the structure (brackets, strings, escapes, commas, colons, literals), not every detail (control
// characters in strings, the exact number grammar) outside the captured values: those go through JSON.parse, so
// a captured value is always valid JSON; the rest only has to be well-formed enough to know where it is.

/** One step of a path: an object key, or ITEM for any element of an array. */
export const ITEM: unique symbol = Symbol('any array element');
export type PathStep = string | typeof ITEM;
export type JsonPath = readonly PathStep[];

export interface JsonScanLimits {
  /** Deepest nesting scanned; deeper is a syntax error for this scan (1 byte of memory per level). */
  maxDepth: number;
  /** Largest captured value in bytes; a bigger one is dropped, not held. */
  maxCaptureBytes: number;
  /** Longest object key compared with a path (bytes, raw); a longer key matches nothing. */
  maxKeyBytes: number;
}

export const DEFAULT_SCAN_LIMITS: JsonScanLimits = Object.freeze({ maxDepth: 4096, maxCaptureBytes: 64 * 1024, maxKeyBytes: 128 });

/** Where a scan ended. */
export interface JsonScanEnd {
  /** What the top-level value is: known from its first byte. */
  top: 'object' | 'array' | 'scalar' | null;
  /** The top-level value ended (whatever followed it). */
  complete: boolean;
  /** A syntax error (or a limit) stopped the scan. */
  failed: boolean;
}

// States.
const VALUE = 0; // a value is expected
const VALUE_OR_CLOSE = 1; // after '['
const KEY = 2; // after ',' in an object
const KEY_OR_CLOSE = 3; // after '{'
const COLON = 4;
const AFTER = 5; // after a value inside a container
const STRING = 6;
const NUMBER = 7;
const LITERAL = 8;
const DONE = 9; // the top-level value ended
const FAILED = 10;

const OBJECT = 1;
const ARRAY = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isNumberByte = (b: number) => (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45;
const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
/** Bytes allowed after a backslash, \u aside: " \ / b f n r t. */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS: Record<number, Uint8Array> = { 0x74: Buffer.from('true'), 0x66: Buffer.from('false'), 0x6e: Buffer.from('null') };

const utf8 = new TextDecoder('utf-8');

export class JsonScanner {
  private readonly paths: readonly JsonPath[];
  private readonly onValue: (path: number, value: unknown) => void;
  private readonly onElementEnd: (() => void) | undefined;
  private readonly limits: JsonScanLimits;
  /** The longest path: keys deeper than this are never decoded. */
  private readonly pathDepth: number;
  /** Per level, the keys the paths name there, with their UTF-8 bytes. */
  private readonly keysAt: readonly (readonly { key: string; bytes: Uint8Array }[])[];

  private state = VALUE;
  private top: JsonScanEnd['top'] = null;
  /** The top-level value had ended when bytes after it failed the scan. */
  private completeBeforeFailure = false;
  private readonly kinds: Uint8Array;
  private depth = 0;
  /** steps[k]: the key (or ITEM) of the member open at level k, for k < pathDepth; null = matches nothing. */
  private readonly steps: (PathStep | null)[];

  // The string being scanned.
  private stringIsKey = false;
  /** 0: none; 1: after a backslash; 2..5: that many hex digits of a \u escape still to come, plus one. */
  private escape = 0;
  private keyKept = false;
  private readonly keyBytes: Uint8Array;
  private keyLength = 0;
  private keyOverflow = false;
  private keyEscaped = false;

  /**
   * Next quote / backslash in the chunk being pushed, for long strings: found once per chunk with indexOf and reused
   * until passed (-1: none left; -2: not looked for yet).
   */
  private quoteAt = -2;
  private backslashAt = -2;

  private literal: Uint8Array | null = null;
  private literalAt = 0;

  // The value being captured.
  private capturing = false;
  private capturePath = -1;
  private captureDepth = 0;
  private captureFrom = 0;
  private captureParts: Uint8Array[] = [];
  private captureLength = 0;
  private captureOverflow = false;

  /**
   * @param onValue called with each value found whole at `paths[path]`
   * @param onElementEnd called when an element of a top-level array ends (Gemini's streamed chunks)
   */
  constructor(paths: readonly JsonPath[], onValue: (path: number, value: unknown) => void, limits: JsonScanLimits = DEFAULT_SCAN_LIMITS, onElementEnd?: () => void) {
    this.paths = paths;
    this.onValue = onValue;
    this.onElementEnd = onElementEnd;
    this.limits = limits;
    this.pathDepth = Math.max(0, ...paths.map((p) => p.length));
    this.kinds = new Uint8Array(limits.maxDepth);
    this.steps = new Array<PathStep | null>(this.pathDepth).fill(null);
    this.keyBytes = new Uint8Array(limits.maxKeyBytes);
    this.keysAt = Array.from({ length: this.pathDepth }, (_, level) => {
      const keys = new Set(paths.map((p) => p[level]).filter((step): step is string => typeof step === 'string'));
      return [...keys].map((key) => ({ key, bytes: Buffer.from(key) }));
    });
  }

  /** Starts over for a new document (an SSE event's data), keeping the allocated buffers. */
  reset(): void {
    this.state = VALUE;
    this.top = null;
    this.completeBeforeFailure = false;
    this.depth = 0;
    this.escape = 0;
    this.literal = null;
    this.dropCapture();
  }

  /** Bytes held now beyond the fixed buffers: the captured value so far (at most maxCaptureBytes). */
  get heldBytes(): number {
    return this.captureLength;
  }

  /** Scans buf[from, to) (the whole chunk by default). */
  push(buf: Uint8Array, from = 0, to = buf.length): void {
    if (this.state === FAILED) return;
    if (this.capturing) this.captureFrom = from;
    this.quoteAt = -2;
    this.backslashAt = -2;
    let i = from;
    while (i < to) {
      const state = this.state;
      if (state === STRING) {
        if (this.escape !== 0) {
          if (!this.scanEscape(buf[i]!)) return this.fail();
          if (this.keyKept) this.keepKey(buf, i, i + 1);
          i += 1;
          continue;
        }
        // Short strings byte by byte; past 64 bytes, memchr-like indexOf.
        let stop = i;
        const near = Math.min(to, i + 64);
        while (stop < near && buf[stop] !== QUOTE && buf[stop] !== BACKSLASH) stop++;
        if (stop === near && near < to) stop = this.nextQuoteOrBackslash(buf, stop, to);
        if (this.keyKept && stop > i) this.keepKey(buf, i, stop);
        if (stop === to) break;
        i = stop + 1;
        if (buf[stop] === BACKSLASH) {
          this.escape = 1;
          this.keyEscaped = true;
          if (this.keyKept) this.keepKey(buf, stop, stop + 1);
        } else if (this.stringIsKey) {
          this.endKey();
          this.state = COLON;
        } else {
          this.valueEnded(buf, i);
        }
        continue;
      }
      const b = buf[i]!;
      if (state === NUMBER) {
        if (isNumberByte(b)) i += 1;
        else this.valueEnded(buf, i); // the byte is the next token's: not consumed
        continue;
      }
      i += 1;
      if (state === LITERAL) this.scanLiteral(b, buf, i);
      else if (!isSpace(b)) this.scanToken(state, b, buf, i);
      if (this.state === FAILED) return;
    }
    if (this.capturing) this.keepCapture(buf, this.captureFrom, to);
  }

  /** The input ended: a top-level number still open is complete; anything else open is cut short. */
  end(): JsonScanEnd {
    if (this.state === NUMBER && this.depth === 0) this.valueEnded(null, 0);
    const failed = this.state === FAILED;
    return { top: this.top, complete: this.state === DONE || (failed && this.completeBeforeFailure), failed };
  }

  private fail(): void {
    if (this.state === DONE) this.completeBeforeFailure = true;
    this.state = FAILED;
    this.dropCapture();
  }

  /** The first quote or backslash in buf[stop, to), else `to`: each found once per chunk and reused until passed. */
  private nextQuoteOrBackslash(buf: Uint8Array, stop: number, to: number): number {
    if (this.quoteAt !== -1 && this.quoteAt < stop) this.quoteAt = buf.indexOf(QUOTE, stop);
    if (this.backslashAt !== -1 && this.backslashAt < stop) this.backslashAt = buf.indexOf(BACKSLASH, stop);
    const q = this.quoteAt === -1 || this.quoteAt >= to ? to : this.quoteAt;
    const e = this.backslashAt === -1 || this.backslashAt >= to ? to : this.backslashAt;
    return Math.min(q, e);
  }

  /** A byte after a backslash, or a hex digit of a \u escape: false when it cannot be. */
  private scanEscape(b: number): boolean {
    if (this.escape === 1) {
      if (b === 0x75) this.escape = 5;
      else if (SIMPLE_ESCAPES.has(b)) this.escape = 0;
      else return false;
    } else {
      if (!isHex(b)) return false;
      this.escape = this.escape === 2 ? 0 : this.escape - 1;
    }
    return true;
  }

  /** A byte of true, false or null (`i`: just past it). */
  private scanLiteral(b: number, buf: Uint8Array, i: number): void {
    const word = this.literal!;
    if (b !== word[this.literalAt]) return this.fail();
    this.literalAt += 1;
    if (this.literalAt === word.length) this.valueEnded(buf, i);
  }

  /** A byte other than whitespace between tokens (`i`: just past it): a value's first byte, or punctuation. */
  private scanToken(state: number, b: number, buf: Uint8Array, i: number): void {
    switch (state) {
      case VALUE_OR_CLOSE: // ']' or the first element
        if (b === 0x5d) this.close(ARRAY, buf, i);
        else this.beginValue(b, buf, i - 1);
        break;
      case VALUE:
        this.beginValue(b, buf, i - 1);
        break;
      case KEY_OR_CLOSE:
        if (b === 0x7d) this.close(OBJECT, buf, i);
        else if (b === QUOTE) this.beginKey();
        else return this.fail();
        break;
      case KEY:
        if (b === QUOTE) this.beginKey();
        else return this.fail();
        break;
      case COLON:
        if (b === 0x3a) this.state = VALUE;
        else return this.fail();
        break;
      case AFTER:
        if (b === 0x2c) this.state = this.kinds[this.depth - 1] === OBJECT ? KEY : VALUE;
        else if (b === 0x7d) this.close(OBJECT, buf, i);
        else if (b === 0x5d) this.close(ARRAY, buf, i);
        else return this.fail();
        break;
      default: // DONE: only whitespace may follow the top-level value
        return this.fail();
    }
  }

  private beginValue(b: number, buf: Uint8Array, at: number): void {
    const depth = this.depth;
    if (depth === 0) this.top = b === 0x7b ? 'object' : b === 0x5b ? 'array' : 'scalar';
    if (!this.capturing && depth <= this.pathDepth) {
      const path = this.match(depth);
      if (path !== -1) {
        this.capturing = true;
        this.capturePath = path;
        this.captureDepth = depth;
        this.captureFrom = at;
        this.captureParts = [];
        this.captureLength = 0;
        this.captureOverflow = false;
      }
    }
    if (b === 0x7b || b === 0x5b) {
      if (depth >= this.limits.maxDepth) return this.fail();
      this.kinds[depth] = b === 0x7b ? OBJECT : ARRAY;
      if (depth < this.pathDepth) this.steps[depth] = b === 0x5b ? ITEM : null;
      this.depth = depth + 1;
      this.state = b === 0x7b ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
    } else if (b === QUOTE) {
      this.stringIsKey = false;
      this.keyKept = false;
      this.state = STRING;
    } else if (b === 0x2d || (b >= 0x30 && b <= 0x39)) {
      this.state = NUMBER;
    } else if (LITERALS[b] !== undefined) {
      this.literal = LITERALS[b]!;
      this.literalAt = 1;
      this.state = LITERAL;
    } else {
      this.fail();
    }
  }

  /** The index of the path the value at this depth sits on, or -1. */
  private match(depth: number): number {
    for (let p = 0; p < this.paths.length; p++) {
      const path = this.paths[p]!;
      if (path.length !== depth) continue;
      let k = 0;
      while (k < depth && this.steps[k] === path[k]) k++;
      if (k === depth) return p;
    }
    return -1;
  }

  private beginKey(): void {
    this.stringIsKey = true;
    this.keyKept = this.depth <= this.pathDepth;
    this.keyLength = 0;
    this.keyOverflow = false;
    this.keyEscaped = false;
    this.state = STRING;
  }

  private keepKey(buf: Uint8Array, from: number, to: number): void {
    const length = to - from;
    if (this.keyOverflow || this.keyLength + length > this.keyBytes.length) {
      this.keyOverflow = true;
      return;
    }
    const keyBytes = this.keyBytes;
    let at = this.keyLength;
    for (let k = from; k < to; k++) keyBytes[at++] = buf[k]!;
    this.keyLength = at;
  }

  private endKey(): void {
    if (!this.keyKept) return;
    const level = this.depth - 1;
    let key: string | null = null;
    if (this.keyOverflow) {
      key = null;
    } else if (!this.keyEscaped) {
      // The usual case: compare the raw bytes with the keys the paths name at this level, decoding nothing.
      const candidates = this.keysAt[level]!;
      for (let c = 0; c < candidates.length && key === null; c++) {
        const bytes = candidates[c]!.bytes;
        if (bytes.length !== this.keyLength) continue;
        let k = 0;
        while (k < bytes.length && bytes[k] === this.keyBytes[k]) k++;
        if (k === bytes.length) key = candidates[c]!.key;
      }
    } else {
      try {
        key = JSON.parse(`"${utf8.decode(this.keyBytes.subarray(0, this.keyLength))}"`) as string;
      } catch {
        key = null;
      }
    }
    this.steps[level] = key;
  }

  private close(kind: number, buf: Uint8Array, end: number): void {
    if (this.kinds[this.depth - 1] !== kind) return this.fail();
    this.depth -= 1;
    this.valueEnded(buf, end);
  }

  /** A value ended just before `end` in `buf` (null: at the end of the input). */
  private valueEnded(buf: Uint8Array | null, end: number): void {
    if (this.capturing && this.depth === this.captureDepth) {
      if (buf !== null) this.keepCapture(buf, this.captureFrom, end);
      this.finishCapture();
    }
    this.state = this.depth === 0 ? DONE : AFTER;
    if (this.depth === 1 && this.kinds[0] === ARRAY) this.onElementEnd?.();
  }

  private keepCapture(buf: Uint8Array, from: number, to: number): void {
    if (this.captureOverflow || to <= from) return;
    const length = to - from;
    if (this.captureLength + length > this.limits.maxCaptureBytes) {
      this.captureOverflow = true;
      this.captureParts = [];
      this.captureLength = 0;
      return;
    }
    this.captureParts.push(new Uint8Array(buf.subarray(from, to))); // a copy: the caller may reuse its chunk
    this.captureLength += length;
  }

  private finishCapture(): void {
    const { captureParts: parts, capturePath: path, captureOverflow: overflow } = this;
    this.dropCapture();
    if (overflow) return;
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(parts.length === 1 ? parts[0]! : Buffer.concat(parts)));
    } catch {
      return;
    }
    this.onValue(path, value);
  }

  private dropCapture(): void {
    this.capturing = false;
    this.captureParts = [];
    this.captureLength = 0;
    this.captureOverflow = false;
  }
}
