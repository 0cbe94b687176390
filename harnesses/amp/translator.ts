// Amp `-x --stream-json --stream-json-thinking` -> normalized events. Amp promises "Claude Code-compatible stream
// JSON" (ampcode.com/news/streaming-json): records system/init, user, assistant, result, every line carrying the
// thread id (`T-…`) as session_id. Every documented record type is handled; anything else, or a record whose fields
// fail their zod schema, becomes `unknown`. Calls and results are paired by id (shared/translate/pending-calls.ts):
// none is lost, none reported twice.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';
import { incompleteUsageWarning, unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { ampToolKind, callIdentity, mapToolCall } from './map-amp-tools.ts';
import type { AmpToolCall, AmpToolOutcome } from './map-amp-tools.ts';
import { addUsage, ampTokens, messageUsage } from './usage.ts';
import { assistantContentReader, CompatibleBlock, readToolResults } from '../../shared/translate/anthropic-blocks.ts';
import type { ToolResult, ToolResultSink, ToolUseSink } from '../../shared/translate/anthropic-blocks.ts';

const text = z.string();
// z.object: extra keys are accepted and left out of the parsed copy; what is passed on (tool inputs, usage) is the
// raw value, so `unknown` events and raw usage keep every field.
const SystemInit = z.object({ cwd: text.optional() });
const AssistantMessage = z.object({ message: z.object({ id: text.optional(), model: text.optional(), content: z.array(z.unknown()) }) });
const UserMessage = z.object({ message: z.object({ content: z.union([text, z.array(z.unknown())]) }) });
/** Content blocks: shared/translate/anthropic-blocks.ts, read the same as Claude Code's. */
const readAssistantContent = assistantContentReader(CompatibleBlock);
const Result = z.object({ is_error: z.boolean(), result: text.optional(), error: text.optional(), subtype: text.optional() });

export class AmpTranslator extends StructuredTranslator implements ToolUseSink, ToolResultSink<undefined> {
  private readonly calls = new PendingCalls<AmpToolCall, AmpToolOutcome>();
  private usage: ClassValues | undefined;
  private readonly rawUsage: unknown[] = [];
  private readonly countedMessages = new Set<string>();
  /**
   * Whether the terminal `result` arrived. Before it, the messages summed so far are not the session's usage (a
   * killed session also spent the tokens of the message it was in): unknown, never understated.
   */
  private ended = false;

  line(line: StdoutLine): DraftEvent[] {
    const record = this.sessionRecord(line);
    if (!record) return [unknownLine(line)];
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'user':
        return this.user(record, line);
      case 'result':
        return this.terminal(record, line);
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    // Calls that never got a result: reported without an outcome (a subagent's start was already reported); then
    // results no call claimed.
    const events = this.calls.flush(
      [],
      (call, out) => {
        if (ampToolKind(call.name) !== 'subagent') out.push(mapToolCall(call, undefined, this.cwd));
      },
      (outcome) => outcome.block,
    );
    if (this.usage && !this.ended) events.push(incompleteUsageWarning('amp', `${this.rawUsage.length} message(s)`));
    this.result.tokens = this.ended ? ampTokens(this.usage) : null;
    this.result.raw_usage = this.rawUsage.length > 0 ? this.rawUsage : null;
    return this.summary(events);
  }

  private system(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = SystemInit.safeParse(record);
    if (record.subtype !== 'init' || !parsed.success) return [unknownLine(line)];
    // The documented sample prints a home-relative cwd ("~/dev/labs"); only an absolute one beats the workdir.
    const cwd = parsed.data.cwd;
    if (cwd?.startsWith('/')) this.cwd = cwd;
    return [];
  }

  private assistant(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = AssistantMessage.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const message = parsed.data.message;
    const out = this.countUsage({ id: message.id, usage: (record.message as JsonObject).usage }); // raw usage, kept whole
    if (message.model) this.result.reported_model = message.model;
    readAssistantContent(message.content, out, this);
    return out;
  }

  toolUse(call: AmpToolCall, out: DraftEvent[]): void {
    const answered = this.calls.answeredCall(call.id);
    if (answered && callIdentity(answered) === callIdentity(call)) return; // a message printed again after the result
    const { displaced, result: early } = this.calls.open(call.id, call);
    if (displaced && callIdentity(displaced) === callIdentity(call)) return; // printed again while pending
    // A second call under a pending id: the first is reported without an outcome (a subagent's start already was).
    if (displaced && ampToolKind(displaced.name) !== 'subagent') out.push(mapToolCall(displaced, undefined, this.cwd));
    // A subagent is reported as started when it is launched, and completed when its result comes back.
    if (ampToolKind(call.name) === 'subagent') out.push({ type: 'orchestration', action: 'subagent_started', subagent_id: call.id, subagent_name: call.name });
    if (early) out.push(...this.answer(call, early));
  }

  private countUsage(message: { id?: string; usage?: unknown }): DraftEvent[] {
    const id = message.id;
    if (message.usage === undefined || (id !== undefined && this.countedMessages.has(id))) return [];
    if (id !== undefined) this.countedMessages.add(id);
    const one = messageUsage(message.usage);
    this.usage = addUsage(this.usage, one.classes);
    this.rawUsage.push(message.usage);
    return one.unreadable.length > 0 ? [unreadableUsageWarning('amp', 'assistant.message.usage', one.unreadable)] : [];
  }

  private user(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = UserMessage.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const content = parsed.data.message.content;
    if (typeof content === 'string') return []; // the prompt echoed back
    const out: DraftEvent[] = [];
    readToolResults(content, out, this, undefined); // other blocks: the prompt echoed back
    return out;
  }

  toolResult(result: ToolResult, out: DraftEvent[]): void {
    const outcome = { isError: result.isError, block: result.block };
    const { call, displaced } = this.calls.close(result.id, outcome);
    // A result before its call is held for it; one it displaces is reported unpaired.
    if (displaced) out.push(unknownValue(displaced.block));
    if (call) out.push(...this.answer(call, outcome));
  }

  private answer(call: AmpToolCall, outcome: AmpToolOutcome): DraftEvent[] {
    if (ampToolKind(call.name) === 'subagent') {
      const ok = !outcome.isError;
      return [{ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: call.id, subagent_name: call.name, is_success: ok }];
    }
    return [mapToolCall(call, outcome, this.cwd)];
  }

  private terminal(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = Result.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { is_error, result, error, subtype } = parsed.data;
    this.ended = true;
    this.result.is_error = is_error;
    this.result.final_text = result;
    if (!is_error) return [];
    // Error results carry the reason in `error` (amp_sdk ErrorResultMessage) or, Claude-style, in `result`.
    return [compact({ type: 'error', message: error ?? result ?? 'Amp reported an error', code: subtype })];
  }
}
