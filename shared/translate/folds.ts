// How a structured translator documents the records it folds without an event of their own (issue 19: "no line
// lost: each input line is accounted for by an event or a documented fold"). Each harness lists them in
// `harnesses/<slug>/folds.ts`; the property suite (harnesses/translators.property.test.ts) checks that a line that
// yields nothing, at its arrival or later, is one of them or changed what the session reported.
// A record that yields nothing now but whose content comes out later (a tool call waiting for its result, a text
// delta joined at the next record) needs no fold: the suite sees its effect by translating the stream without it.

type Literal = string | number | boolean | null;

/** A partial record shape: every key must match; a list gives alternatives; an object matches nested. */
export interface FoldPattern {
  readonly [key: string]: Literal | readonly Literal[] | FoldPattern;
}

export interface StreamContext {
  /** The records before this one, in order. */
  before: readonly unknown[];
  /** The records after this one, in order. */
  after: readonly unknown[];
}

export interface RecordFold {
  match: FoldPattern;
  /** What the pattern cannot say, from the record and the others around it in the stream (parsed, or undefined). */
  when?: (record: Readonly<Record<string, unknown>>, stream: StreamContext) => boolean;
  /**
   * `silent`: the record carries nothing an event or the session summary can express (status pings, partial
   * deltas whose complete record follows); it never yields an event.
   * `restated`: context or summary (session start, terminal result) that other records carry too: it may change
   * nothing (the model named again in the result; a second result replacing the first).
   */
  kind: 'silent' | 'restated';
  why: string;
}

function matches(pattern: FoldPattern, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  for (const [key, expected] of Object.entries(pattern)) {
    const actual = record[key];
    if (Array.isArray(expected)) {
      if (!(expected as readonly Literal[]).includes(actual as Literal)) return false;
    } else if (typeof expected === 'object' && expected !== null) {
      if (!matches(expected as FoldPattern, actual)) return false;
    } else if (actual !== expected) {
      return false;
    }
  }
  return true;
}

/** The fold the record at `index` of a parsed stream falls under, if any. */
export function foldOf(folds: readonly RecordFold[], stream: readonly unknown[], index: number): RecordFold | undefined {
  const record = stream[index];
  const context = (): StreamContext => ({ before: stream.slice(0, index), after: stream.slice(index + 1) });
  return folds.find((fold) => matches(fold.match, record) && (fold.when === undefined || fold.when(record as Record<string, unknown>, context())));
}
