// The harness-agnostic half of translation (spec: "Event reporting"): stamps events, turns lines an adapter
// cannot see (truncated, non-JSON where JSON is expected) into `unknown`, stderr into `warning` as it arrives,
// and a non-zero exit into a terminal `error` that carries the harness's own failure output. Pure: no I/O.
import type { DraftEvent, HarnessEvent } from '../events.ts';
import type { HarnessAdapter, SessionResult, SessionTranslator, TranslatorContext } from '../adapter.ts';
import type { SplitLine } from './lines.ts';

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
  /** How much failure output the terminal error keeps (the tail, in characters). */
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

/** Keeps the last `limit` characters of a stream of lines without growing. */
class TailBuffer {
  private lines: string[] = [];
  private size = 0;
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  add(line: string): void {
    const clipped = line.length > this.limit ? line.slice(line.length - this.limit) : line;
    this.lines.push(clipped);
    this.size += clipped.length + 1;
    while (this.size > this.limit && this.lines.length > 1) this.size -= this.lines.shift()!.length + 1;
  }
  text(): string {
    return this.lines.join('\n');
  }
}

/** Parses a line only when it can be a JSON object or array: cheap rejection of plain text, never a throw. */
export function parseJsonLine(text: string): unknown {
  let i = 0;
  while (i < text.length && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
  const c = text.charCodeAt(i);
  if (c !== 0x7b /* { */ && c !== 0x5b /* [ */) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class TranslationSession {
  readonly slug: string;
  private readonly translator: SessionTranslator;
  private readonly clock: Clock;
  private readonly stderrTail: TailBuffer;
  private readonly stdoutTail: TailBuffer;
  private readonly counts: Record<string, number> = {};
  private finished = false;

  constructor(adapter: HarnessAdapter, context: TranslatorContext = {}, options: TranslationOptions = {}) {
    this.slug = adapter.slug;
    this.translator = adapter.createTranslator(context);
    this.clock = options.clock ?? systemClock;
    const tail = options.failureTailChars ?? DEFAULT_TAIL;
    this.stderrTail = new TailBuffer(tail);
    this.stdoutTail = new TailBuffer(tail);
  }

  /** One stdout line: adapter events, or `unknown` for a line the adapter never gets to see. */
  stdout(line: SplitLine): HarnessEvent[] {
    this.stdoutTail.add(line.text);
    if (line.truncated) {
      return this.stamp([
        { type: 'unknown', raw: line.text + TRUNCATION_MARKER(line.bytes), original_bytes: line.bytes },
      ]);
    }
    if (line.text.length === 0) return [];
    return this.stamp(this.translator.line({ text: line.text, json: parseJsonLine(line.text) }));
  }

  /** One stderr line: surfaced as a warning while the run is in progress (spec). */
  stderr(line: SplitLine): HarnessEvent[] {
    const text = line.truncated ? line.text + TRUNCATION_MARKER(line.bytes) : line.text;
    this.stderrTail.add(text);
    if (text.trim().length === 0) return [];
    return this.stamp([{ type: 'warning', message: text }]);
  }

  /** End of the session: flushes the adapter and, on a non-zero exit, adds the terminal error. */
  finish(exit: ExitStatus): { events: HarnessEvent[]; summary: SessionSummary } {
    if (this.finished) throw new Error('TranslationSession.finish called twice');
    this.finished = true;
    const { events: drafts, result } = this.translator.finish();
    const events = this.stamp(drafts);
    const failed = exit.code !== 0 || exit.signal !== null;
    if (failed) events.push(...this.stamp([{ type: 'error', message: this.failureMessage(exit) }]));
    return { events, summary: { result, exit, counts: { ...this.counts } } };
  }

  sessionId(): string | undefined {
    return this.translator.sessionId();
  }

  private failureMessage(exit: ExitStatus): string {
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const own = this.stderrTail.text().trim() || this.stdoutTail.text().trim();
    return own ? `${this.slug} ${how}:\n${own}` : `${this.slug} ${how} and printed nothing`;
  }

  private stamp(drafts: DraftEvent[]): HarnessEvent[] {
    if (drafts.length === 0) return [];
    const timestamp = this.clock.now().toISOString();
    const sessionId = this.translator.sessionId();
    return drafts.map((draft) => {
      this.counts[draft.type] = (this.counts[draft.type] ?? 0) + 1;
      // Key order on the wire: type, timestamp, session_id, then the type's own fields.
      const { type, ...fields } = draft;
      if (type === 'system' || sessionId === undefined) return { type, timestamp, ...fields } as HarnessEvent;
      return { type, timestamp, session_id: sessionId, ...fields } as HarnessEvent;
    });
  }
}
