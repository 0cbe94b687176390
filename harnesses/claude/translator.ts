// Claude Code `-p --output-format stream-json --verbose` -> normalized events, record by record.
// Record types: shared/reference/harnesses.md section 1 "Stream records". Every record type listed there is
// handled here; any other record becomes `unknown` (a new CLI release shows up in `tcab harnesses verify`).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact, contentText } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { claudeToolKind, mapToolCall, skillName, subagentType, unknownToolEvent } from './map-claude-tools.ts';
import type { ToolCall, ToolOutcome } from './map-claude-tools.ts';
import { ApiRetryRecord, ClaudeLine, InitRecord, TaskNotificationRecord, TaskStartedRecord, TaskToolResult } from './records.ts';
import { claudeUsage } from './usage.ts';
import { compileSchema } from '../../shared/translate/compiled-schema.ts';
import { assistantContentReader, ClaudeCodeBlock, readToolResults } from '../../shared/translate/anthropic-blocks.ts';
import type { ToolResult, ToolResultSink, ToolUseSink } from '../../shared/translate/anthropic-blocks.ts';

// Each line is read through the record schemas as guards compiled from them: zod's verdicts, without its copies.
const isClaudeLine = compileSchema(ClaudeLine);
const isInitRecord = compileSchema(InitRecord);
const isApiRetryRecord = compileSchema(ApiRetryRecord);
const isTaskStartedRecord = compileSchema(TaskStartedRecord);
const isTaskNotificationRecord = compileSchema(TaskNotificationRecord);
const readAssistantContent = assistantContentReader(ClaudeCodeBlock);
const isTaskToolResult = compileSchema(TaskToolResult);

/**
 * System subtypes that carry nothing a normalized event can express: token estimates, status pings, task status
 * patches, and (2.1.3xx) snapshots of the background task list, whose lifecycle task_started/task_notification
 * already report.
 */
export const SILENT_SYSTEM = new Set(['thinking_tokens', 'status', 'task_updated', 'background_tasks_changed']);
export const SKILL_BASE = /^Base directory for this skill: (.+)$/m;

/**
 * An orchestration event built as its final literal (what compact() would make of it): subagent_name and
 * is_success only when known, keys in the order type, action, subagent_id, subagent_name, is_success.
 */
function subagentEvent(action: 'subagent_started' | 'subagent_completed' | 'subagent_failed', id: string, name: string | undefined, ok: boolean | undefined): DraftEvent {
  if (name === undefined) return ok === undefined ? { type: 'orchestration', action, subagent_id: id } : { type: 'orchestration', action, subagent_id: id, is_success: ok };
  return ok === undefined ? { type: 'orchestration', action, subagent_id: id, subagent_name: name } : { type: 'orchestration', action, subagent_id: id, subagent_name: name, is_success: ok };
}

interface PendingSkill {
  call: ToolCall;
  outcome: ToolOutcome;
}

/** A subagent, by the Task tool_use id that launched it: its task id, and whether its end was reported. */
interface Task {
  taskId: string;
  name?: string;
  ended: boolean;
  resultSeen?: boolean;
}

export class ClaudeTranslator extends StructuredTranslator implements ToolUseSink, ToolResultSink<Extract<ClaudeLine, { type: 'user' }>> {
  private model: string | undefined;
  /**
   * Tool calls waiting for their result, by id; a reused id reports the earlier call first (finding 9). Claude Code
   * never prints a call again after its result, so answered calls are not remembered (nor their raw blocks held).
   */
  private readonly calls = new PendingCalls<ToolCall, ToolOutcome>({ rememberAnswers: 0 });
  /** Skill results wait for the synthetic "Base directory for this skill" text that names the file. */
  private pendingSkill: PendingSkill | undefined;
  private readonly tasks = new Map<string, Task>();
  private lastSyntheticError: string | undefined;

  line(line: StdoutLine): DraftEvent[] {
    const record = line.json;
    if (!isClaudeLine(record)) return [unknownLine(line)];
    if (record.session_id !== undefined) this.session = record.session_id;

    // One output array per line, pushed into all the way down: no intermediate arrays nor spread-pushes.
    const out: DraftEvent[] = [];
    const skill = this.pendingSkill;
    if (skill) {
      this.pendingSkill = undefined;
      const base = record.type === 'user' ? this.skillBaseDirectory(record) : undefined;
      if (base !== undefined) {
        out.push(compact({ type: 'skill', path: `${base}/SKILL.md`, skill_name: skillName(skill.call), is_success: true, tool_name: skill.call.name }));
        return out;
      }
      out.push(unknownToolEvent(skill.call, skill.outcome));
    }
    this.record(record, line, out);
    return out;
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    if (this.pendingSkill) events.push(unknownToolEvent(this.pendingSkill.call, this.pendingSkill.outcome));
    this.pendingSkill = undefined;
    // Calls that never got a result (the session was killed mid-tool) are reported without an outcome; results
    // whose call never came, as they are.
    this.calls.flush(events, (call, out) => this.unfinished(call, out), (outcome) => outcome.block);
    if (this.model && !this.result.reported_model) this.result.reported_model = this.model;
    return this.summary(events);
  }

  /** A call that gets no result: its event without an outcome; a subagent its task records already report. */
  private unfinished(call: ToolCall, out: DraftEvent[]): void {
    if (claudeToolKind(call.name) === 'subagent') {
      if (!this.tasks.has(call.id)) out.push(unknownToolEvent(call));
      return;
    }
    out.push(mapToolCall(call, undefined, this.cwd) ?? unknownToolEvent(call));
  }

  private record(record: ClaudeLine, line: StdoutLine, out: DraftEvent[]): void {
    switch (record.type) {
      case 'system':
        return this.system(record.subtype, line, out);
      case 'assistant':
        return this.assistant(record, line, out);
      case 'user':
        return this.user(record, line, out);
      case 'stream_event':
        // Partial-message deltas (--include-partial-messages): the complete block follows as an `assistant`
        // record, which is what we translate, so the joined message is emitted exactly once.
        return;
      case 'result':
        return this.terminal(record, out);
    }
  }

  /** A system record's own fields are read by its subtype's schema, from the line as printed. */
  private system(subtype: string, line: StdoutLine, out: DraftEvent[]): void {
    const record = line.json;
    if (subtype === 'init') {
      if (!isInitRecord(record)) {
        out.push(unknownLine(line));
        return;
      }
      this.cwd = record.cwd ?? this.cwd;
      this.model = record.model;
      return;
    }
    if (subtype === 'api_retry') {
      if (!isApiRetryRecord(record)) {
        out.push(unknownLine(line));
        return;
      }
      const { error_status: status, error, attempt, max_retries: max, retry_delay_ms: delay } = record;
      const http = status != null ? ` (HTTP ${status}${error ? ` ${error}` : ''})` : '';
      out.push(compact({ type: 'warning', message: `API request failed${http}; retry ${attempt ?? '?'}/${max ?? '?'} in ${delay === undefined ? '?' : Math.round(delay)} ms`, code: error }));
      return;
    }
    if (subtype === 'task_started') {
      if (!isTaskStartedRecord(record)) {
        out.push(unknownLine(line));
        return;
      }
      const { task_id: taskId, tool_use_id: toolUseId } = record;
      const name = record.subagent_type ?? record.description;
      if (toolUseId) this.tasks.set(toolUseId, { taskId, name, ended: false });
      out.push(subagentEvent('subagent_started', taskId, name, undefined));
      return;
    }
    if (subtype === 'task_notification') {
      if (!isTaskNotificationRecord(record)) {
        out.push(unknownLine(line));
        return;
      }
      const { task_id: taskId, tool_use_id: toolUseId, status } = record;
      const task = toolUseId ? this.tasks.get(toolUseId) : undefined;
      if (task) task.ended = true;
      // Remembered even when its start was unreadable, so the Task result does not report the subagent again.
      else if (toolUseId) this.tasks.set(toolUseId, { taskId, ended: true });
      if (task?.resultSeen) this.tasks.delete(toolUseId!);
      const ok = status === 'completed';
      out.push(subagentEvent(ok ? 'subagent_completed' : 'subagent_failed', taskId, task?.name, ok));
      return;
    }
    if (SILENT_SYSTEM.has(subtype)) return;
    out.push(unknownLine(line));
  }

  private assistant(record: Extract<ClaudeLine, { type: 'assistant' }>, line: StdoutLine, out: DraftEvent[]): void {
    const { message, error } = record;
    // A synthetic assistant message with `error` is Claude Code reporting a failed API call (e.g. HTTP 400).
    if (error !== undefined && message.model === '<synthetic>') {
      const text = contentText(message.content);
      if (text === undefined) {
        out.push(unknownLine(line)); // the terminal result still reports the error
        return;
      }
      this.lastSyntheticError = text;
      out.push({ type: 'error', message: text, code: error });
      return;
    }
    readAssistantContent(message.content, out, this);
  }

  /** A call opens: an earlier call still pending under its id is reported first, without outcome (finding 9). */
  toolUse(call: ToolCall, out: DraftEvent[]): void {
    const { displaced, result } = this.calls.open(call.id, call);
    if (displaced) this.unfinished(displaced, out);
    if (result) this.finishCall(call, result, out);
  }

  private user(record: Extract<ClaudeLine, { type: 'user' }>, line: StdoutLine, out: DraftEvent[]): void {
    const { content } = record.message;
    // A skill body that no Skill result is waiting for names a skill we cannot pair: shown as it is.
    if (this.skillBaseDirectory(record) !== undefined) {
      out.push(unknownLine(line));
      return;
    }
    if (typeof content === 'string') return; // a plain prompt echo
    // Text blocks are prompt echoes, subagent prompts and skill bodies.
    readToolResults(content, out, this, record);
  }

  /** A tool result closes its call; one that arrived first is held for it, one it displaces reported unpaired. */
  toolResult(result: ToolResult, out: DraftEvent[], record: Extract<ClaudeLine, { type: 'user' }>): void {
    const outcome: ToolOutcome = { isError: result.isError, content: result.content, structured: record.tool_use_result, block: result.block };
    const { call, displaced } = this.calls.close(result.id, outcome);
    if (displaced) out.push(unknownValue(displaced.block));
    if (call) this.finishCall(call, outcome, out);
  }

  private finishCall(call: ToolCall, outcome: ToolOutcome, out: DraftEvent[]): void {
    const kind = claudeToolKind(call.name);
    if (kind === 'skill') {
      if (outcome.isError) out.push(unknownToolEvent(call, outcome));
      else this.pendingSkill = { call, outcome };
      return;
    }
    if (kind === 'subagent') return this.finishSubagent(call, outcome, out);
    out.push(mapToolCall(call, outcome, this.cwd) ?? unknownToolEvent(call, outcome));
  }

  private finishSubagent(call: ToolCall, outcome: ToolOutcome, out: DraftEvent[]): void {
    const task = this.tasks.get(call.id);
    const name = task?.name ?? subagentType(call);
    // Since 2.1.3xx subagents run in the background: the Task result only says it launched; the subagent's end is
    // its task_notification. A failed launch is still reported here.
    if (task && !task.ended && !outcome.isError) {
      task.resultSeen = true;
      return;
    }
    this.tasks.delete(call.id);
    if (task?.ended) return;
    const launch = outcome.structured;
    if (!task && !outcome.isError && isTaskToolResult(launch) && launch.status === 'async_launched') {
      // Launched, and its task_started was not readable: the start is what this result says; the end is to come.
      const taskId = launch.agentId ?? call.id;
      this.tasks.set(call.id, { taskId, name, ended: false, resultSeen: true });
      out.push(subagentEvent('subagent_started', taskId, name, undefined));
      return;
    }
    const ok = !outcome.isError;
    // Older releases print no task_* records: the Task call itself brackets the subagent.
    if (!task) out.push(subagentEvent('subagent_started', call.id, name, undefined));
    out.push(subagentEvent(ok ? 'subagent_completed' : 'subagent_failed', task?.taskId ?? call.id, name, ok));
  }

  private skillBaseDirectory(record: Extract<ClaudeLine, { type: 'user' }>): string | undefined {
    const text = contentText(record.message.content);
    const match = text ? SKILL_BASE.exec(text) : null;
    return match ? match[1]!.trim() : undefined;
  }

  private terminal(r: Extract<ClaudeLine, { type: 'result' }>, out: DraftEvent[]): void {
    const usage = claudeUsage(r);
    if (usage.unreadable.length > 0) out.push(unreadableUsageWarning('Claude Code', 'result', usage.unreadable));
    this.result = { ...this.result, tokens: usage.tokens, raw_usage: usage.raw, reported_cost_usd: usage.cost, is_error: r.is_error, final_text: r.result };
    const models = typeof r.modelUsage === 'object' && r.modelUsage !== null && !Array.isArray(r.modelUsage) ? Object.keys(r.modelUsage) : [];
    if (models.length > 0) this.result.reported_model = models[0];
    if (r.is_error !== true) return;
    const message = r.result ?? r.subtype ?? 'Claude Code reported an error';
    if (message === this.lastSyntheticError) return; // already reported by the synthetic assistant record
    const status = r.api_error_status;
    out.push(compact({ type: 'error', message, code: status != null ? `http_${status}` : r.subtype }));
  }
}
