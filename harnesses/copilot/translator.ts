// Copilot `--output-format json` -> normalized events. Records: {type, data, id, timestamp, parentId, ephemeral,
// agentId (inside subagents)}. Complete records carry what we need, so the ephemeral deltas are skipped:
// assistant.message (text + reasoningText), tool.execution_start/complete, subagent.started/completed/failed,
// and the terminal `result` (session id, exit code). Tokens are only in the usage report file (usage.ts).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionReports, SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { compact, num, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { mapCopilotCall } from './map-copilot-tools.ts';
import type { CopilotCall } from './map-copilot-tools.ts';
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

export class CopilotTranslator implements SessionTranslator {
  private session: string | undefined;
  private readonly cwd: string | undefined;
  private readonly calls = new Map<string, CopilotCall>();
  /** Reasoning already emitted from assistant.message.reasoningText, so assistant.reasoning does not repeat it. */
  private readonly reasoningSeen = new Set<string>();
  private exitCode: number | undefined;
  private resultUsage: unknown = null;
  private reportedModel: string | undefined;

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const r = obj(line.json);
    const type = str(r?.type);
    if (!r || !type) return [unknownLine(line)];
    if (type === 'result') return this.result(r, line);
    const data = obj(r.data);
    if (!data) return [unknownLine(line)];
    switch (type) {
      case 'assistant.message':
        return this.message(data);
      case 'assistant.reasoning': {
        const text = str(data.content);
        if (text === undefined) return [unknownLine(line)];
        if (text.length === 0 || this.reasoningSeen.has(text)) return [];
        this.reasoningSeen.add(text);
        return [{ type: 'reasoning', message: text }];
      }
      case 'tool.execution_start': {
        const id = str(data.toolCallId);
        const name = str(data.toolName);
        const args = obj(data.arguments) ?? {};
        if (!id || !name) return [unknownLine(line)];
        this.calls.set(id, { name, args, start: r });
        return [];
      }
      case 'tool.execution_complete': {
        const id = str(data.toolCallId);
        const call = id ? this.calls.get(id) : undefined;
        if (!id || !call) return [unknownLine(line)];
        this.calls.delete(id);
        const event = mapCopilotCall(call, data, this.cwd);
        return event ? [event] : [];
      }
      case 'subagent.started':
      case 'subagent.completed':
      case 'subagent.failed':
        return this.subagent(type, r, data, line);
      case 'model.call_failure': {
        // One failed model request; Copilot may retry it, so the session's verdict comes from session.error.
        const status = num(data.statusCode);
        const detail = str(data.errorMessage) ?? str(data.failureKind) ?? 'no detail';
        return [{ type: 'warning', message: `model call failed${status === undefined ? '' : ` (HTTP ${status})`}: ${detail}`, code: 'model_call_failure' }];
      }
      case 'session.error':
        return [compact({ type: 'error', message: str(data.message) ?? JSON.stringify(data), code: str(data.errorType) })];
      case 'session.warning':
        return [compact({ type: 'warning', message: str(data.message) ?? JSON.stringify(data), code: str(data.warningType) })];
      default:
        return SILENT.has(type) ? [] : [unknownLine(line)];
    }
  }

  finish(reports: SessionReports = {}): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const call of this.calls.values()) {
      const event = mapCopilotCall(call, undefined, this.cwd);
      if (event) events.push(event);
    }
    this.calls.clear();
    let report: JsonObject | undefined;
    const text = reports[USAGE_REPORT];
    if (text !== undefined) {
      try {
        report = obj(JSON.parse(text));
      } catch {
        report = undefined;
      }
    }
    const tokens = report ? copilotTokens(report) : undefined;
    if (!tokens) events.push({ type: 'warning', message: `no token usage: Copilot's usage report (${USAGE_REPORT}) was ${text === undefined ? 'not written' : 'not in the known shape'}`, code: 'usage_missing' });
    const result: SessionResult = {
      tokens: tokens ?? null,
      raw_usage: { result: this.resultUsage, report: report ?? null },
      reported_cost_usd: null,
      reported_model: str(report?.currentModel) ?? this.reportedModel,
    };
    if (this.session) result.session_id = this.session;
    if (this.exitCode !== undefined) result.is_error = this.exitCode !== 0;
    return { events, result };
  }

  private result(r: JsonObject, line: StdoutLine): DraftEvent[] {
    const session = str(r.sessionId);
    const exit = num(r.exitCode);
    if (!session && exit === undefined) return [unknownLine(line)];
    this.session ??= session;
    this.exitCode = exit;
    this.resultUsage = r.usage ?? null;
    return [];
  }

  private message(data: JsonObject): DraftEvent[] {
    const events: DraftEvent[] = [];
    this.reportedModel = str(data.model) ?? this.reportedModel;
    const reasoning = str(data.reasoningText);
    if (reasoning && !this.reasoningSeen.has(reasoning)) {
      this.reasoningSeen.add(reasoning);
      events.push({ type: 'reasoning', message: reasoning });
    }
    const text = str(data.content);
    if (text && text.trim().length > 0) events.push({ type: 'agent', message: text });
    return events;
  }

  private subagent(type: string, r: JsonObject, data: JsonObject, line: StdoutLine): DraftEvent[] {
    const id = str(r.agentId) ?? str(data.toolCallId);
    if (!id) return [unknownLine(line)];
    const subagent_name = str(data.agentDisplayName) ?? str(data.agentName);
    if (type === 'subagent.started') return [compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name })];
    const ok = type === 'subagent.completed';
    return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name, is_success: ok })];
  }
}
