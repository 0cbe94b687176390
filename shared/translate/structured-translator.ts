// What every structured translator (harnesses/<slug>/translator.ts) starts from: the session id it has seen, the
// directory relative tool paths resolve against, and the summary `finish` returns. Kept here once so each
// translator holds only what its harness's stream needs; reading a record stays the translator's own (each stream
// has its own envelope), except the common `session_id`-on-every-record one, `sessionRecord`.
import { z } from 'zod';
import type { DraftEvent } from '../events.ts';
import type { SessionReports, SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../adapter.ts';
import { obj } from './json.ts';
import type { JsonObject } from './json.ts';

/** A record's `session_id`: absent, or a non-empty string (an empty one names no session: the record is malformed). */
export const SessionIdField = z.string().min(1).optional();

export abstract class StructuredTranslator implements SessionTranslator {
  /** The harness's session id, once a record has named it: stamped on every event after that. */
  protected session: string | undefined;
  /** Where relative tool paths resolve: the run's workdir, until the harness reports its own. */
  protected cwd: string | undefined;
  /** The session's summary so far, which `summary` hands out (Copilot's, made only at the end, is its own). */
  protected result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext = {}) {
    this.cwd = context.workdir;
  }

  abstract line(line: StdoutLine): DraftEvent[];
  abstract finish(reports?: SessionReports): { events: DraftEvent[]; result: SessionResult };

  sessionId(): string | undefined {
    return this.session;
  }

  /** What `finish` returns: its last events and the result, which names the session when one was seen. */
  protected summary(events: DraftEvent[]): { events: DraftEvent[]; result: SessionResult } {
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  /**
   * For streams whose every record may carry `session_id`: the line's JSON object, after taking its session id;
   * undefined (publish the line as `unknown`) for a line that is no object or whose `session_id` is malformed.
   */
  protected sessionRecord(line: StdoutLine): JsonObject | undefined {
    const record = obj(line.json);
    const sessionId = SessionIdField.safeParse(record?.session_id);
    if (!record || !sessionId.success) return undefined;
    if (sessionId.data) this.session = sessionId.data;
    return record;
  }
}
