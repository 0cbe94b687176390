// Qwen Code `-o stream-json` -> normalized events. Claude-Code-shaped records (system/init, assistant, user,
// result) with `system/*` payloads under `data`, and subagents that run in the background: the `agent` result
// only says it launched; task_notification reports the end.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { arr, bool, compact, contentText, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { mapQwenCall, qwenToolKind, unknownCall } from './map-qwen-tools.ts';
import type { QwenCall } from './map-qwen-tools.ts';
import { qwenTokens } from './usage.ts';

export class QwenTranslator implements SessionTranslator {
  private session: string | undefined;
  private cwd: string | undefined;
  private readonly calls = new Map<string, QwenCall>();
  private readonly tasks = new Map<string, { taskId: string; name?: string; ended: boolean }>();
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    this.session = str(record.session_id) ?? this.session;
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'user':
        return this.user(record);
      case 'stream_event':
        // goal_state snapshots and partial deltas: the complete assistant record follows; nothing to emit.
        return [];
      case 'result':
        return this.terminal(record);
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const call of this.calls.values()) if (qwenToolKind(call.name) !== 'subagent') events.push(mapQwenCall(call, undefined, this.cwd) ?? unknownCall(call));
    this.calls.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private system(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const data = obj(record.data);
    switch (record.subtype) {
      case 'init':
      case 'session_start':
        this.cwd = str(record.cwd) ?? str(data?.cwd) ?? this.cwd;
        this.result.reported_model = str(record.model) ?? str(data?.model);
        return [];
      case 'task_started': {
        const taskId = str(data?.task_id);
        if (!taskId) return [unknownLine(line)];
        const name = str(data?.subagent_type) ?? str(data?.description);
        const toolUseId = str(data?.tool_use_id);
        if (toolUseId) this.tasks.set(toolUseId, { taskId, name, ended: false });
        return [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: taskId, subagent_name: name })];
      }
      case 'task_notification': {
        const taskId = str(data?.task_id);
        const status = str(data?.status);
        if (!taskId || !status) return [unknownLine(line)];
        const toolUseId = str(data?.tool_use_id);
        const task = toolUseId ? this.tasks.get(toolUseId) : undefined;
        if (toolUseId) this.tasks.delete(toolUseId);
        const ok = status === 'completed';
        return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: taskId, subagent_name: task?.name, is_success: ok })];
      }
      default:
        return [unknownLine(line)];
    }
  }

  private assistant(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const blocks = arr(obj(record.message)?.content);
    if (!blocks) return [unknownLine(line)];
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      if (block?.type === 'text' && typeof block.text === 'string') {
        if (block.text) out.push({ type: 'agent', message: block.text });
      } else if (block?.type === 'thinking' && typeof block.thinking === 'string') {
        if (block.thinking) out.push({ type: 'reasoning', message: block.thinking });
      } else if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string' && obj(block.input)) {
        this.calls.set(block.id, { id: block.id, name: block.name, input: obj(block.input)!, block });
      } else {
        out.push(unknownValue(raw));
      }
    }
    return out;
  }

  private user(record: JsonObject): DraftEvent[] {
    const blocks = arr(obj(record.message)?.content);
    if (!blocks) return [];
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      // Text blocks are prompt echoes, subagent prompts and "Background agent … completed." notices.
      if (block?.type !== 'tool_result') continue;
      const id = str(block.tool_use_id);
      const call = id ? this.calls.get(id) : undefined;
      if (!id || !call) {
        out.push(unknownValue(block));
        continue;
      }
      this.calls.delete(id);
      const outcome = { isError: bool(block.is_error) ?? false, content: block.content, block };
      if (qwenToolKind(call.name) === 'subagent') {
        const task = this.tasks.get(id);
        if (task && !outcome.isError) continue; // launched in the background: task_notification ends it
        this.tasks.delete(id);
        const ok = !outcome.isError;
        const end: DraftEvent = compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: task?.taskId ?? call.id, subagent_name: task?.name ?? str(call.input.subagent_type), is_success: ok });
        out.push(...(task ? [end] : [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: call.id, subagent_name: str(call.input.subagent_type) }), end]));
        continue;
      }
      out.push(mapQwenCall(call, outcome, this.cwd) ?? unknownCall(call, outcome));
    }
    return out;
  }

  private terminal(record: JsonObject): DraftEvent[] {
    const usage = obj(record.usage);
    this.result = {
      ...this.result,
      tokens: usage ? qwenTokens(usage) : this.result.tokens,
      raw_usage: usage ?? this.result.raw_usage,
      is_error: bool(record.is_error),
      final_text: str(record.result),
    };
    if (record.is_error !== true) return [];
    const message = str(obj(record.error)?.message) ?? contentText(record.result) ?? str(record.subtype) ?? 'Qwen Code reported an error';
    return [compact({ type: 'error', message, code: str(record.subtype) })];
  }
}
