// Gemini CLI `-o stream-json` -> normalized events (JsonStreamEventType: init, message, tool_use, tool_result,
// error, result). Assistant text arrives as `delta: true` chunks: joined into one agent message, flushed at the
// next record of another kind. Gemini never prints thoughts, so there are no reasoning events.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { geminiToolKind, mapGeminiCall, subagentName, unknownCall } from './map-gemini-tools.ts';
import type { GeminiCall, GeminiOutcome } from './map-gemini-tools.ts';
import { ErrorRecord, GeminiRecord, InitRecord, MessageRecord, ResultRecord, ToolResultRecord, ToolUseRecord } from './records.ts';
import { geminiTokens } from './usage.ts';

export class GeminiTranslator extends StructuredTranslator {
  private text: string[] = [];
  /** Tool calls waiting for their result, by id; a reused id reports the earlier call first (finding 9). */
  private readonly calls = new PendingCalls<GeminiCall, GeminiOutcome>();

  line(line: StdoutLine): DraftEvent[] {
    const parsed = GeminiRecord.safeParse(line.json);
    if (!parsed.success) return [...this.flushText(), unknownLine(line)];
    // The schema's copy holds only the fields it names: the record itself goes on to the record's own schema.
    const record = line.json as JsonObject;
    if (record.type === 'message') {
      const message = MessageRecord.safeParse(record);
      if (message.success && message.data.role === 'assistant') {
        this.text.push(message.data.content);
        return message.data.delta === true ? [] : this.flushText();
      }
    }
    const out = this.flushText();
    out.push(...this.record(record, line));
    return out;
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushText();
    this.calls.flush(events, (call, out) => out.push(...this.unfinished(call)), (outcome) => outcome.raw);
    return this.summary(events);
  }

  /** A call that gets no result: its event without an outcome (a subagent's start is already reported). */
  private unfinished(call: GeminiCall): DraftEvent[] {
    if (geminiToolKind(call.name) === 'subagent') return [];
    return [mapGeminiCall(call, undefined, this.cwd) ?? unknownCall(call)];
  }

  private flushText(): DraftEvent[] {
    if (this.text.length === 0) return [];
    const message = this.text.join('');
    this.text = [];
    return message.length > 0 ? [{ type: 'agent', message }] : [];
  }

  private record(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'init': {
        const init = InitRecord.safeParse(record);
        if (!init.success) return [unknownLine(line)];
        this.session = init.data.session_id ?? this.session;
        this.result.reported_model = init.data.model;
        return [];
      }
      case 'message': {
        const message = MessageRecord.safeParse(record);
        return message.success && message.data.role === 'user' ? [] : [unknownLine(line)]; // the prompt echo
      }
      case 'tool_use': {
        const use = ToolUseRecord.safeParse(record);
        if (!use.success) return [unknownLine(line)];
        const { tool_id: id, tool_name: name, parameters } = use.data;
        const call: GeminiCall = { id, name, parameters, record };
        const out: DraftEvent[] = [];
        const { displaced, result } = this.calls.open(id, call);
        if (displaced) out.push(...this.unfinished(displaced));
        // A subagent produces no records of its own: its start is the call, its end the result.
        if (geminiToolKind(name) === 'subagent') out.push(compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name: subagentName(call) }));
        if (result) out.push(...this.finishCall(call, result));
        return out;
      }
      case 'tool_result': {
        const parsed = ToolResultRecord.safeParse(record);
        // Its call, if any, stays pending and is reported without an outcome.
        if (!parsed.success) return [unknownLine(line)];
        const outcome: GeminiOutcome = { result: parsed.data, raw: record };
        const { call, displaced } = this.calls.close(parsed.data.tool_id, outcome);
        const out: DraftEvent[] = displaced ? [unknownValue(displaced.raw)] : [];
        if (call) out.push(...this.finishCall(call, outcome));
        return out;
      }
      case 'error': {
        const error = ErrorRecord.safeParse(record);
        if (!error.success) return [unknownLine(line)];
        return [{ type: error.data.severity === 'warning' ? 'warning' : 'error', message: error.data.message }];
      }
      case 'result':
        return this.terminal(record, line);
      default:
        return [unknownLine(line)];
    }
  }

  private finishCall(call: GeminiCall, outcome: GeminiOutcome): DraftEvent[] {
    if (geminiToolKind(call.name) === 'subagent') {
      const ok = outcome.result.status === 'success';
      return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: call.id, subagent_name: subagentName(call), is_success: ok })];
    }
    return [mapGeminiCall(call, outcome, this.cwd) ?? unknownCall(call, outcome.raw)];
  }

  private terminal(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ResultRecord.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { status, stats, error } = parsed.data;
    const out: DraftEvent[] = [];
    let tokens = null;
    if (stats !== undefined) {
      const usage = geminiTokens(stats);
      tokens = usage.tokens;
      if (usage.unreadable.length > 0) out.push(unreadableUsageWarning('Gemini CLI', 'result', usage.unreadable));
    }
    this.result = { ...this.result, tokens, raw_usage: stats ?? null, is_error: status !== 'success' };
    if (status === 'success') return out;
    out.push(compact({ type: 'error', message: error?.message ?? 'Gemini CLI reported an error', code: error?.type }));
    return out;
  }
}
