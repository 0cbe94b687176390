// Droid `exec -o stream-json` -> normalized events. Records: system/init, message, reasoning (printed twice with
// the same id: emitted once), tool_call, tool_result, error, completion (terminal; absent after an API error).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { compact, obj, str } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { droidToolKind, mapDroidCall, unknownCall } from './map-droid-tools.ts';
import type { DroidCall } from './map-droid-tools.ts';
import { droidTokens } from './usage.ts';

export class DroidTranslator implements SessionTranslator {
  private session: string | undefined;
  private cwd: string | undefined;
  private readonly calls = new Map<string, DroidCall>();
  private readonly reasoningIds = new Set<string>();
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const r = obj(line.json);
    if (!r) return [unknownLine(line)];
    this.session = str(r.session_id) ?? this.session;
    switch (r.type) {
      case 'system':
        if (r.subtype !== 'init') return [unknownLine(line)];
        this.cwd = str(r.cwd) ?? this.cwd;
        this.result.reported_model = str(r.model);
        return [];
      case 'message': {
        const text = str(r.text);
        if (text === undefined) return [unknownLine(line)];
        return r.role === 'assistant' && text.length > 0 ? [{ type: 'agent', message: text }] : []; // user = prompt echo
      }
      case 'reasoning': {
        const text = str(r.text);
        const id = str(r.id);
        if (text === undefined) return [unknownLine(line)];
        if (id && this.reasoningIds.has(id)) return []; // the same block is printed twice
        if (id) this.reasoningIds.add(id);
        return text.length > 0 ? [{ type: 'reasoning', message: text }] : [];
      }
      case 'tool_call': {
        const id = str(r.id);
        const tool = str(r.toolId) ?? str(r.toolName);
        const parameters = obj(r.parameters);
        if (!id || !tool || !parameters) return [unknownLine(line)];
        this.calls.set(id, { id, tool, parameters, record: r });
        return droidToolKind(tool) === 'subagent' ? [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name: str(parameters.subagent_type) })] : [];
      }
      case 'tool_result': {
        const id = str(r.id);
        const call = id ? this.calls.get(id) : undefined;
        if (!id || !call) return [unknownLine(line)];
        this.calls.delete(id);
        if (droidToolKind(call.tool) === 'subagent') {
          const ok = r.isError !== true;
          return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name: str(call.parameters.subagent_type), is_success: ok })];
        }
        return [mapDroidCall(call, r, this.cwd) ?? unknownCall(call, r)];
      }
      case 'error': {
        const message = str(r.message);
        if (message === undefined) return [unknownLine(line)];
        this.result.is_error = true;
        return [compact({ type: 'error', message, code: str(r.source) })];
      }
      case 'completion': {
        const usage = obj(r.usage);
        this.result = { ...this.result, tokens: usage ? droidTokens(usage) : null, raw_usage: usage ?? null, final_text: str(r.finalText), is_error: this.result.is_error ?? false };
        return [];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const call of this.calls.values()) if (droidToolKind(call.tool) !== 'subagent') events.push(mapDroidCall(call, undefined, this.cwd) ?? unknownCall(call));
    this.calls.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }
}
