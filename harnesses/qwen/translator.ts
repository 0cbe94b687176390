// Qwen Code `-o stream-json` -> normalized events. Claude-Code-shaped records (system/init, assistant, user,
// result) with `system/*` payloads under `data`, and subagents that run in the background: the `agent` result
// only says it launched; task_notification reports the end. A subagent's own records (parent_tool_use_id = the
// `agent` call) may come before its task_started: their events are held until its start is reported (issue 41).
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapQwenCall, qwenToolKind, subagentType, unknownCall } from './map-qwen-tools.ts';
import type { QwenCall, QwenOutcome } from './map-qwen-tools.ts';
import { AssistantRecord, InitRecord, QwenRecord, ResultRecord, SystemRecord, TaskNotificationRecord, TaskStartedRecord, UserRecord } from './records.ts';
import { qwenTokens } from './usage.ts';
import { assistantContentReader, CompatibleBlock, readToolResults, resultText } from '../../shared/translate/anthropic-blocks.ts';
import type { ToolResult, ToolResultSink, ToolUse, ToolUseSink } from '../../shared/translate/anthropic-blocks.ts';

const readAssistantContent = assistantContentReader(CompatibleBlock);

type Rec = Record<string, unknown>;

/** The `agent` call a subagent's record belongs to; any other value names no subagent. */
const ParentToolUseId = z.string().min(1);

/** The documented text of an `agent` result whose subagent runs on in the background (reference section 4). */
const BACKGROUND_LAUNCH = /^Background agent launched/;

/** A subagent, by the `agent` tool_use id that launched it: its task id, and whether its end was reported. */
interface Task {
  taskId: string;
  name?: string;
  ended: boolean;
  resultSeen?: boolean;
}

export class QwenTranslator extends StructuredTranslator implements ToolUseSink, ToolResultSink<undefined> {
  /** Tool calls waiting for their result, by id; a reused id reports the earlier call first (finding 9). */
  private readonly calls = new PendingCalls<QwenCall, QwenOutcome>();
  private readonly tasks = new Map<string, Task>();
  /** `agent` calls seen, and those whose subagent_started was emitted: a subagent's events never precede it. */
  private readonly agentCalls = new Set<string>();
  private readonly started = new Set<string>();
  /** Events of subagents not started yet, by their `agent` call id, in arrival order. */
  private readonly held = new Map<string, DraftEvent[]>();

  line(line: StdoutLine): DraftEvent[] {
    const parsed = QwenRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    // The schema's copy holds only the fields it names: the record itself goes on to the record's own schema.
    const record = line.json as Rec;
    this.session = parsed.data.session_id ?? this.session;
    const events = this.record(record, line);
    // A subagent's own record before its start was reported: held until then (or the end of the stream).
    const parent = ParentToolUseId.safeParse(record.parent_tool_use_id);
    if (parent.success && this.agentCalls.has(parent.data) && !this.started.has(parent.data) && events.length > 0) {
      const held = this.held.get(parent.data);
      if (held) held.push(...events);
      else this.held.set(parent.data, events);
      return [];
    }
    return events;
  }

  private record(record: Rec, line: StdoutLine): DraftEvent[] {
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'user':
        return this.user(record, line);
      case 'stream_event':
        // goal_state snapshots and partial deltas: the complete assistant record follows; nothing to emit.
        return [];
      case 'result':
        return this.terminal(record, line);
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.calls.flush([], (call, out) => out.push(...this.unfinished(call)), (outcome) => outcome.block);
    // Subagents whose start never came: their events are reported all the same, never lost.
    for (const held of this.held.values()) events.push(...held);
    this.held.clear();
    return this.summary(events);
  }

  /** A subagent_started for the `agent` call `toolUseId`, followed by the subagent's events held until now. */
  private startSubagent(toolUseId: string | undefined, start: DraftEvent): DraftEvent[] {
    if (toolUseId === undefined) return [start];
    this.started.add(toolUseId);
    const held = this.held.get(toolUseId) ?? [];
    this.held.delete(toolUseId);
    return [start, ...held];
  }

  /** A call that gets no result: its event without an outcome; a subagent its task records already report. */
  private unfinished(call: QwenCall): DraftEvent[] {
    if (qwenToolKind(call.name) === 'subagent') return this.tasks.has(call.id) ? [] : [unknownCall(call)];
    return [mapQwenCall(call, undefined, this.cwd) ?? unknownCall(call)];
  }

  private system(record: Rec, line: StdoutLine): DraftEvent[] {
    const system = SystemRecord.safeParse(record);
    if (!system.success) return [unknownLine(line)];
    switch (system.data.subtype) {
      case 'init':
      case 'session_start': {
        const init = InitRecord.safeParse(record);
        if (!init.success) return [unknownLine(line)];
        this.cwd = init.data.cwd ?? init.data.data?.cwd ?? this.cwd;
        this.result.reported_model = init.data.model ?? init.data.data?.model;
        return [];
      }
      case 'task_started': {
        const started = TaskStartedRecord.safeParse(record);
        if (!started.success) return [unknownLine(line)];
        const { task_id: taskId, tool_use_id: toolUseId } = started.data.data;
        const name = started.data.data.subagent_type ?? started.data.data.description;
        if (toolUseId) this.tasks.set(toolUseId, { taskId, name, ended: false });
        return this.startSubagent(toolUseId, compact({ type: 'orchestration', action: 'subagent_started', subagent_id: taskId, subagent_name: name }));
      }
      case 'task_notification': {
        const ended = TaskNotificationRecord.safeParse(record);
        if (!ended.success) return [unknownLine(line)];
        const { task_id: taskId, tool_use_id: toolUseId, status } = ended.data.data;
        const task = toolUseId ? this.tasks.get(toolUseId) : undefined;
        if (task) task.ended = true;
        // Remembered even when its start was unreadable, so the agent result does not report the subagent again.
        else if (toolUseId) this.tasks.set(toolUseId, { taskId, ended: true });
        if (task?.resultSeen) this.tasks.delete(toolUseId!);
        const ok = status === 'completed';
        return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: taskId, subagent_name: task?.name, is_success: ok })];
      }
      default:
        return [unknownLine(line)];
    }
  }

  private assistant(record: Rec, line: StdoutLine): DraftEvent[] {
    const parsed = AssistantRecord.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const out: DraftEvent[] = [];
    readAssistantContent(parsed.data.message.content, out, this);
    return out;
  }

  /** A call opens: an earlier call still pending under its id is reported first, without outcome (finding 9). */
  toolUse(call: ToolUse, out: DraftEvent[]): void {
    if (qwenToolKind(call.name) === 'subagent') this.agentCalls.add(call.id);
    const { displaced, result } = this.calls.open(call.id, call);
    if (displaced) out.push(...this.unfinished(displaced));
    if (result) out.push(...this.finishCall(call, result));
  }

  private user(record: Rec, line: StdoutLine): DraftEvent[] {
    const parsed = UserRecord.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { content } = parsed.data.message;
    if (typeof content === 'string') return []; // a prompt echo
    const out: DraftEvent[] = [];
    // Text blocks are prompt echoes, subagent prompts and "Background agent … completed." notices.
    readToolResults(content, out, this, undefined);
    return out;
  }

  /** A tool result closes its call; one that arrived first is held for it, one it displaces reported unpaired. */
  toolResult(result: ToolResult, out: DraftEvent[]): void {
    const outcome: QwenOutcome = { isError: result.isError, content: result.content, block: result.block };
    const { call, displaced } = this.calls.close(result.id, outcome);
    if (displaced) out.push(unknownValue(displaced.block));
    if (call) out.push(...this.finishCall(call, outcome));
  }

  private finishCall(call: QwenCall, outcome: QwenOutcome): DraftEvent[] {
    if (qwenToolKind(call.name) !== 'subagent') return [mapQwenCall(call, outcome, this.cwd) ?? unknownCall(call, outcome)];
    const task = this.tasks.get(call.id);
    const name = task?.name ?? subagentType(call);
    if (task && !task.ended && !outcome.isError) {
      task.resultSeen = true; // launched in the background: task_notification ends it
      return [];
    }
    this.tasks.delete(call.id);
    if (task?.ended) return [];
    // Launched in the background, and its task_started was not readable: what it became is not known here. Nor is
    // it when the result's text cannot be read (issue 21: a non-string text block was skipped, and a subagent that
    // may only have launched was reported completed).
    const text = task || outcome.isError ? undefined : resultText(outcome.content);
    if (!task && !outcome.isError && (text === 'unreadable' || BACKGROUND_LAUNCH.test(text ?? ''))) return [unknownCall(call, outcome)];
    const ok = !outcome.isError;
    const end: DraftEvent = compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: task?.taskId ?? call.id, subagent_name: name, is_success: ok });
    if (task) return [end];
    return [...this.startSubagent(call.id, compact({ type: 'orchestration', action: 'subagent_started', subagent_id: call.id, subagent_name: name })), end];
  }

  private terminal(record: Rec, line: StdoutLine): DraftEvent[] {
    const parsed = ResultRecord.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const r = parsed.data;
    const out: DraftEvent[] = [];
    let tokens = this.result.tokens;
    if (r.usage !== undefined) {
      const usage = qwenTokens(r.usage);
      tokens = usage.tokens;
      if (usage.unreadable.length > 0) out.push(unreadableUsageWarning('Qwen Code', 'result', usage.unreadable));
    }
    this.result = { ...this.result, tokens, raw_usage: r.usage ?? this.result.raw_usage, is_error: r.is_error, final_text: r.result };
    if (r.is_error !== true) return out;
    const message = r.error?.message ?? r.result ?? r.subtype ?? 'Qwen Code reported an error';
    out.push(compact({ type: 'error', message, code: r.subtype }));
    return out;
  }
}
