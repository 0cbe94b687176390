// Gemini CLI `-o stream-json` -> normalized events (JsonStreamEventType: init, message, tool_use, tool_result,
// error, result). Assistant text arrives as `delta: true` chunks: joined into one agent message, flushed at the
// next record of another kind. Gemini never prints thoughts, so there are no reasoning events.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { compact, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { geminiToolKind, mapGeminiCall, unknownCall } from './map-gemini-tools.ts';
import type { GeminiCall } from './map-gemini-tools.ts';
import { geminiTokens } from './usage.ts';

export class GeminiTranslator implements SessionTranslator {
  private session: string | undefined;
  private readonly cwd: string | undefined;
  private text: string[] = [];
  private readonly calls = new Map<string, GeminiCall>();
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [...this.flushText(), unknownLine(line)];
    if (record.type === 'message' && record.role === 'assistant' && typeof record.content === 'string') {
      this.text.push(record.content);
      return record.delta === true ? [] : this.flushText();
    }
    const out = this.flushText();
    out.push(...this.record(record, line));
    return out;
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushText();
    for (const call of this.calls.values()) if (geminiToolKind(call.name) !== 'subagent') events.push(mapGeminiCall(call, undefined, this.cwd) ?? unknownCall(call));
    this.calls.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private flushText(): DraftEvent[] {
    if (this.text.length === 0) return [];
    const message = this.text.join('');
    this.text = [];
    return message.length > 0 ? [{ type: 'agent', message }] : [];
  }

  private record(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'init':
        this.session = str(record.session_id) ?? this.session;
        this.result.reported_model = str(record.model);
        return [];
      case 'message':
        return record.role === 'user' ? [] : [unknownLine(line)]; // the prompt echo
      case 'tool_use': {
        const id = str(record.tool_id);
        const name = str(record.tool_name);
        const parameters = obj(record.parameters);
        if (!id || !name || !parameters) return [unknownLine(line)];
        const call = { id, name, parameters, record };
        this.calls.set(id, call);
        // A subagent produces no records of its own: its start is the call, its end the result.
        return geminiToolKind(name) === 'subagent' ? [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name: str(parameters.agent_name) })] : [];
      }
      case 'tool_result': {
        const id = str(record.tool_id);
        const call = id ? this.calls.get(id) : undefined;
        if (!id || !call) return [unknownLine(line)];
        this.calls.delete(id);
        if (geminiToolKind(call.name) === 'subagent') {
          const ok = record.status === 'success';
          return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name: str(call.parameters.agent_name), is_success: ok })];
        }
        return [mapGeminiCall(call, record, this.cwd) ?? unknownCall(call, record)];
      }
      case 'error': {
        const message = str(record.message);
        if (message === undefined) return [unknownLine(line)];
        return [{ type: record.severity === 'warning' ? 'warning' : 'error', message }];
      }
      case 'result': {
        const stats = obj(record.stats);
        this.result = { ...this.result, tokens: stats ? geminiTokens(stats) : null, raw_usage: stats ?? null, is_error: record.status !== 'success' };
        if (record.status === 'success') return [];
        const error = obj(record.error);
        return [compact({ type: 'error', message: str(error?.message) ?? 'Gemini CLI reported an error', code: str(error?.type) })];
      }
      default:
        return [unknownLine(line)];
    }
  }
}
