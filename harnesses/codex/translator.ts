// Codex `exec --json` -> normalized events (record types: shared/reference/harnesses.md section 2).
// Every record is read through a zod schema of the fields used here; one that fails it is `unknown`.
// Items are paired by id (shared/translate/pending-calls.ts): each operation is reported exactly once, when it
// completes, whatever order or repetition the records arrive in.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { itemIdentity, mapCompletedItem, mapUnfinishedItem } from './map-codex-items.ts';
import type { SubagentLifecycle } from './map-codex-items.ts';
import { readCodexUsage } from './usage.ts';

// z.object: extra keys are accepted and left out of the parsed copy; what is passed on (an item, the usage) is the
// raw value, so `unknown` events and raw usage keep every field.
const ThreadStarted = z.object({ thread_id: z.string().min(1) });
/** The `item` of item.* records: completed items may lack an id; started and updated ones are tracked by it. */
const CompletedItem = z.object({ id: z.string().min(1).optional(), type: z.string() });
const OpenItem = z.object({ id: z.string().min(1), type: z.string() });
const TurnCompleted = z.object({ usage: z.record(z.string(), z.unknown()) });
const TurnFailed = z.object({ error: z.object({ message: z.string() }) });
const ErrorRecord = z.object({ message: z.string() });

export class CodexTranslator extends StructuredTranslator {
  /**
   * Items started but not completed (flushed without an outcome if the session dies), and items completed before
   * their start was seen (already reported: the late start is paired with them, not reported again).
   */
  private readonly items = new PendingCalls<JsonObject, string>();
  private lastError: string | undefined;
  /** Each subagent's last reported state, so a wait reports what it changed (issue 41). */
  private readonly subagents: SubagentLifecycle = new Map();
  private readonly unfinished = (item: JsonObject): DraftEvent[] => mapUnfinishedItem(item, this.subagents);

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    switch (record.type) {
      case 'thread.started': {
        const parsed = ThreadStarted.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        this.session = parsed.data.thread_id;
        return [];
      }
      case 'turn.started':
        return [];
      case 'item.started':
      case 'item.updated': {
        // Progress only: the completed item carries the outcome, and one event per operation is emitted then.
        const parsed = OpenItem.safeParse(record.item);
        return parsed.success ? this.progress(parsed.data.id, record.item as JsonObject) : [unknownLine(line)];
      }
      case 'item.completed': {
        const parsed = CompletedItem.safeParse(record.item);
        if (!parsed.success) return [unknownLine(line)];
        const item = record.item as JsonObject;
        const id = parsed.data.id;
        return id === undefined ? mapCompletedItem(item, this.subagents) : this.completed(id, item);
      }
      case 'turn.completed': {
        const parsed = TurnCompleted.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        // Cumulative for the thread: the last report is the session's total (see usage.ts).
        const { tokens, unreadable } = readCodexUsage(record.usage);
        this.result = { ...this.result, tokens, raw_usage: record.usage, is_error: false };
        return unreadable.length > 0 ? [unreadableUsageWarning('codex', 'turn.completed.usage', unreadable)] : [];
      }
      case 'turn.failed': {
        this.result = { ...this.result, is_error: true };
        const parsed = TurnFailed.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const message = parsed.data.error.message;
        return message === this.lastError ? [] : [{ type: 'error', message }];
      }
      case 'error': {
        const parsed = ErrorRecord.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const message = parsed.data.message;
        // "Reconnecting... n/5 (...)" are retries, not failures.
        if (/^Reconnecting\.\.\./.test(message)) return [{ type: 'warning', message }];
        this.lastError = message;
        return [{ type: 'error', message }];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    // Items that never completed (killed mid-command): reported without an outcome. Completions whose start never
    // came were reported when they arrived.
    const events = this.items.drain().calls.flatMap(this.unfinished);
    return this.summary(events);
  }

  /** item.started / item.updated: the same operation replaces its pending state; a different one flushes it. */
  private progress(id: string, item: JsonObject): DraftEvent[] {
    const answered = this.items.answeredCall(id);
    if (answered && itemIdentity(answered) === itemIdentity(item)) return []; // progress printed again after completion
    const { displaced, result: completed } = this.items.open(id, item);
    const out: DraftEvent[] = [];
    if (displaced && itemIdentity(displaced) !== itemIdentity(item)) out.push(...this.unfinished(displaced));
    // Completed before it started: already reported, unless this start describes a different operation.
    if (completed !== undefined && completed !== itemIdentity(item)) out.push(...this.unfinished(item));
    return out;
  }

  private completed(id: string, item: JsonObject): DraftEvent[] {
    // Without a pending start, the completion's identity is held so a late start pairs with it instead of being
    // reported again.
    const identity = itemIdentity(item);
    const { call: started } = this.items.close(id, identity);
    const out: DraftEvent[] = [];
    if (started && itemIdentity(started) !== identity) out.push(...this.unfinished(started));
    out.push(...mapCompletedItem(item, this.subagents));
    return out;
  }
}
