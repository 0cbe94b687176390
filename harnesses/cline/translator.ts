// Cline `--json` -> normalized events. hook_event brackets agents (agent_start/agent_end/agent_error; subagents
// have a parentAgentId); agent_event carries content (text, reasoning, tool) and usage; run_result is terminal.
// Text and reasoning are emitted as soon as they are complete: at content_start when it already carries the whole
// text (3.0.65 does, and closes text before reasoning, so waiting would reorder them), else at content_end.
// Tools are emitted at content_end with their output.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapClineTool } from './map-cline-tools.ts';
import { AgentEventRecord, ClineRecord, ErrorEvent, HookRecord, RunAborted, RunResult, TextStart, ToolEnd, ToolStart } from './records.ts';
import { clineTokens } from './usage.ts';

export const SILENT_AGENT_EVENTS = new Set(['iteration_start', 'iteration_end', 'usage', 'done', 'content_update']);
export const SILENT_HOOKS = new Set(['tool_call', 'tool_result']);

interface Tool {
  name: string;
  input: JsonObject;
}

export class ClineTranslator extends StructuredTranslator {
  /** Tools waiting for their content_end, by call id; a reused id reports the earlier tool first (finding 9). */
  private readonly tools = new PendingCalls<Tool, { record: JsonObject; output: unknown }>();
  private readonly subagents = new Set<string>();
  /** Text already emitted at content_start, per content type, so content_end does not repeat it. */
  private readonly startedText = new Map<string, string>();

  line(line: StdoutLine): DraftEvent[] {
    const parsed = ClineRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    // The schema's copy holds only the fields it names: the record itself goes on to the record's own schema.
    const r = line.json as JsonObject;
    switch (r.type) {
      case 'hook_event':
        return this.hook(r, line);
      case 'agent_event': {
        const e = AgentEventRecord.safeParse(r);
        return e.success ? this.agentEvent(e.data.event.type, r.event as JsonObject, line) : [unknownLine(line)];
      }
      case 'run_result':
        return this.runResult(r, line);
      case 'run_aborted': {
        const aborted = RunAborted.safeParse(r);
        if (!aborted.success) return [unknownLine(line)];
        const { message, reason } = aborted.data;
        return [compact({ type: 'warning', message: `run aborted: ${message ?? reason ?? 'no reason given'}`, code: reason })];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    this.tools.flush(events, (tool, out) => out.push(...this.unfinished(tool)), (result) => result.record);
    return this.summary(events);
  }

  /** A tool whose output never came: its events without an outcome. */
  private unfinished(tool: Tool): DraftEvent[] {
    return mapClineTool(tool.name, tool.input, undefined, this.cwd);
  }

  private runResult(r: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = RunResult.safeParse(r);
    if (!parsed.success) return [unknownLine(line)];
    const { usage, aggregateUsage, text, finishReason, model } = parsed.data;
    const out: DraftEvent[] = [];
    let tokens = null;
    if (usage !== undefined) {
      const reading = clineTokens(usage);
      tokens = reading.tokens;
      if (reading.unreadable.length > 0) out.push(unreadableUsageWarning('Cline', 'run_result', reading.unreadable));
    }
    this.result = {
      ...this.result,
      tokens,
      raw_usage: aggregateUsage ?? usage ?? null,
      final_text: text,
      is_error: finishReason === undefined ? undefined : finishReason !== 'completed',
      reported_model: model?.id,
    };
    return out;
  }

  private hook(r: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = HookRecord.safeParse(r);
    if (!parsed.success) return [unknownLine(line)];
    const { hookEventName: name, agentId, parentAgentId: parent, taskId } = parsed.data;
    if (name === 'agent_start') {
      if (parent === null) {
        this.session ??= taskId;
        return [];
      }
      if (!agentId) return [unknownLine(line)];
      this.subagents.add(agentId);
      return [{ type: 'orchestration', action: 'subagent_started', subagent_id: agentId }];
    }
    if (name === 'agent_end' || name === 'agent_error') {
      if (parent === null) return []; // the main agent's end: run_result reports the verdict
      if (!agentId || !this.subagents.has(agentId)) return [unknownLine(line)]; // the end of an agent never started
      this.subagents.delete(agentId);
      const ok = name === 'agent_end';
      return [{ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: agentId, is_success: ok }];
    }
    return SILENT_HOOKS.has(name) ? [] : [unknownLine(line)];
  }

  private agentEvent(type: string, e: JsonObject, line: StdoutLine): DraftEvent[] {
    if (type === 'content_start') {
      if (e.contentType === 'tool') {
        const start = ToolStart.safeParse(e);
        if (!start.success) return [unknownLine(line)];
        const { displaced, result } = this.tools.open(start.data.toolCallId, { name: start.data.toolName, input: start.data.input });
        const out = displaced ? this.unfinished(displaced) : [];
        if (result) out.push(...mapClineTool(start.data.toolName, start.data.input, result.output, this.cwd));
        return out;
      }
      const text = TextStart.safeParse(e);
      if (!text.success) return [unknownLine(line)];
      const kind = text.data.contentType;
      const message = kind === 'text' ? text.data.text : text.data.reasoning;
      if (!message) return []; // the text comes complete at content_end
      this.startedText.set(kind, message);
      return [{ type: kind === 'text' ? 'agent' : 'reasoning', message }];
    }
    if (type === 'content_end') {
      if (e.contentType === 'text' || e.contentType === 'reasoning') {
        const text = TextStart.safeParse(e);
        const message = text.success ? (text.data.contentType === 'text' ? text.data.text : text.data.reasoning) : undefined;
        if (message === undefined) return [unknownLine(line)];
        const started = this.startedText.get(e.contentType);
        this.startedText.delete(e.contentType);
        if (started === message) return [];
        return message.length > 0 ? [{ type: e.contentType === 'text' ? 'agent' : 'reasoning', message }] : [];
      }
      const end = ToolEnd.safeParse(e);
      if (e.contentType !== 'tool' || !end.success) return [unknownLine(line)];
      const { call, displaced } = this.tools.close(end.data.toolCallId, { record: line.json as JsonObject, output: end.data.output });
      const out: DraftEvent[] = displaced ? [unknownValue(displaced.record)] : [];
      if (!call) return out;
      // An end naming another tool than its start is no outcome of that start: both are shown, neither guessed.
      if (end.data.toolName !== undefined && end.data.toolName !== call.name) out.push(...this.unfinished(call), unknownLine(line));
      else out.push(...mapClineTool(call.name, call.input, end.data.output, this.cwd));
      return out;
    }
    if (type === 'error') {
      const error = ErrorEvent.safeParse(e);
      return error.success ? [compact({ type: 'error', message: error.data.error.message, code: error.data.error.name })] : [unknownLine(line)];
    }
    return SILENT_AGENT_EVENTS.has(type) ? [] : [unknownLine(line)];
  }
}
