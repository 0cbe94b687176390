// Cline `--json` -> normalized events. hook_event brackets agents (agent_start/agent_end/agent_error; subagents
// have a parentAgentId); agent_event carries content (text, reasoning, tool) and usage; run_result is terminal.
// Text and reasoning are emitted as soon as they are complete: at content_start when it already carries the whole
// text (3.0.65 does, and closes text before reasoning, so waiting would reorder them), else at content_end.
// Tools are emitted at content_end with their output.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { compact, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine } from '../../shared/translate/best-effort.ts';
import { mapClineTool } from './map-cline-tools.ts';
import { clineTokens } from './usage.ts';

export const SILENT_AGENT_EVENTS = new Set(['iteration_start', 'iteration_end', 'usage', 'done', 'content_update']);
export const SILENT_HOOKS = new Set(['tool_call', 'tool_result']);

export class ClineTranslator implements SessionTranslator {
  private session: string | undefined;
  private readonly cwd: string | undefined;
  private readonly tools = new Map<string, { name: string; input: JsonObject }>();
  private readonly subagents = new Set<string>();
  /** Text already emitted at content_start, per content type, so content_end does not repeat it. */
  private readonly startedText = new Map<string, string>();
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
    switch (r.type) {
      case 'hook_event':
        return this.hook(r, line);
      case 'agent_event': {
        const e = obj(r.event);
        return e ? this.agentEvent(e, line) : [unknownLine(line)];
      }
      case 'run_result': {
        const usage = obj(r.usage);
        this.result = { ...this.result, tokens: usage ? clineTokens(usage) : null, raw_usage: r.aggregateUsage ?? usage ?? null, final_text: str(r.text), is_error: r.finishReason !== 'completed', reported_model: str(obj(r.model)?.id) };
        return [];
      }
      case 'run_aborted':
        return [compact({ type: 'warning', message: `run aborted: ${str(r.message) ?? str(r.reason) ?? 'no reason given'}`, code: str(r.reason) })];
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    for (const tool of this.tools.values()) events.push(...mapClineTool(tool.name, tool.input, undefined, this.cwd).map((e) => ('is_success' in e ? compact({ ...e, is_success: undefined }) : e)));
    this.tools.clear();
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private hook(r: JsonObject, line: StdoutLine): DraftEvent[] {
    const name = str(r.hookEventName);
    const agentId = str(r.agentId);
    const parent = r.parentAgentId;
    if (name === 'agent_start') {
      if (parent === null) {
        this.session ??= str(r.taskId);
        return [];
      }
      if (!agentId) return [unknownLine(line)];
      this.subagents.add(agentId);
      return [{ type: 'orchestration', action: 'subagent_started', subagent_id: agentId }];
    }
    if (name === 'agent_end' || name === 'agent_error') {
      if (!agentId || !this.subagents.has(agentId)) return []; // the main agent's end: run_result follows
      this.subagents.delete(agentId);
      const ok = name === 'agent_end';
      return [{ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: agentId, is_success: ok }];
    }
    return name !== undefined && SILENT_HOOKS.has(name) ? [] : [unknownLine(line)];
  }

  private agentEvent(e: JsonObject, line: StdoutLine): DraftEvent[] {
    const type = str(e.type);
    if (type === 'content_start') {
      if (e.contentType === 'tool') {
        const id = str(e.toolCallId);
        const name = str(e.toolName);
        const input = obj(e.input);
        if (!id || !name || !input) return [unknownLine(line)];
        this.tools.set(id, { name, input });
        return [];
      }
      if (e.contentType === 'text' || e.contentType === 'reasoning') {
        const text = str(e.contentType === 'text' ? e.text : e.reasoning);
        if (!text) return [];
        this.startedText.set(e.contentType, text);
        return [{ type: e.contentType === 'text' ? 'agent' : 'reasoning', message: text }];
      }
      return [unknownLine(line)];
    }
    if (type === 'content_end') {
      if (e.contentType === 'text' || e.contentType === 'reasoning') {
        const text = str(e.contentType === 'text' ? e.text : e.reasoning);
        if (text === undefined) return [unknownLine(line)];
        const started = this.startedText.get(e.contentType);
        this.startedText.delete(e.contentType);
        if (started === text) return [];
        return text.length > 0 ? [{ type: e.contentType === 'text' ? 'agent' : 'reasoning', message: text }] : [];
      }
      const id = str(e.toolCallId);
      const tool = id ? this.tools.get(id) : undefined;
      if (!id || !tool) return [unknownLine(line)];
      this.tools.delete(id);
      return mapClineTool(tool.name, tool.input, e.output, this.cwd);
    }
    if (type === 'error') {
      const message = str(obj(e.error)?.message);
      return message === undefined ? [unknownLine(line)] : [compact({ type: 'error', message, code: str(obj(e.error)?.name) })];
    }
    return type !== undefined && SILENT_AGENT_EVENTS.has(type) ? [] : [unknownLine(line)];
  }
}
