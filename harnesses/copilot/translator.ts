// Copilot `--output-format json` -> normalized events. Records: {type, data, id, timestamp, parentId, ephemeral,
// agentId (inside subagents)}. Complete records carry what we need, so the ephemeral deltas are skipped:
// assistant.message (text + reasoningText), tool.execution_start/complete, subagent.started/completed/failed,
// and the terminal `result` (session id, exit code). Tokens are only in the usage report file (usage.ts).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionReports, SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapCopilotCall } from './map-copilot-tools.ts';
import type { CopilotCall, CopilotOutcome } from './map-copilot-tools.ts';
import { AssistantMessage, AssistantReasoning, CopilotRecord, DataRecord, ModelCallFailure, ResultRecord, SessionError, SessionWarning, Subagent, ToolComplete, ToolStart } from './records.ts';
import { copilotTokens } from './usage.ts';

/** The usage report's file name in the run HOME (Invocation.reports). */
export const USAGE_REPORT = 'copilot-usage.json';

/** Progress, streaming deltas and bookkeeping whose content reaches us again in a complete record. */
export const SILENT = new Set([
  'session.skills_loaded', 'session.mcp_servers_loaded', 'session.tools_updated', 'session.info', 'session.background_tasks_changed',
  'session.model_change', 'user.message', 'assistant.turn_start', 'assistant.turn_end', 'assistant.message_start',
  'assistant.message_delta', 'assistant.reasoning_delta', 'assistant.tool_call_delta', 'assistant.idle', 'model.call_start',
  'model.call_finished', 'model.call_final_result', 'tool.execution_partial_result', 'tool.shell_output', 'subagent.configured',
]);

export class CopilotTranslator extends StructuredTranslator {
  /** Tool calls waiting for their completion, by id; a reused id reports the earlier call first (finding 9). */
  private readonly calls = new PendingCalls<CopilotCall, CopilotOutcome & { record: JsonObject }>();
  /** Reasoning already emitted from assistant.message.reasoningText, so assistant.reasoning does not repeat it. */
  private readonly reasoningSeen = new Set<string>();
  private exitCode: number | undefined;
  private resultUsage: unknown = null;
  private reportedModel: string | undefined;

  line(line: StdoutLine): DraftEvent[] {
    const parsed = CopilotRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    // The schema's copy holds only the fields it names: the record itself goes on to the record's own schema.
    const r = line.json as JsonObject;
    const type = parsed.data.type;
    if (type === 'result') return this.terminal(r, line);
    const withData = DataRecord.safeParse(r);
    if (!withData.success) return [unknownLine(line)];
    const { data, agentId } = withData.data;
    switch (type) {
      case 'assistant.message':
        return this.message(data, line);
      case 'assistant.reasoning': {
        const reasoning = AssistantReasoning.safeParse(data);
        if (!reasoning.success) return [unknownLine(line)];
        const text = reasoning.data.content;
        if (text.length === 0 || this.reasoningSeen.has(text)) return [];
        this.reasoningSeen.add(text);
        return [{ type: 'reasoning', message: text }];
      }
      case 'tool.execution_start': {
        const start = ToolStart.safeParse(data);
        if (!start.success) return [unknownLine(line)];
        const call: CopilotCall = { name: start.data.toolName, args: start.data.arguments ?? {}, start: r };
        const { displaced, result } = this.calls.open(start.data.toolCallId, call);
        const out = displaced ? this.unfinished(displaced) : [];
        if (result) out.push(...this.finishCall(call, result));
        return out;
      }
      case 'tool.execution_complete': {
        const complete = ToolComplete.safeParse(data);
        // Its call, if any, stays pending and is reported without an outcome.
        if (!complete.success) return [unknownLine(line)];
        const outcome = { complete: complete.data, raw: data, record: r };
        const { call, displaced } = this.calls.close(complete.data.toolCallId, outcome);
        const out: DraftEvent[] = displaced ? [unknownValue(displaced.record)] : [];
        if (call) out.push(...this.finishCall(call, outcome));
        return out;
      }
      case 'subagent.started':
      case 'subagent.completed':
      case 'subagent.failed':
        return this.subagent(type, agentId, data, line);
      case 'model.call_failure': {
        // One failed model request; Copilot may retry it, so the session's verdict comes from session.error.
        const failure = ModelCallFailure.safeParse(data);
        if (!failure.success) return [unknownLine(line)];
        const { statusCode: status, errorMessage, failureKind } = failure.data;
        const detail = errorMessage ?? failureKind ?? 'no detail';
        return [{ type: 'warning', message: `model call failed${status === undefined ? '' : ` (HTTP ${status})`}: ${detail}`, code: 'model_call_failure' }];
      }
      case 'session.error': {
        const error = SessionError.safeParse(data);
        if (!error.success) return [unknownLine(line)];
        return [compact({ type: 'error', message: error.data.message ?? JSON.stringify(data), code: error.data.errorType })];
      }
      case 'session.warning': {
        const warning = SessionWarning.safeParse(data);
        if (!warning.success) return [unknownLine(line)];
        return [compact({ type: 'warning', message: warning.data.message ?? JSON.stringify(data), code: warning.data.warningType })];
      }
      default:
        return SILENT.has(type) ? [] : [unknownLine(line)];
    }
  }

  finish(reports: SessionReports = {}): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    this.calls.flush(events, (call, out) => out.push(...this.unfinished(call)), (result) => result.record);
    let report: unknown;
    const text = reports[USAGE_REPORT];
    if (text !== undefined) {
      try {
        report = JSON.parse(text);
      } catch {
        report = undefined;
      }
    }
    const usage = copilotTokens(report);
    if (!usage) events.push({ type: 'warning', message: `no token usage: Copilot's usage report (${USAGE_REPORT}) was ${text === undefined ? 'not written' : 'not in the known shape'}`, code: 'usage_missing' });
    else if (usage.unreadable.length > 0) events.push(unreadableUsageWarning('Copilot', USAGE_REPORT, usage.unreadable));
    const reportObject = typeof report === 'object' && report !== null && !Array.isArray(report) ? (report as JsonObject) : undefined;
    const currentModel = typeof reportObject?.currentModel === 'string' ? reportObject.currentModel : undefined;
    const result: SessionResult = {
      tokens: usage?.tokens ?? null,
      raw_usage: { result: this.resultUsage, report: reportObject ?? null },
      reported_cost_usd: null,
      reported_model: currentModel ?? this.reportedModel,
    };
    if (this.session) result.session_id = this.session;
    if (this.exitCode !== undefined) result.is_error = this.exitCode !== 0;
    return { events, result };
  }

  /** A call whose completion never came: its event without an outcome. */
  private unfinished(call: CopilotCall): DraftEvent[] {
    const event = mapCopilotCall(call, undefined, this.cwd);
    return event ? [event] : [];
  }

  private finishCall(call: CopilotCall, outcome: CopilotOutcome): DraftEvent[] {
    const event = mapCopilotCall(call, outcome, this.cwd);
    return event ? [event] : [];
  }

  private terminal(r: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ResultRecord.safeParse(r);
    if (!parsed.success) return [unknownLine(line)];
    const { sessionId: session, exitCode: exit, usage } = parsed.data;
    if (!session && exit === undefined) return [unknownLine(line)];
    this.session ??= session;
    this.exitCode = exit;
    this.resultUsage = usage ?? null;
    return [];
  }

  private message(data: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = AssistantMessage.safeParse(data);
    if (!parsed.success) return [unknownLine(line)];
    const { model, reasoningText: reasoning, content: text } = parsed.data;
    const events: DraftEvent[] = [];
    this.reportedModel = model ?? this.reportedModel;
    if (reasoning && !this.reasoningSeen.has(reasoning)) {
      this.reasoningSeen.add(reasoning);
      events.push({ type: 'reasoning', message: reasoning });
    }
    if (text && text.trim().length > 0) events.push({ type: 'agent', message: text });
    return events;
  }

  private subagent(type: string, agentId: string | undefined, data: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = Subagent.safeParse(data);
    const id = agentId ?? (parsed.success ? parsed.data.toolCallId : undefined);
    if (!parsed.success || !id) return [unknownLine(line)];
    const subagent_name = parsed.data.agentDisplayName ?? parsed.data.agentName;
    if (type === 'subagent.started') return [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name })];
    const ok = type === 'subagent.completed';
    return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name, is_success: ok })];
  }
}
