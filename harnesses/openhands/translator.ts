// OpenHands CLI `--headless --json` -> normalized events. stdout mixes the CLI's status text (cli-text.ts: one
// `unknown` per run of text lines; the model, the conversation id and "Agent finished" are read from it) with one
// JSON SDK event per line (records.ts):
// - MessageEvent: the user's is the prompt echo (folds.ts); the agent's text -> agent, its reasoning -> reasoning;
// - ActionEvent: its `thought` (the response's visible text) -> agent, reasoning -> reasoning; finish's message ->
//   agent (and the final answer), think's thought -> reasoning, a task call starts a subagent; other calls wait for
//   their result (map-openhands-tools.ts);
// - ObservationEvent / AgentErrorEvent: a call's result, or OpenHands' refusal of it (the model sees the error and
//   goes on: the call's event fails, and a warning carries the error), paired by tool_call_id;
// - ConversationErrorEvent: the run loop stopped on an error (OpenHands still exits 0) -> error, and the session's
//   verdict.
// Tokens and the verdict come from the conversation's base_state.json (usage.ts), a side file the driver reads
// after the session: without it the session's usage is unknown (null).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionReports, SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { TextBlock, readTextLine } from './cli-text.ts';
import { mapOpenHandsCall, openHandsToolKind, subagentStart } from './map-openhands-tools.ts';
import type { OpenHandsCall, OpenHandsOutcome } from './map-openhands-tools.ts';
import { ActionEvent, AgentErrorEvent, ConversationErrorEvent, FinishAction, MessageEvent, ObservationEvent, OpenHandsRecord, TextContent, ThinkAction, ThinkingBlock } from './records.ts';
import { openHandsState } from './usage.ts';

/** The side file's name (Invocation.sideFiles) and where it lives below HOME. */
export const STATE_SIDE_FILE = 'state';
export const STATE_PATH = '.openhands/conversations/*/base_state.json';

/** Execution statuses that end a conversation unsuccessfully (openhands-sdk ConversationExecutionStatus). */
const FAILED_STATUSES = new Set(['error', 'stuck']);

function parseArguments(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class OpenHandsTranslator extends StructuredTranslator {
  private readonly calls = new PendingCalls<OpenHandsCall, OpenHandsOutcome>();
  /** finish and think calls, reported at the call: their observations restate them. */
  private readonly reportedAtCall = new Set<string>();
  private readonly text = new TextBlock();
  private model: string | undefined;
  /** A ConversationErrorEvent came: the run failed. */
  private conversationError = false;
  /** "Agent finished": the run loop returned. */
  private agentFinished = false;
  /** The last answer: an agent message or finish's message, unless a tool call came after it. */
  private answer: string | undefined;

  line(line: StdoutLine): DraftEvent[] {
    if (line.json === undefined) {
      const fact = readTextLine(line.text);
      if (fact?.kind === 'model') this.model = fact.model;
      else if (fact?.kind === 'conversation_id') this.session = fact.id;
      else if (fact?.kind === 'agent_finished') this.agentFinished = true;
      this.text.add(line.text);
      return [];
    }
    const events = this.record(line);
    // The text printed before comes out first; across a record that reports nothing (the prompt echo, a call
    // waiting for its result) it stays one block with what follows.
    return events.length > 0 ? [...this.text.take(), ...events] : events;
  }

  finish(reports?: SessionReports): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = this.text.take();
    this.calls.flush(events, (call, out) => out.push(...mapOpenHandsCall(call, undefined, this.cwd)), (outcome) => outcome.record);
    this.reportedAtCall.clear();
    const text = reports?.[STATE_SIDE_FILE];
    const state = text === undefined ? undefined : openHandsState(text);
    if (state && state.unreadable.length > 0) events.push(unreadableUsageWarning('openhands', 'base_state.json', state.unreadable));
    const status = state?.executionStatus;
    const isError = this.conversationError || (status !== undefined && FAILED_STATUSES.has(status)) ? true : status === 'finished' ? false : undefined;
    this.result = compact({
      ...this.result,
      tokens: state?.tokens ?? null,
      raw_usage: state?.raw ? { usage_to_metrics: state.raw, estimated_cost_usd: state.estimatedCostUsd, execution_status: status ?? null } : null,
      // accumulated_cost is LiteLLM's price-table estimate (0 for a model it does not know), not a charge: raw usage only.
      reported_cost_usd: null,
      reported_model: this.model ?? state?.model,
      is_error: isError,
      final_text: this.agentFinished && isError !== true ? this.answer : undefined,
    });
    return this.summary(events);
  }

  private record(line: StdoutLine): DraftEvent[] {
    const parsed = OpenHandsRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    const record = line.json as JsonObject;
    switch (parsed.data.kind) {
      case 'MessageEvent':
        return this.message(record, line);
      case 'ActionEvent':
        return this.action(record, line);
      case 'ObservationEvent':
        return this.observation(record, line);
      case 'AgentErrorEvent':
        return this.agentError(record, line);
      case 'ConversationErrorEvent': {
        this.conversationError = true;
        const error = ConversationErrorEvent.safeParse(record);
        if (!error.success) return [unknownLine(line)];
        return [{ type: 'error', message: error.data.detail.length > 0 ? error.data.detail : error.data.code, code: error.data.code }];
      }
      default:
        return [unknownLine(line)];
    }
  }

  /** Reasoning, then each text part as an agent message; their text joined, if any. */
  private said(reasoning: string | null | undefined, blocks: unknown[] | null | undefined, parts: unknown[], out: DraftEvent[]): string | undefined {
    if (reasoning) {
      out.push({ type: 'reasoning', message: reasoning });
    } else {
      // Anthropic thinking blocks, when LiteLLM gave no reasoning_content (which otherwise holds the same text).
      for (const block of blocks ?? []) {
        const thinking = ThinkingBlock.safeParse(block);
        if (!thinking.success) out.push(unknownValue(block));
        else if (thinking.data.thinking.length > 0) out.push({ type: 'reasoning', message: thinking.data.thinking });
      }
    }
    const texts: string[] = [];
    for (const part of parts) {
      const text = TextContent.safeParse(part);
      if (!text.success) out.push(unknownValue(part));
      else if (text.data.text.length > 0) texts.push(text.data.text);
    }
    for (const text of texts) out.push({ type: 'agent', message: text });
    return texts.length > 0 ? texts.join('\n') : undefined;
  }

  private message(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = MessageEvent.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { source, llm_message: message } = parsed.data;
    // The prompt as OpenHands received it (folds.ts).
    if (source === 'user' && message.role === 'user') return [];
    if (source !== 'agent' || message.role !== 'assistant') return [unknownLine(line)];
    const out: DraftEvent[] = [];
    const text = this.said(message.reasoning_content, message.thinking_blocks, message.content, out);
    if (text !== undefined) this.answer = text;
    return out;
  }

  private action(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ActionEvent.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { tool_call_id: id, tool_name: name, action, tool_call: toolCall } = parsed.data;
    const out: DraftEvent[] = [];
    this.said(parsed.data.reasoning_content, parsed.data.thinking_blocks, parsed.data.thought, out);
    // A step, not an answer (finish's message is one, below).
    this.answer = undefined;
    if (name === 'finish' || name === 'think') {
      const finish = name === 'finish' ? FinishAction.safeParse(action) : undefined;
      const think = name === 'think' ? ThinkAction.safeParse(action) : undefined;
      if (finish?.success) {
        if (finish.data.message.length > 0) out.push({ type: 'agent', message: finish.data.message });
        this.answer = finish.data.message;
        this.reportedAtCall.add(id);
        return out;
      }
      if (think?.success) {
        if (think.data.thought.length > 0) out.push({ type: 'reasoning', message: think.data.thought });
        this.reportedAtCall.add(id);
        return out;
      }
    }
    // The arguments as OpenHands validated them; the model's own when it refused the call (action null).
    const call: OpenHandsCall = { id, name, args: action ?? parseArguments(toolCall?.arguments), record };
    if (openHandsToolKind(name) === 'subagent' && action !== null) {
      const start = subagentStart(call);
      if (start) {
        call.started = true;
        out.push(start);
      }
    }
    const { displaced, result } = this.calls.open(id, call);
    if (displaced) out.push(...mapOpenHandsCall(displaced, undefined, this.cwd));
    if (result) out.push(...this.answered(call, result));
    return out;
  }

  private observation(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ObservationEvent.safeParse(record);
    // Its call, if any, stays pending and is reported without an outcome.
    if (!parsed.success) return [unknownLine(line)];
    const id = parsed.data.tool_call_id;
    if (this.reportedAtCall.delete(id)) return [];
    return this.close(id, { kind: 'observation', observation: record.observation as JsonObject, record });
  }

  private agentError(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = AgentErrorEvent.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    this.reportedAtCall.delete(parsed.data.tool_call_id);
    return this.close(parsed.data.tool_call_id, { kind: 'error', error: parsed.data.error, record });
  }

  private close(id: string, outcome: OpenHandsOutcome): DraftEvent[] {
    const { call, displaced } = this.calls.close(id, outcome);
    const out: DraftEvent[] = displaced ? [unknownValue(displaced.record)] : [];
    if (call) out.push(...this.answered(call, outcome));
    return out;
  }

  /** A call with its result; a refused call's error rides along as a warning unless its event carries it raw. */
  private answered(call: OpenHandsCall, outcome: OpenHandsOutcome): DraftEvent[] {
    const events = mapOpenHandsCall(call, outcome, this.cwd);
    if (outcome.kind === 'error' && !events.some((e) => e.type === 'unknown')) {
      events.push({ type: 'warning', message: `OpenHands refused the ${call.name} call: ${outcome.error}`, code: 'tool_call_refused' });
    }
    return events;
  }
}
