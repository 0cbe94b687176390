// Cursor `-p --output-format stream-json` -> normalized events, record by record.
// Record types: shared/reference/harnesses.md section 8 "Stream records" (cursor.com output-format doc plus lines
// captured from a real run in ZhengyiLuo/AgentsServer). Every type listed there is handled here; any other record,
// or a documented one whose fields fail their zod schema, becomes `unknown`. Tool calls are paired by call_id
// (shared/translate/pending-calls.ts): none is lost, none reported twice.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { SessionIdField, StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapToolCall, readOutcome, sameCall, unknownToolEvent } from './map-cursor-tools.ts';
import type { CursorToolCall } from './map-cursor-tools.ts';
import { readCursorUsage } from './usage.ts';

const text = z.string();
// z.object: extra keys are accepted and left out of the parsed copy; what is passed on (tool arguments, outcomes,
// usage) is the raw value, so `unknown` events and raw usage keep every field.
const SystemInit = z.object({ cwd: text.optional(), model: text.optional() });
const ShellTimeout = z.object({ aborted_count: z.int().nonnegative(), timeout_ms: z.int().nonnegative() });
const ThinkingDelta = z.object({ text });
// Cursor documents (and was recorded sending) assistant content only as an array of text blocks. A string there is
// no shape it reports, so it is `unknown`, not read as a message: reading it made an agent message of whatever a
// damaged record held (fuzz seeds 1024204973, 1593133268 and 777).
const Assistant = z.object({
  message: z.object({ content: z.array(z.object({ type: z.literal('text'), text })) }),
});
const ToolCallRecord = z.object({
  call_id: text.min(1),
  subtype: text,
  tool_call: z.record(text, z.object({ args: z.object({}).optional() })),
});
const Result = z.object({ is_error: z.boolean(), result: text.optional(), subtype: text.optional() });
const Transport = z.object({ attempt: z.int().nonnegative().optional() });
const InteractionRequest = z.object({ query_type: text });

/** A thinking delta whose text the translator keeps (for folds.ts: which records leave a thinking block open). */
export const thinkingDeltaText = (record: unknown): string | undefined =>
  SessionIdField.safeParse((record as JsonObject | null)?.session_id).success ? ThinkingDelta.safeParse(record).data?.text : undefined;

/** Two records under one call_id describe one call when they name the same tool and arguments. */
const identity = (call: CursorToolCall) => JSON.stringify([call.key, call.args]);

export class CursorTranslator extends StructuredTranslator {
  /** Started calls, and the identities of completions that arrived before their start (already reported). */
  private readonly calls = new PendingCalls<CursorToolCall, string>();
  /** `thinking` deltas of the current block, joined into one reasoning event when the block completes. */
  private thinking: string[] = [];

  line(line: StdoutLine): DraftEvent[] {
    const record = this.sessionRecord(line);
    if (!record) return [...this.flushThinking(), unknownLine(line)];
    if (record.type === 'thinking') return this.thinkingRecord(record, line);
    return [...this.flushThinking(), ...this.record(record, line)];
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushThinking();
    // Calls that never completed (the session was killed mid-tool): reported without an outcome. Completions whose
    // start never came were reported when they arrived.
    for (const call of this.calls.drain().calls) events.push(mapToolCall(call, undefined, this.cwd));
    return this.summary(events);
  }

  private record(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'user':
        return []; // the prompt echoed back: nothing happened
      case 'assistant': {
        const parsed = Assistant.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const message = parsed.data.message.content.map((b) => b.text).join('\n');
        return message.length > 0 ? [{ type: 'agent', message }] : [];
      }
      case 'tool_call':
        return this.toolCall(record, line);
      case 'result':
        return this.terminal(record, line);
      case 'retry':
      case 'connection':
        return this.transport(record, line);
      case 'interaction_query':
        return this.interaction(record, line);
      default:
        return [unknownLine(line)];
    }
  }

  private system(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.subtype) {
      case 'init': {
        const parsed = SystemInit.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        this.cwd = parsed.data.cwd ?? this.cwd;
        // `model` is the display name ("Auto", "Claude Sonnet 5 300K High"), the only model Cursor reports.
        this.result.reported_model = parsed.data.model;
        return [];
      }
      case 'background_shell_timeout': {
        const parsed = ShellTimeout.safeParse(record);
        if (!parsed.success) return [unknownLine(line)];
        const { aborted_count: aborted, timeout_ms: timeout } = parsed.data;
        return [{ type: 'warning', message: `${aborted} background shell command(s) aborted after ${timeout} ms`, code: 'background_shell_timeout' }];
      }
      default:
        // Includes `task_notification`: a background-task notice that no event type expresses (kept lossless).
        return [unknownLine(line)];
    }
  }

  private thinkingRecord(record: JsonObject, line: StdoutLine): DraftEvent[] {
    if (record.subtype === 'delta') {
      const parsed = ThinkingDelta.safeParse(record);
      if (!parsed.success) return [unknownLine(line)];
      this.thinking.push(parsed.data.text);
      return [];
    }
    if (record.subtype === 'completed') return this.flushThinking();
    return [...this.flushThinking(), unknownLine(line)];
  }

  private flushThinking(): DraftEvent[] {
    const message = this.thinking.join('');
    this.thinking = [];
    return message.trim().length > 0 ? [{ type: 'reasoning', message }] : [];
  }

  private toolCall(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ToolCallRecord.safeParse(record);
    const entries = parsed.success ? Object.entries(parsed.data.tool_call) : [];
    if (!parsed.success || entries.length !== 1) return [unknownLine(line)];
    const key = entries[0]![0];
    const inner = (record.tool_call as JsonObject)[key] as JsonObject; // raw: the arguments are kept whole
    const callId = parsed.data.call_id;
    const call: CursorToolCall = { callId, key, args: (inner.args as JsonObject | undefined) ?? {}, records: [record] };
    if (parsed.data.subtype === 'started') return this.started(call);
    if (parsed.data.subtype !== 'completed') return [unknownLine(line)];
    return this.completed(call, inner.args !== undefined, inner);
  }

  private started(call: CursorToolCall): DraftEvent[] {
    const answered = this.calls.answeredCall(call.callId);
    if (answered && sameCall(answered, call)) return []; // printed again after its completion
    const { displaced, result: completedAs } = this.calls.open(call.callId, call);
    const out: DraftEvent[] = [];
    if (displaced && sameCall(displaced, call)) call.records = [...displaced.records, ...call.records];
    else if (displaced) out.push(mapToolCall(displaced, undefined, this.cwd)); // a second call under a pending id
    // Completed before it started: already reported, unless this start names another call.
    if (completedAs !== undefined && completedAs !== identity(call)) out.push(mapToolCall(call, undefined, this.cwd));
    return out;
  }

  private completed(record: CursorToolCall, hasArgs: boolean, inner: unknown): DraftEvent[] {
    const pending = this.calls.pending(record.callId);
    // A completion without arguments (a rejected shell call) belongs to its pending start.
    const ownsPending = pending !== undefined && (!hasArgs || sameCall(pending, record));
    const call = ownsPending ? { ...pending, args: hasArgs ? record.args : pending.args, records: [...pending.records, ...record.records] } : record;
    // Closes the pending start, or holds this completion's identity for a start that comes later.
    this.calls.close(record.callId, identity(call));
    const out: DraftEvent[] = [];
    if (pending && !ownsPending) out.push(mapToolCall(pending, undefined, this.cwd)); // another call was pending under this id
    const outcome = readOutcome(obj(inner)?.result);
    out.push(outcome ? mapToolCall(call, outcome, this.cwd) : unknownToolEvent(call));
    return out;
  }

  private terminal(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const out: DraftEvent[] = [];
    if (record.usage !== undefined) {
      const usage = readCursorUsage(record.usage);
      this.result = { ...this.result, tokens: usage?.tokens ?? null, raw_usage: usage ? record.usage : null };
      if (usage && usage.unreadable.length > 0) out.push(unreadableUsageWarning('cursor', 'result.usage', usage.unreadable));
      if (!usage) out.push(unreadableUsageWarning('cursor', 'result', ['usage']));
    }
    const parsed = Result.safeParse(record);
    if (!parsed.success) return [unknownLine(line), ...out];
    const { is_error, result, subtype } = parsed.data;
    this.result = { ...this.result, is_error, final_text: result };
    if (is_error) out.unshift(compact({ type: 'error', message: result ?? 'Cursor reported an error', code: subtype }));
    return out;
  }

  /** `retry` (starting/resuming) and `connection` (reconnecting/reconnected): the backend link wobbling. */
  private transport(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = Transport.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const attempt = parsed.data.attempt;
    const what = `${String(record.type)}/${String(record.subtype)}`;
    switch (what) {
      case 'retry/starting':
      case 'retry/resuming':
      case 'connection/reconnecting':
        return [{ type: 'warning', message: `Cursor ${String(record.type)} ${String(record.subtype)}${attempt !== undefined ? ` (attempt ${attempt})` : ''}`, code: what }];
      case 'connection/reconnected':
        return []; // recovery from the warning above: nothing new to report
      default:
        return [unknownLine(line)];
    }
  }

  /** A question the CLI asks its user (e.g. a permission): in an unattended run that is worth a warning. */
  private interaction(record: JsonObject, line: StdoutLine): DraftEvent[] {
    if (record.subtype === 'request') {
      const parsed = InteractionRequest.safeParse(record);
      if (!parsed.success) return [unknownLine(line)];
      return [{ type: 'warning', message: `Cursor asked for ${parsed.data.query_type} (interaction_query)`, code: 'interaction_query' }];
    }
    if (record.subtype === 'response') return []; // the answer; its effect shows in the tool call that follows
    return [unknownLine(line)];
  }
}
