// Cursor `-p --output-format stream-json` -> normalized events, record by record.
// Record types: shared/reference/harnesses.md section 8 "Stream records" (cursor.com output-format doc plus lines
// captured from a real run in ZhengyiLuo/AgentsServer). Every type listed there is handled here; any other record,
// or a documented one whose fields cannot be read, becomes `unknown`.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { bool, compact, contentText, count, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { mapToolCall, readOutcome, unknownToolEvent } from './map-cursor-tools.ts';
import type { CursorToolCall } from './map-cursor-tools.ts';
import { cursorUsage } from './usage.ts';

export class CursorTranslator implements SessionTranslator {
  private session: string | undefined;
  private cwd: string | undefined;
  private readonly calls = new Map<string, CursorToolCall>();
  /** `thinking` deltas of the current block, joined into one reasoning event when the block completes. */
  private thinking: string[] = [];
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [...this.flushThinking(), unknownLine(line)];
    const sid = str(record.session_id);
    if (sid) this.session = sid;
    if (record.type === 'thinking') return this.thinkingRecord(record, line);
    return [...this.flushThinking(), ...this.record(record, line)];
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushThinking();
    // Calls that never completed (the session was killed mid-tool): reported without an outcome.
    for (const call of this.calls.values()) events.push(mapToolCall(call, undefined, this.cwd));
    this.calls.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private record(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'user':
        return []; // the prompt echoed back: nothing happened
      case 'assistant': {
        const text = contentText(obj(record.message)?.content);
        if (text === undefined) return [unknownLine(line)];
        return text.length > 0 ? [{ type: 'agent', message: text }] : [];
      }
      case 'tool_call':
        return this.toolCall(record, line);
      case 'result':
        return this.terminal(record);
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
      case 'init':
        this.cwd = str(record.cwd) ?? this.cwd;
        // `model` is the display name ("Auto", "Claude Sonnet 5 300K High"), the only model Cursor reports.
        this.result.reported_model = str(record.model);
        return [];
      case 'background_shell_timeout': {
        const aborted = count(record.aborted_count);
        const timeout = count(record.timeout_ms);
        if (aborted === undefined || timeout === undefined) return [unknownLine(line)];
        return [{ type: 'warning', message: `${aborted} background shell command(s) aborted after ${timeout} ms`, code: 'background_shell_timeout' }];
      }
      default:
        // Includes `task_notification`: a background-task notice that no event type expresses (kept lossless).
        return [unknownLine(line)];
    }
  }

  private thinkingRecord(record: JsonObject, line: StdoutLine): DraftEvent[] {
    if (record.subtype === 'delta') {
      const text = str(record.text);
      if (text === undefined) return [unknownLine(line)];
      this.thinking.push(text);
      return [];
    }
    if (record.subtype === 'completed') return this.flushThinking();
    return [...this.flushThinking(), unknownLine(line)];
  }

  private flushThinking(): DraftEvent[] {
    const text = this.thinking.join('');
    this.thinking = [];
    return text.trim().length > 0 ? [{ type: 'reasoning', message: text }] : [];
  }

  private toolCall(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const callId = str(record.call_id);
    const body = obj(record.tool_call);
    const keys = body ? Object.keys(body) : [];
    const key = keys.length === 1 ? keys[0]! : undefined;
    const inner = key !== undefined ? obj(body![key]) : undefined;
    if (!callId || key === undefined || !inner) return [unknownLine(line)];
    const known = this.calls.get(callId);
    const call: CursorToolCall = known ?? { callId, key, args: {}, records: [] };
    call.records.push(record);
    call.args = obj(inner.args) ?? call.args;
    if (record.subtype === 'started') {
      this.calls.set(callId, call);
      return [];
    }
    if (record.subtype !== 'completed') return [unknownLine(line)];
    this.calls.delete(callId);
    const outcome = readOutcome(inner.result);
    if (!outcome) return [unknownToolEvent(call)];
    return [mapToolCall(call, outcome, this.cwd)];
  }

  private terminal(record: JsonObject): DraftEvent[] {
    const tokens = cursorUsage(record.usage);
    this.result = {
      ...this.result,
      tokens,
      raw_usage: tokens ? record.usage : null,
      is_error: bool(record.is_error),
      final_text: str(record.result),
    };
    if (record.is_error !== true) return [];
    return [compact({ type: 'error', message: str(record.result) ?? 'Cursor reported an error', code: str(record.subtype) })];
  }

  /** `retry` (starting/resuming) and `connection` (reconnecting/reconnected): the backend link wobbling. */
  private transport(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const attempt = count(record.attempt);
    const what = `${String(record.type)}/${String(record.subtype)}`;
    switch (what) {
      case 'retry/starting':
      case 'retry/resuming':
      case 'connection/reconnecting':
        return [{ type: 'warning', message: `Cursor ${record.type} ${record.subtype}${attempt !== undefined ? ` (attempt ${attempt})` : ''}`, code: what }];
      case 'connection/reconnected':
        return []; // recovery from the warning above: nothing new to report
      default:
        return [unknownLine(line)];
    }
  }

  /** A question the CLI asks its user (e.g. a permission): in an unattended run that is worth a warning. */
  private interaction(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const kind = str(record.query_type);
    if (record.subtype === 'request' && kind !== undefined) {
      return [{ type: 'warning', message: `Cursor asked for ${kind} (interaction_query)`, code: 'interaction_query' }];
    }
    if (record.subtype === 'response') return []; // the answer; its effect shows in the tool call that follows
    return [unknownLine(line)];
  }
}
