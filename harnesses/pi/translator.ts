// Pi `-p --mode json` -> normalized events. Records (docs/json.md): a `session` header (id, cwd), then
// agent_start, turn_start, message_start/update/end, tool_execution_start/update/end, turn_end, agent_end; also
// auto_retry_*, compaction_*, queue_update. Complete records carry what we need, so the streaming ones
// (message_start, message_update, tool_execution_update) and the restatements (turn_end, agent_end's messages, the
// toolResult message) are folds (folds.ts):
// - an assistant message_end: its text -> agent, thinking -> reasoning, toolCall blocks announce calls, its usage
//   is summed, and stopReason "error"/"aborted" -> error (Pi exits 0 after a failed model call: that message is
//   its only verdict);
// - tool_execution_start/end pair by toolCallId into one event (map-pi-tools.ts); a call announced but never
//   started, or started but never ended, is reported without an outcome at the end.
// The session's usage is final only at agent_end: cut short before it (killed, timed out), or after a compaction
// (whose summary call Pi makes without reporting its usage), the session's tokens and cost are unknown (null).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapPiCall, resultText } from './map-pi-tools.ts';
import type { PiCall, PiOutcome } from './map-pi-tools.ts';
import {
  AssistantMessage,
  CompactionEnd,
  CompactionStart,
  MessageRecord,
  PiRecord,
  RetryEnd,
  RetryStart,
  SessionHeader,
  TextBlock,
  ThinkingBlock,
  ToolCallBlock,
  ToolEnd,
  ToolStart,
} from './records.ts';
import { addMessageUsage, emptyTotals, piTokens } from './usage.ts';

/** Records that carry nothing the translator reads (their content reaches it whole in another record). */
const PASSED_OVER = new Set(['agent_start', 'turn_start', 'turn_end', 'message_start', 'message_update', 'tool_execution_update', 'queue_update']);

export class PiTranslator extends StructuredTranslator {
  /** Started calls waiting for their end, by id; a reused id reports the earlier call first (issue 19, finding 9). */
  private readonly calls = new PendingCalls<PiCall, PiOutcome>();
  /** toolCall blocks of assistant messages whose execution has not started yet, by id. */
  private readonly announced = new Map<string, PiCall>();
  private readonly totals = emptyTotals();
  private readonly rawUsage: unknown[] = [];
  /** agent_end came: the summed usage is the session's. */
  private ended = false;
  /** A compaction ran: its model call's usage is not in the stream. */
  private compacted = false;
  /** The last assistant message's stopReason, and its text when it finished with "stop" (the final answer). */
  private lastStop: string | undefined;
  private lastText: string | undefined;

  line(line: StdoutLine): DraftEvent[] {
    const parsed = PiRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    // The schema's copy holds only the fields it names: the record itself goes on to the record's own schema.
    const record = line.json as JsonObject;
    const type = parsed.data.type;
    if (PASSED_OVER.has(type)) return [];
    switch (type) {
      case 'session': {
        const header = SessionHeader.safeParse(record);
        if (!header.success) return [unknownLine(line)];
        this.session = header.data.id;
        this.cwd = header.data.cwd ?? this.cwd;
        return [];
      }
      case 'agent_end':
        this.ended = true;
        return [];
      case 'message_end':
        return this.messageEnd(record, line);
      case 'tool_execution_start':
        return this.toolStart(record, line);
      case 'tool_execution_end':
        return this.toolEnd(record, line);
      case 'auto_retry_start': {
        const retry = RetryStart.safeParse(record);
        if (!retry.success) return [unknownLine(line)];
        const { attempt, maxAttempts, delayMs, errorMessage } = retry.data;
        const delay = delayMs === undefined ? '?' : String(Math.round(delayMs));
        return [{ type: 'warning', message: `model request failed${errorMessage ? ` (${errorMessage})` : ''}; retry ${attempt ?? '?'}/${maxAttempts ?? '?'} in ${delay} ms`, code: 'auto_retry' }];
      }
      case 'auto_retry_end': {
        const retry = RetryEnd.safeParse(record);
        if (!retry.success) return [unknownLine(line)];
        if (retry.data.success) return [];
        return [{ type: 'warning', message: `retries gave up${retry.data.attempt === undefined ? '' : ` after attempt ${retry.data.attempt}`}${retry.data.finalError ? `: ${retry.data.finalError}` : ''}`, code: 'auto_retry_failed' }];
      }
      case 'compaction_start': {
        const compaction = CompactionStart.safeParse(record);
        if (!compaction.success) return [unknownLine(line)];
        this.compacted = true;
        const why = compaction.data.reason ? ` (${compaction.data.reason})` : '';
        return [{ type: 'warning', message: `Pi compacts the context${why}: its summary's model call reports no usage, so the session's token counts are unknown`, code: 'compaction' }];
      }
      case 'compaction_end': {
        const compaction = CompactionEnd.safeParse(record);
        if (!compaction.success) return [unknownLine(line)];
        if (compaction.data.errorMessage) return [{ type: 'warning', message: compaction.data.errorMessage, code: 'compaction_failed' }];
        return compaction.data.aborted ? [{ type: 'warning', message: 'compaction aborted', code: 'compaction_failed' }] : [];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    this.calls.flush(events, (call, out) => out.push(mapPiCall(call, undefined, this.cwd)), (outcome) => outcome.record);
    for (const call of this.announced.values()) events.push(mapPiCall(call, undefined, this.cwd));
    this.announced.clear();
    const messages = this.totals.messages;
    const complete = this.ended && !this.compacted;
    if (messages > 0 && !this.ended) {
      events.push({ type: 'warning', message: `pi usage: the session ended before agent_end; the usage of the ${messages} model call(s) seen is kept in raw usage, the session's total is unknown (null)`, code: 'incomplete_usage' });
    }
    this.result = {
      ...this.result,
      tokens: messages > 0 && complete ? piTokens(this.totals) : null,
      // Pi's cost is its own price table's estimate, not a charge: for a model id it does not know it prices another
      // model's rates (it only warns on stderr). Kept in raw usage, as OpenCode's; never the reported cost.
      raw_usage: messages > 0 ? { messages: this.rawUsage, ...(complete ? { estimated_cost_usd: this.totals.cost } : {}) } : null,
      reported_cost_usd: null,
      // Pi's verdict is its last model call's stopReason, once the run ended.
      is_error: this.ended && this.lastStop !== undefined ? this.lastStop === 'error' || this.lastStop === 'aborted' : undefined,
      final_text: this.ended && this.lastStop === 'stop' ? this.lastText : undefined,
    };
    return this.summary(events);
  }

  private messageEnd(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const envelope = MessageRecord.safeParse(record);
    if (!envelope.success) return [unknownLine(line)];
    switch (envelope.data.message.role) {
      case 'user': // the prompt echo
      case 'toolResult': // reported with its call, from tool_execution_end
        return [];
      case 'assistant':
        return this.assistant(record.message as JsonObject, line);
      default:
        // Pi's own message kinds (bashExecution, custom, compaction and branch summaries): no event type.
        return [unknownLine(line)];
    }
  }

  private assistant(message: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = AssistantMessage.safeParse(message);
    if (!parsed.success) return [unknownLine(line)];
    const { content, usage, stopReason, errorMessage, model } = parsed.data;
    const out: DraftEvent[] = [];
    const texts: string[] = [];
    let textReadable = true;
    for (const block of content) {
      switch (obj(block)?.type) {
        case 'text': {
          const text = TextBlock.safeParse(block);
          if (!text.success) {
            textReadable = false;
            out.push(unknownValue(block));
          } else if (text.data.text.length > 0) {
            texts.push(text.data.text);
            out.push({ type: 'agent', message: text.data.text });
          }
          break;
        }
        case 'thinking': {
          const thinking = ThinkingBlock.safeParse(block);
          if (!thinking.success) out.push(unknownValue(block));
          else if (thinking.data.thinking.length > 0) out.push({ type: 'reasoning', message: thinking.data.thinking });
          break;
        }
        case 'toolCall': {
          const call = ToolCallBlock.safeParse(block);
          if (!call.success) out.push(unknownValue(block));
          else out.push(...this.announce({ id: call.data.id, name: call.data.name, args: call.data.arguments, records: { toolCall: block as JsonObject } }));
          break;
        }
        default:
          out.push(unknownValue(block));
      }
    }
    const unreadable = addMessageUsage(this.totals, usage);
    this.rawUsage.push(usage ?? null);
    if (unreadable.length > 0) out.push(unreadableUsageWarning('pi', 'message_end.message.usage', unreadable));
    if (model !== undefined) this.result.reported_model = model;
    this.lastStop = stopReason;
    this.lastText = textReadable && texts.length > 0 ? texts.join('\n') : undefined;
    if (stopReason === 'error') out.push({ type: 'error', message: errorMessage ?? 'the model call failed (Pi gave no message)' });
    if (stopReason === 'aborted') out.push({ type: 'error', message: errorMessage ?? 'the model call was aborted', code: 'aborted' });
    return out;
  }

  /** A toolCall block: held until its execution starts; a restatement of a started or answered call is nothing new. */
  private announce(call: PiCall): DraftEvent[] {
    if (this.calls.pending(call.id) !== undefined || this.calls.answeredCall(call.id) !== undefined) return [];
    const earlier = this.announced.get(call.id);
    this.announced.set(call.id, call);
    // Another block under the same id that never started: reported now, without an outcome.
    return earlier ? [mapPiCall(earlier, undefined, this.cwd)] : [];
  }

  private toolStart(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const start = ToolStart.safeParse(record);
    if (!start.success) return [unknownLine(line)];
    const { toolCallId: id, toolName: name, args } = start.data;
    const block = this.announced.get(id);
    this.announced.delete(id);
    const call: PiCall = { id, name, args, records: block ? { ...block.records, tool_execution_start: record } : { tool_execution_start: record } };
    const out: DraftEvent[] = [];
    const { displaced, result } = this.calls.open(id, call);
    if (displaced) out.push(mapPiCall(displaced, undefined, this.cwd));
    if (result) out.push(mapPiCall(call, result, this.cwd));
    return out;
  }

  private toolEnd(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const end = ToolEnd.safeParse(record);
    // Its call, if any, stays pending and is reported without an outcome.
    if (!end.success) return [unknownLine(line)];
    const id = end.data.toolCallId;
    // A call whose start record was unreadable is still known from its toolCall block.
    const out: DraftEvent[] = [];
    const announced = this.calls.pending(id) === undefined ? this.announced.get(id) : undefined;
    if (announced) {
      this.announced.delete(id);
      // An end held from earlier pairs with it now; this one then waits for a call of its own.
      const { result } = this.calls.open(id, announced);
      if (result) out.push(mapPiCall(announced, result, this.cwd));
    }
    const outcome: PiOutcome = { isError: end.data.isError, text: resultText(end.data.result), record };
    const { call, displaced } = this.calls.close(id, outcome);
    if (displaced) out.push(unknownValue(displaced.record));
    if (call) out.push(mapPiCall(call, outcome, this.cwd));
    return out;
  }
}
