// The harness-agnostic half of translation (spec: "Event reporting"): stamps events, turns lines an adapter
// cannot see (truncated, non-JSON where JSON is expected, nested too deep) into `unknown`, stderr into `warning`
// as it arrives, and a non-zero exit into a terminal `error` that carries the harness's own failure output.
// Every event is checked against the HarnessEvent contract before it leaves: one line, whatever its content and
// whatever the adapter makes of it (a throw, an invalid event), costs at most that line, as an `unknown` carrying
// the line's raw record. Pure: no I/O.
import { z } from 'zod';
import { HarnessEvent as HarnessEventSchema, UnknownEvent } from '../events.ts';
import type { DraftEvent, HarnessEvent } from '../events.ts';
import type { HarnessAdapter, SessionReports, SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../adapter.ts';
import type { SplitLine } from './lines.ts';
import { MAX_JSON_DEPTH, nestedDeeperThan, parseJsonLine } from './json-line.ts';
import { TailBuffer } from './tail.ts';
import { compileSchema } from './compiled-schema.ts';
import { StderrGrouper } from './stderr-groups.ts';

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export interface TranslationOptions {
  clock?: Clock;
  /** How much failure output the terminal error keeps (the tail, in characters, per stream). */
  failureTailChars?: number;
}

export interface SessionSummary {
  result: SessionResult;
  exit: ExitStatus;
  /** Counts per event type, for results and verify reports. */
  counts: Record<string, number>;
}

const DEFAULT_TAIL = 4000;
const TRUNCATION_MARKER = (bytes: number) => `…[tcab: line truncated, original ${bytes} bytes]`;
const SESSION_ID = UnknownEvent.shape.session_id;

/**
 * What an adapter may hand over: the HarnessEvent contract without the fields the engine stamps. The engine makes
 * those itself (timestamp from the clock, session id checked once per value), so checking drafts, not stamped
 * events, keeps the contract and halves the cost on the hot path (no timestamp pattern per event). Both checks run
 * as guards compiled from the zod schemas (compiled-schema.ts): the same verdicts without zod's copies.
 */
const STAMPED_FIELDS = ['timestamp', 'session_id'] as const;
export const DraftEventSchema = z.discriminatedUnion(
  'type',
  (HarnessEventSchema.options as readonly z.ZodObject[]).map((variant) =>
    variant.omit(Object.fromEntries(STAMPED_FIELDS.filter((field) => field in variant.shape).map((field) => [field, true])) as Partial<Record<(typeof STAMPED_FIELDS)[number], true>>),
  ) as unknown as typeof HarnessEventSchema.options,
);
const isDraftEvent = compileSchema(DraftEventSchema);
const isHarnessEvent = compileSchema(HarnessEventSchema);

function conforms(guard: (value: unknown) => boolean, value: unknown): boolean {
  try {
    return guard(value);
  } catch {
    // A value the guard cannot walk (a cycle an adapter built, a getter that throws): not an event we can publish.
    return false;
  }
}

/**
 * A JSON copy of something an adapter produced outside any line (its end-of-session events), never a throw; its
 * JSON text when it nests deeper than a line may.
 */
function jsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) {
      const copy: unknown = JSON.parse(text);
      return nestedDeeperThan(copy, MAX_JSON_DEPTH) ? text : copy;
    }
  } catch {
    // cyclic, BigInt, or too deep to serialize
  }
  return `[tcab: unserializable ${typeof value} from the translator]`;
}

export class TranslationSession {
  readonly slug: string;
  private readonly translator: SessionTranslator;
  private readonly clock: Clock;
  private readonly stderrTail: TailBuffer;
  private readonly stdoutTail: TailBuffer;
  /** stderr lines wait here until their diagnostic ends (stderr-groups.ts). */
  private readonly stderrGroups = new StderrGrouper();
  private readonly counts: Record<string, number> = {};
  private finished = false;
  /** Last timestamp string and the millisecond it was made for: lines arrive far faster than 1/ms. */
  private lastMs = -1;
  private lastStamp = '';
  /** The adapter's last session id and whether it satisfies the contract (checked once per new value). */
  private lastSessionId: unknown;
  private lastSessionIdValid = true;

  constructor(adapter: HarnessAdapter, context: TranslatorContext = {}, options: TranslationOptions = {}) {
    this.slug = adapter.slug;
    this.translator = adapter.createTranslator(context);
    this.clock = options.clock ?? systemClock;
    const tail = options.failureTailChars ?? DEFAULT_TAIL;
    this.stderrTail = new TailBuffer(tail);
    this.stdoutTail = new TailBuffer(tail);
  }

  /** One stdout line: adapter events, or `unknown` for a line the adapter never gets to see or cannot map. */
  stdout(line: SplitLine): HarnessEvent[] {
    this.stdoutTail.add(line.text);
    return this.translated(line, (record) => this.translator.line(record));
  }

  /**
   * One line of a `lines` side file (Invocation.sideFiles): the adapter's `sideLine` events, or `unknown` for a line
   * it cannot map (as for stdout). Side lines do not count toward the failure tail: that is what the CLI printed.
   */
  side(name: string, line: SplitLine): HarnessEvent[] {
    return this.translated(line, (record) => (this.translator.sideLine ? this.translator.sideLine(name, record) : null));
  }

  /** A line through the adapter: a truncated line is `unknown` as it came, an adapter that throws costs that line. */
  private translated(line: SplitLine, translate: (record: StdoutLine) => unknown): HarnessEvent[] {
    if (line.truncated) {
      return this.stamp([{ type: 'unknown', raw: line.text + TRUNCATION_MARKER(line.bytes), original_bytes: line.bytes }]);
    }
    if (line.text.length === 0) return [];
    const record: StdoutLine = { text: line.text, json: parseJsonLine(line.text) };
    let drafts: unknown;
    try {
      drafts = translate(record);
    } catch {
      // An adapter that throws on a line costs that line: it is published as it came.
      drafts = null;
    }
    return this.stamp(drafts, record);
  }

  /**
   * One stderr line: surfaced as a warning while the run is in progress (spec), one per diagnostic: the warnings of
   * the diagnostics this line closed (a stack trace or wrapped message is one; blank lines alone are none).
   */
  stderr(line: SplitLine): HarnessEvent[] {
    const text = line.truncated ? line.text + TRUNCATION_MARKER(line.bytes) : line.text;
    this.stderrTail.add(text);
    return this.warnings(this.stderrGroups.push(text));
  }

  /** Whether a stderr diagnostic is open: what a quiet gap on stderr should flush (`stderrIdle`). */
  stderrPending(): boolean {
    return this.stderrGroups.pending();
  }

  /** stderr has been quiet: the open diagnostic, whole, as its warning (`finish` does this too). */
  stderrIdle(): HarnessEvent[] {
    return this.warnings(this.stderrGroups.flush());
  }

  /** A diagnostic's lines as one warning, every byte; a group of blank lines says nothing. */
  private warnings(groups: string[][]): HarnessEvent[] {
    if (groups.length === 0) return [];
    const drafts: DraftEvent[] = [];
    for (const group of groups) if (group[0]!.trim().length > 0) drafts.push({ type: 'warning', message: group.join('\n') });
    return this.stamp(drafts);
  }

  /** End of the session: flushes the adapter and, on a non-zero exit, adds the terminal error. */
  finish(exit: ExitStatus, reports: SessionReports = {}): { events: HarnessEvent[]; summary: SessionSummary } {
    if (this.finished) throw new Error('TranslationSession.finish called twice');
    this.finished = true;
    let drafts: unknown = [];
    let result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };
    let failure: string | undefined;
    try {
      ({ events: drafts, result } = this.translator.finish(reports));
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    // The diagnostic stderr ended with comes before the adapter's last events, as it was printed before the exit.
    const events = [...this.stderrIdle(), ...this.stamp(drafts)];
    if (failure !== undefined) {
      events.push(...this.stamp([{ type: 'warning', message: `the ${this.slug} translator failed at the end of the session (${failure}): its final events and usage are missing`, code: 'translator_failed' }]));
    }
    const failed = exit.code !== 0 || exit.signal !== null;
    if (failed) events.push(...this.stamp([{ type: 'error', message: this.failureMessage(exit) }]));
    return { events, summary: { result, exit, counts: { ...this.counts } } };
  }

  sessionId(): string | undefined {
    return this.currentSessionId();
  }

  private failureMessage(exit: ExitStatus): string {
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const own = this.stderrTail.text().trim() || this.stdoutTail.text().trim();
    return own ? `${this.slug} ${how}:\n${own}` : `${this.slug} ${how} and printed nothing`;
  }

  /** The adapter's session id when it is one the contract accepts; never a reason to lose an event. */
  private currentSessionId(): string | undefined {
    let id: unknown;
    try {
      id = this.translator.sessionId();
    } catch {
      return undefined;
    }
    if (id !== this.lastSessionId) {
      this.lastSessionId = id;
      this.lastSessionIdValid = SESSION_ID.safeParse(id).success;
    }
    return this.lastSessionIdValid ? (id as string | undefined) : undefined;
  }

  /**
   * Stamps drafts and checks each against the contract. A draft that fails it becomes an `unknown` carrying the
   * record it came from: the line's parsed JSON (or its text) for a line, its own JSON copy at the end of a
   * session. All failures of one line share one `unknown`, so a line is never published twice.
   */
  private stamp(drafts: unknown, line?: StdoutLine): HarnessEvent[] {
    const list: readonly unknown[] = Array.isArray(drafts) ? drafts : [drafts];
    if (list.length === 0) return [];
    // The system clock is read as a number: a Date is made only when the millisecond changes.
    const now = this.clock === systemClock ? undefined : this.clock.now();
    const ms = now === undefined ? Date.now() : now.getTime();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastStamp = (now ?? new Date(ms)).toISOString();
    }
    const timestamp = this.lastStamp;
    const sessionId = this.currentSessionId();
    const out: HarnessEvent[] = [];
    let lineStandIn = false;
    for (let i = 0; i < list.length; i++) {
      const draft = list[i];
      if (conforms(isDraftEvent, draft)) {
        out.push(stamped(draft as DraftEvent, timestamp, sessionId));
      } else if (line === undefined) {
        out.push(this.standIn(jsonCopy(draft), timestamp, sessionId));
      } else if (!lineStandIn) {
        lineStandIn = true;
        out.push(this.standIn(line.json === undefined ? line.text : line.json, timestamp, sessionId, line.text));
      }
    }
    for (const event of out) this.counts[event.type] = (this.counts[event.type] ?? 0) + 1;
    return out;
  }

  /** The `unknown` published instead of an event that broke the contract; falls back to text that always fits. */
  private standIn(raw: unknown, timestamp: string, sessionId: string | undefined, text?: string): HarnessEvent {
    const event = stamped({ type: 'unknown', raw } as DraftEvent, timestamp, sessionId);
    if (conforms(isHarnessEvent, event)) return event;
    // e.g. a number JSON.parse read as Infinity (1e999), which is not JSON: the text is the record as printed.
    // Without a line, `raw` is already a JSON copy, so its text exists.
    return stamped({ type: 'unknown', raw: text ?? JSON.stringify(raw) }, timestamp, sessionId);
  }
}

// Key order on the wire: type, timestamp, session_id, then the type's own fields (the spread repeats `type` with
// the same value, which keeps its first position). `system` events never carry a session id.
function stamped(draft: DraftEvent, timestamp: string, sessionId: string | undefined): HarnessEvent {
  const fields = draft as object;
  if (draft.type === 'system' || sessionId === undefined) return { type: draft.type, timestamp, ...fields } as HarnessEvent;
  return { type: draft.type, timestamp, session_id: sessionId, ...fields } as HarnessEvent;
}
