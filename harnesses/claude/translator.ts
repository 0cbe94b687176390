// Claude Code `-p --output-format stream-json --verbose` -> normalized events, record by record.
// Record types: shared/reference/harnesses.md section 1 "Stream records". Every record type listed there is
// handled here; any other record becomes `unknown` (a new CLI release shows up in `tcab harnesses verify`).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { arr, bool, compact, contentText, num, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { claudeToolKind, mapToolCall, unknownToolEvent } from './map-claude-tools.ts';
import type { ToolCall, ToolOutcome } from './map-claude-tools.ts';
import { claudeUsage } from './usage.ts';

/**
 * System subtypes that carry nothing a normalized event can express: token estimates, status pings, task status
 * patches, and (2.1.3xx) snapshots of the background task list, whose lifecycle task_started/task_notification
 * already report.
 */
export const SILENT_SYSTEM = new Set(['thinking_tokens', 'status', 'task_updated', 'background_tasks_changed']);
export const SKILL_BASE = /^Base directory for this skill: (.+)$/m;

interface PendingSkill {
  call: ToolCall;
  outcome: ToolOutcome;
}

export class ClaudeTranslator implements SessionTranslator {
  private session: string | undefined;
  private cwd: string | undefined;
  private model: string | undefined;
  private readonly calls = new Map<string, ToolCall>();
  /** Skill results wait for the synthetic "Base directory for this skill" text that names the file. */
  private pendingSkill: PendingSkill | undefined;
  /** Subagent task ids by the Task tool_use id, and which ones already reported their end. */
  private readonly tasks = new Map<string, { taskId: string; name?: string; ended: boolean; resultSeen?: boolean }>();
  private lastSyntheticError: string | undefined;
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
    const sid = str(record.session_id);
    if (sid) this.session = sid;

    const out: DraftEvent[] = [];
    const skill = this.pendingSkill;
    if (skill) {
      this.pendingSkill = undefined;
      const base = record.type === 'user' ? this.skillBaseDirectory(record) : undefined;
      if (base !== undefined) {
        out.push(compact({ type: 'skill', path: `${base}/SKILL.md`, skill_name: str(skill.call.input.skill), is_success: true, tool_name: skill.call.name }));
        return out;
      }
      out.push(unknownToolEvent(skill.call, skill.outcome));
    }
    const events = this.record(record, line);
    for (const e of events) out.push(e);
    return out;
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    if (this.pendingSkill) events.push(unknownToolEvent(this.pendingSkill.call, this.pendingSkill.outcome));
    this.pendingSkill = undefined;
    // Calls that never got a result (the session was killed mid-tool): reported without an outcome.
    for (const call of this.calls.values()) {
      const kind = claudeToolKind(call.name);
      if (kind === 'subagent') continue;
      events.push(mapToolCall(call, undefined, this.cwd) ?? unknownToolEvent(call));
    }
    this.calls.clear();
    if (this.model && !this.result.reported_model) this.result.reported_model = this.model;
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private record(record: JsonObject, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'user':
        return this.user(record);
      case 'stream_event':
        // Partial-message deltas (--include-partial-messages): the complete block follows as an `assistant`
        // record, which is what we translate, so the joined message is emitted exactly once.
        return [];
      case 'result':
        return this.terminal(record);
      default:
        return [unknownLine(line)];
    }
  }

  private system(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const subtype = str(record.subtype);
    if (subtype === 'init') {
      this.cwd = str(record.cwd) ?? this.cwd;
      this.model = str(record.model);
      return [];
    }
    if (subtype === 'api_retry') {
      const status = num(record.error_status);
      const error = str(record.error);
      return [
        compact({
          type: 'warning',
          message: `API request failed${status ? ` (HTTP ${status}${error ? ` ${error}` : ''})` : ''}; retry ${num(record.attempt) ?? '?'}/${num(record.max_retries) ?? '?'} in ${Math.round(num(record.retry_delay_ms) ?? 0)} ms`,
          code: error,
        }),
      ];
    }
    if (subtype === 'task_started') {
      const taskId = str(record.task_id);
      const toolUseId = str(record.tool_use_id);
      if (!taskId) return [unknownLine(line)];
      const name = str(record.subagent_type) ?? str(record.description);
      if (toolUseId) this.tasks.set(toolUseId, { taskId, name, ended: false });
      return [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: taskId, subagent_name: name })];
    }
    if (subtype === 'task_notification') {
      const taskId = str(record.task_id);
      const status = str(record.status);
      if (!taskId || !status) return [unknownLine(line)];
      const toolUseId = str(record.tool_use_id);
      const task = toolUseId ? this.tasks.get(toolUseId) : undefined;
      if (task) task.ended = true;
      if (task?.resultSeen) this.tasks.delete(toolUseId!);
      const ok = status === 'completed';
      return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: taskId, subagent_name: task?.name, is_success: ok })];
    }
    if (subtype !== undefined && SILENT_SYSTEM.has(subtype)) return [];
    return [unknownLine(line)];
  }

  private assistant(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const message = obj(record.message);
    const blocks = arr(message?.content);
    if (!message || !blocks) return [unknownLine(line)];
    // A synthetic assistant message with `error` is Claude Code reporting a failed API call (e.g. HTTP 400).
    const apiError = str(record.error);
    if (apiError !== undefined && message.model === '<synthetic>') {
      const text = contentText(blocks) ?? apiError;
      this.lastSyntheticError = text;
      return [{ type: 'error', message: text, code: apiError }];
    }
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      switch (block?.type) {
        case 'text': {
          const text = str(block.text);
          if (text === undefined) out.push(unknownValue(block));
          else if (text.length > 0) out.push({ type: 'agent', message: text });
          break;
        }
        case 'thinking': {
          const text = str(block.thinking);
          if (text === undefined) out.push(unknownValue(block));
          else if (text.length > 0) out.push({ type: 'reasoning', message: text });
          break;
        }
        case 'redacted_thinking':
          break; // encrypted reasoning: no content to show, and its tokens are in usage
        case 'tool_use': {
          const id = str(block.id);
          const name = str(block.name);
          const input = obj(block.input);
          if (!id || !name || !input) out.push(unknownValue(block));
          else this.calls.set(id, { id, name, input, block });
          break;
        }
        default:
          out.push(unknownValue(block ?? raw));
      }
    }
    return out;
  }

  private user(record: JsonObject): DraftEvent[] {
    const blocks = arr(obj(record.message)?.content);
    if (!blocks) return []; // a plain prompt echo
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      if (block?.type !== 'tool_result') continue; // prompt echoes, subagent prompts, skill bodies
      const id = str(block.tool_use_id);
      const call = id ? this.calls.get(id) : undefined;
      if (!id || !call) {
        out.push(unknownValue(block));
        continue;
      }
      this.calls.delete(id);
      const outcome: ToolOutcome = { isError: bool(block.is_error) ?? false, content: block.content, structured: record.tool_use_result, block };
      out.push(...this.finishCall(call, outcome));
    }
    return out;
  }

  private finishCall(call: ToolCall, outcome: ToolOutcome): DraftEvent[] {
    const kind = claudeToolKind(call.name);
    if (kind === 'skill') {
      if (outcome.isError) return [unknownToolEvent(call, outcome)];
      this.pendingSkill = { call, outcome };
      return [];
    }
    if (kind === 'subagent') {
      const task = this.tasks.get(call.id);
      // Since 2.1.3xx subagents run in the background: the Task result only says "Async agent launched"; the
      // subagent's end is its task_notification. A failed launch is still reported here.
      if (task && !task.ended && !outcome.isError) {
        task.resultSeen = true;
        return [];
      }
      this.tasks.delete(call.id);
      if (task?.ended) return [];
      const ok = !outcome.isError;
      const end: DraftEvent = compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: task?.taskId ?? call.id, subagent_name: task?.name ?? str(call.input.subagent_type), is_success: ok });
      if (task) return [end];
      // Older releases print no task_* records: the Task call itself brackets the subagent.
      return [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: call.id, subagent_name: str(call.input.subagent_type) }), end];
    }
    return [mapToolCall(call, outcome, this.cwd) ?? unknownToolEvent(call, outcome)];
  }

  private skillBaseDirectory(record: JsonObject): string | undefined {
    const text = contentText(obj(record.message)?.content);
    const match = text ? SKILL_BASE.exec(text) : null;
    return match ? match[1]!.trim() : undefined;
  }

  private terminal(record: JsonObject): DraftEvent[] {
    const usage = claudeUsage(record);
    this.result = {
      ...this.result,
      tokens: usage.tokens,
      raw_usage: usage.raw,
      reported_cost_usd: num(record.total_cost_usd) ?? null,
      is_error: bool(record.is_error),
      final_text: str(record.result),
    };
    const models = Object.keys(obj(record.modelUsage) ?? {});
    if (models.length > 0) this.result.reported_model = models[0];
    if (record.is_error !== true) return [];
    const message = str(record.result) ?? str(record.subtype) ?? 'Claude Code reported an error';
    if (message === this.lastSyntheticError) return []; // already reported by the synthetic assistant record
    const status = num(record.api_error_status);
    return [compact({ type: 'error', message, code: status !== undefined ? `http_${status}` : str(record.subtype) })];
  }
}
