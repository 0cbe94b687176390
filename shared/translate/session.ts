// The harness-agnostic half of translation (spec: "Event reporting"): stamps events, turns lines an adapter
// cannot see (truncated, non-JSON where JSON is expected) into `unknown`, stderr into `warning` as it arrives,
// and a non-zero exit into a terminal `error` that carries the harness's own failure output. Pure: no I/O.
import type { DraftEvent, HarnessEvent } from '../events.ts';
import type { HarnessAdapter, SessionReports, SessionResult, SessionTranslator, TranslatorContext } from '../adapter.ts';
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

/**
 * Keeps references to the last lines seen (no copying on the hot path); the bounded text is only built when a
 * failure message needs it.
 */
class TailBuffer {
  private readonly ring: string[] = [];
  private next = 0;
  private readonly limit: number;
  private readonly maxLines: number;
  constructor(limit: number, maxLines = 64) {
    this.limit = limit;
    this.maxLines = maxLines;
  }
  add(line: string): void {
    if (this.ring.length < this.maxLines) this.ring.push(line);
    else this.ring[this.next] = line;
    this.next = (this.next + 1) % this.maxLines;
  }
  text(): string {
    const ordered = this.ring.length < this.maxLines ? this.ring : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    // Whole lines from the end while they fit; a single line longer than the limit keeps its end.
    const kept: string[] = [];
    let size = 0;
    for (let i = ordered.length - 1; i >= 0; i--) {
      const line = ordered[i]!;
      if (size + line.length + 1 > this.limit) {
        if (kept.length === 0) kept.push(line.slice(line.length - this.limit));
        break;
      }
      kept.push(line);
      size += line.length + 1;
    }
    return kept.reverse().join('\n');
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
  /** Last timestamp string and the millisecond it was made for: lines arrive far faster than 1/ms. */
  private lastMs = -1;
  private lastStamp = '';

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
  finish(exit: ExitStatus, reports: SessionReports = {}): { events: HarnessEvent[]; summary: SessionSummary } {
    if (this.finished) throw new Error('TranslationSession.finish called twice');
    this.finished = true;
    const { events: drafts, result } = this.translator.finish(reports);
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
    const now = this.clock.now();
    const ms = now.getTime();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastStamp = now.toISOString();
    }
    const timestamp = this.lastStamp;
    const sessionId = this.translator.sessionId();
    return drafts.map((draft) => {
      this.counts[draft.type] = (this.counts[draft.type] ?? 0) + 1;
      // Key order on the wire: type, timestamp, session_id, then the type's own fields (the spread repeats
      // `type` with the same value, which keeps its first position).
      const fields = draft as object;
      if (draft.type === 'system' || sessionId === undefined) return { type: draft.type, timestamp, ...fields } as HarnessEvent;
      return { type: draft.type, timestamp, session_id: sessionId, ...fields } as HarnessEvent;
    });
  }
}
