// Grok `-p --output-format streaming-json` plus the session's updates.jsonl -> normalized events.
// stdout carries only `text`/`thought` chunks, `end` (session id, usage, cost), `error`, `max_turns_reached` and
// `auto_compact_*`: no tool activity. The session directory's updates.jsonl (an `updates` side file, read line by
// line as Grok writes it) holds the ACP session/update records: message and thought chunks, tool_call /
// tool_call_update (map-grok-tools.ts), and xAI's own subagent_spawned / subagent_finished / turn_completed /
// retry_state. A subagent runs as a session of its own beside the main one (same cwd directory), so its
// updates.jsonl is tailed too: its records carry its own sessionId.
//
// Who owns the text: updates.jsonl. Both sources carry the same chunks, but only updates.jsonl says where one
// message ends (a tool call between two chunks) and whose it is (stdout prints a subagent's answer as main text);
// stdout's chunks would run the text before and after a tool call together. So agent and reasoning events come
// from updates.jsonl (chunks joined per session until that session's next other record), and stdout's `text` /
// `thought` are held only as a fallback: when no updates.jsonl line arrived at all (the file moved in another
// release, or could not be read), they are published at the end, with a warning, so the answer is never lost and
// never published twice. Usage, cost, the verdict and errors are stdout's (`end`, `error`): updates.jsonl's
// turn_completed restates them (its inputTokens include the cached ones).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { grokToolKind, mapGrokCall, spawnedSubagentId, subagentName } from './map-grok-tools.ts';
import type { GrokCall, GrokStatus } from './map-grok-tools.ts';
import { ChunkUpdate, EndRecord, ErrorRecord, RetryState, StdoutRecord, SubagentFinished, SubagentSpawned, TextChunk, ToolCallUpdate, UpdateLine } from './records.ts';
import { grokCost, grokUsage } from './usage.ts';
import type { GrokUsage } from './usage.ts';

/** The side file's name (Invocation.sideFiles). */
export const UPDATES = 'updates';

type TextKind = 'agent' | 'reasoning';
interface TextRun {
  kind: TextKind;
  parts: string[];
}

/** A terminal tool_call_update, held when it arrives before its tool_call. */
interface Terminal {
  status: GrokStatus;
  input: unknown;
  output: unknown;
  record: JsonObject;
}

const TERMINAL = new Set<string>(['completed', 'failed']);
const FAILED_SUBAGENT = new Set(['failed', 'error', 'errored', 'cancelled', 'canceled', 'killed', 'timed_out', 'timeout']);

export class GrokTranslator extends StructuredTranslator {
  /** Tool calls waiting for their terminal update, by session and toolCallId (ids repeat across sessions). */
  private readonly calls = new PendingCalls<GrokCall, Terminal>();
  /** The main session's id in updates.jsonl: stdout's `end` names it; else the first session seen (a subagent starts later). */
  private main: string | undefined;
  /** Chunks of the message or thought each session is writing. */
  private readonly runs = new Map<string, TextRun>();
  /** stdout's text and thoughts, consecutive chunks of one kind joined: the fallback (see above). */
  private readonly stdoutRuns: TextRun[] = [];
  private sideLines = 0;
  /** Subagents reported started, by id: their name. */
  private readonly subagents = new Map<string, string | undefined>();
  /** The main session's last message, while no tool call followed it. */
  private lastText: string | undefined;
  private stopReason: string | undefined;
  private usage: GrokUsage | undefined;
  /** Keys of the spawn_subagent calls opened, oldest first, for subagent_spawned to find its call among the pending. */
  private spawns: string[] = [];

  line(line: StdoutLine): DraftEvent[] {
    const parsed = StdoutRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    const record = line.json as JsonObject;
    const type = parsed.data.type;
    switch (type) {
      case 'text':
      case 'thought': {
        const chunk = TextChunk.safeParse(record);
        if (!chunk.success) return [unknownLine(line)];
        const kind: TextKind = type === 'text' ? 'agent' : 'reasoning';
        const last = this.stdoutRuns.at(-1);
        if (last?.kind === kind) last.parts.push(chunk.data.data);
        else this.stdoutRuns.push({ kind, parts: [chunk.data.data] });
        return [];
      }
      case 'end': {
        const end = EndRecord.safeParse(record);
        if (!end.success) return [unknownLine(line)];
        this.stopReason = end.data.stopReason;
        if (end.data.stopReason === 'EndTurn') this.result.is_error = false;
        else if (end.data.stopReason === 'Cancelled' || end.data.stopReason === 'Refusal') this.result.is_error = true;
        const out = this.spend(end.data);
        if (end.data.sessionId) {
          this.session = end.data.sessionId;
          this.main ??= end.data.sessionId;
        }
        if (end.data.stopReason !== undefined && end.data.stopReason !== 'EndTurn') out.push({ type: 'warning', message: `Grok stopped: ${end.data.stopReason}`, code: 'stop_reason' });
        return out;
      }
      case 'error': {
        const error = ErrorRecord.safeParse(record);
        if (!error.success) return [unknownLine(line)];
        this.result.is_error = true;
        if (error.data.sessionId) this.session = error.data.sessionId;
        return [{ type: 'error', message: error.data.message }, ...this.spend(error.data)];
      }
      case 'max_turns_reached':
        return [{ type: 'warning', message: 'Grok stopped: the maximum number of turns was reached', code: 'max_turns_reached' }];
      default:
        if (type.startsWith('auto_compact_')) {
          // The compaction's own model call is not in `usage` (headless-mode guide, usage notes).
          return [{ type: 'warning', message: `Grok ${type.slice('auto_'.length).replaceAll('_', ' ')}: the compaction's model call is not counted in the reported usage`, code: type }];
        }
        return [unknownLine(line)];
    }
  }

  sideLine(name: string, line: StdoutLine): DraftEvent[] {
    if (name !== UPDATES) return [unknownLine(line)];
    const parsed = UpdateLine.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    this.sideLines += 1;
    const session = parsed.data.params.sessionId;
    this.main ??= session;
    if (session === this.main) this.session ??= session;
    const update = (line.json as { params: { update: JsonObject } }).params.update;
    const kind = parsed.data.params.update.sessionUpdate;
    if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') return this.chunk(session, kind === 'agent_message_chunk' ? 'agent' : 'reasoning', update, line);
    // Any other record of the session ends the message it was writing.
    const out = this.flushRun(session);
    switch (kind) {
      case 'user_message_chunk':
        // The prompt echo (a subagent's: its task).
        return out;
      case 'tool_call':
        out.push(...this.toolCall(session, update, line));
        return out;
      case 'tool_call_update':
        out.push(...this.toolUpdate(session, update, line));
        return out;
      case 'subagent_spawned': {
        const spawned = SubagentSpawned.safeParse(update);
        if (!spawned.success) return [...out, unknownLine(line)];
        const { subagent_id: id, subagent_type: type, description } = spawned.data;
        const name = type ?? description;
        this.subagents.set(id, name);
        this.link(session, id, description);
        out.push(compact({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name: name }));
        return out;
      }
      case 'subagent_finished': {
        const finished = SubagentFinished.safeParse(update);
        if (!finished.success) return [...out, unknownLine(line)];
        const { subagent_id: id, status } = finished.data;
        const name = this.subagents.get(id);
        if (status === 'completed') out.push(compact({ type: 'orchestration', action: 'subagent_completed', subagent_id: id, subagent_name: name, is_success: true }));
        else if (FAILED_SUBAGENT.has(status)) out.push(compact({ type: 'orchestration', action: 'subagent_failed', subagent_id: id, subagent_name: name, is_success: false }));
        else out.push(unknownLine(line));
        return out;
      }
      case 'turn_completed':
        // Usage and stop reason again (stdout's `end` reports them, with uncached input).
        return out;
      case 'retry_state': {
        const retry = RetryState.safeParse(update);
        if (!retry.success) return [...out, unknownLine(line)];
        // A request that finally failed: stdout's `error` reports it.
        if (retry.data.type === 'failed') return out;
        out.push({ type: 'warning', message: `Grok model request ${retry.data.type}${retry.data.message ? `: ${retry.data.message}` : ''}`, code: 'retry' });
        return out;
      }
      default:
        out.push(unknownLine(line));
        return out;
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    // The main session's text first: it is the run's own.
    if (this.main !== undefined) events.push(...this.flushRun(this.main));
    for (const session of [...this.runs.keys()]) events.push(...this.flushRun(session));
    this.calls.flush(events, (call, out) => out.push(...this.report(call, undefined)), (terminal) => terminal.record);
    if (this.sideLines === 0 && this.stdoutRuns.length > 0) {
      events.push({ type: 'warning', message: "grok: no line of the session's updates.jsonl was read, so its tool calls are unknown; the text is stdout's", code: 'side_file_missing' });
      for (const run of this.stdoutRuns) events.push({ type: run.kind, message: run.parts.join('') });
    }
    if (this.usage && this.usage.unreadable.length > 0) events.push(unreadableUsageWarning('grok', 'end.usage', this.usage.unreadable));
    this.result = {
      ...this.result,
      // The answer once the turn ended normally, and only when updates.jsonl said where the last message began.
      final_text: this.stopReason === 'EndTurn' ? this.lastText : undefined,
    };
    return this.summary(events);
  }

  /** An `end` or `error` record's spend fields into the result; a warning when Grok said they are incomplete. */
  private spend(record: { usage?: unknown; modelUsage?: Record<string, unknown>; num_turns?: unknown; total_cost_usd?: unknown; usage_is_incomplete?: unknown }): DraftEvent[] {
    const usage = grokUsage(record);
    const models = Object.keys(record.modelUsage ?? {});
    if (models.length === 1) this.result.reported_model = models[0];
    if (usage) {
      this.usage = usage;
      this.result.tokens = usage.tokens;
      this.result.raw_usage = usage.raw;
    }
    this.result.reported_cost_usd = grokCost(record.total_cost_usd);
    if (record.usage_is_incomplete === true) {
      return [{ type: 'warning', message: "grok usage: Grok marked the session's usage incomplete (subagent usage missing); the figures are kept in raw usage, the session's total is unknown (null)", code: 'incomplete_usage' }];
    }
    return [];
  }

  private chunk(session: string, kind: TextKind, update: JsonObject, line: StdoutLine): DraftEvent[] {
    const chunk = ChunkUpdate.safeParse(update);
    if (!chunk.success || chunk.data.content.type !== 'text' || chunk.data.content.text === undefined) return [...this.flushRun(session), unknownLine(line)];
    const run = this.runs.get(session);
    if (run?.kind === kind) {
      run.parts.push(chunk.data.content.text);
      return [];
    }
    const out = this.flushRun(session);
    this.runs.set(session, { kind, parts: [chunk.data.content.text] });
    return out;
  }

  private flushRun(session: string): DraftEvent[] {
    const run = this.runs.get(session);
    if (!run) return [];
    this.runs.delete(session);
    const message = run.parts.join('');
    if (message.length === 0) return [];
    if (session === this.main && run.kind === 'agent') this.lastText = message;
    return [{ type: run.kind, message }];
  }

  private toolCall(session: string, update: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ToolCallUpdate.safeParse(update);
    const name = parsed.success ? (parsed.data._meta?.['x.ai/tool']?.name ?? parsed.data.title) : undefined;
    if (!parsed.success || !name) return [unknownLine(line)];
    if (session === this.main) this.lastText = undefined;
    const { toolCallId: id, rawInput, rawOutput, status } = parsed.data;
    const call: GrokCall = { id, name, session, input: rawInput, output: rawOutput, records: { tool_call: update } };
    const key = `${session}\0${id}`;
    const out: DraftEvent[] = [];
    const { displaced, result } = this.calls.open(key, call);
    if (grokToolKind(name) === 'subagent') this.spawns.push(key);
    if (displaced) out.push(...this.report(displaced, undefined));
    if (result) {
      out.push(...this.report(this.merge(call, result.input, result.output, result.record), result.status));
    } else if (status !== undefined && TERMINAL.has(status)) {
      this.calls.close(key, { status: status as GrokStatus, input: undefined, output: undefined, record: update });
      out.push(...this.report(call, status as GrokStatus));
    }
    return out;
  }

  private toolUpdate(session: string, update: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ToolCallUpdate.safeParse(update);
    if (!parsed.success) return [unknownLine(line)];
    const { toolCallId: id, rawInput, rawOutput, status } = parsed.data;
    const key = `${session}\0${id}`;
    const terminal = status !== undefined && TERMINAL.has(status) ? (status as GrokStatus) : undefined;
    const pending = this.calls.pending(key);
    if (pending) {
      const merged = this.merge(pending, rawInput, rawOutput, update);
      if (terminal === undefined) {
        this.calls.update(key, merged);
        return [];
      }
      this.calls.close(key, { status: terminal, input: rawInput, output: rawOutput, record: update });
      return this.report(merged, terminal);
    }
    // A late progress record of a call already reported says nothing new.
    if (this.calls.answeredCall(key) !== undefined) return [];
    if (terminal === undefined) return [unknownLine(line)];
    // An outcome before its call: held until the call comes (or reported as it is at the end).
    const { displaced } = this.calls.close(key, { status: terminal, input: rawInput, output: rawOutput, record: update });
    return displaced ? [unknownValue(displaced.record)] : [];
  }

  /** A call with what an update added: Grok's normalized input, the newest output, the latest record. */
  private merge(call: GrokCall, input: unknown, output: unknown, record: JsonObject): GrokCall {
    return { ...call, input: input ?? call.input, output: output ?? call.output, records: { ...call.records, tool_call_update: record } };
  }

  /** A subagent_spawned record: the spawn_subagent call it answers (same session, same description) is reported by it. */
  private link(session: string, subagentId: string, description: string | undefined): void {
    this.spawns = this.spawns.filter((key) => this.calls.pending(key) !== undefined);
    for (const key of this.spawns) {
      const call = this.calls.pending(key)!;
      if (call.session !== session || call.subagentId !== undefined) continue;
      if (description !== undefined && (call.input as { description?: unknown } | undefined)?.description !== description) continue;
      call.subagentId = subagentId;
      return;
    }
  }

  /** A call's events: spawn_subagent's orchestration (when no subagent record reports it), else the tool's. */
  private report(call: GrokCall, status: GrokStatus | undefined): DraftEvent[] {
    if (grokToolKind(call.name) !== 'subagent') return mapGrokCall(call, status, this.cwd);
    const id = call.subagentId ?? spawnedSubagentId(call.output);
    if (id !== undefined && this.subagents.has(id)) return [];
    const name = subagentName(call);
    // Refused before any subagent ran (an unknown type, a bad argument).
    if (status === 'failed') return [compact({ type: 'orchestration', action: 'subagent_failed', subagent_name: name, is_success: false })];
    if (id !== undefined) this.subagents.set(id, name);
    const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: id, subagent_name: name });
    const done = status === 'completed' && (call.output as { type?: unknown } | undefined)?.type === 'SubagentCompleted';
    return done ? [started, compact({ type: 'orchestration' as const, action: 'subagent_completed' as const, subagent_id: id, subagent_name: name, is_success: true })] : [started];
  }
}
