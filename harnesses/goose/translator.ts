// goose `run --output-format stream-json` -> normalized events. Records are the serde enum `StreamEvent`
// (tag "type", snake_case) in crates/goose-cli/src/session/mod.rs: `message{message}`, `notification{extension_id,
// log{message} | progress{progress,total,message}}`, `error{error}`, `complete{…usage, cost_usd}`. The embedded
// goose Message is `{id, role, created, content:[…]}` with content items tagged by camelCase `type`
// (crates/goose/src/conversation/message.rs). UNVERIFIED by running. goose prints no session id in this mode.
// Every record and content item is read through a zod schema of the fields used here; one that fails it is
// `unknown`. Tool requests and responses are paired by id (shared/translate/pending-calls.ts): none is lost, none
// reported twice.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { callIdentity, mapToolCall } from './map-goose-tools.ts';
import type { GooseToolCall, GooseToolOutcome } from './map-goose-tools.ts';
import { gooseUsage } from './usage.ts';

// z.object: extra keys are accepted and left out of the parsed copy; what is passed on (tool arguments) is the
// raw value, so `unknown` events keep every field.
const text = z.string();
const Message = z.object({
  message: z.object({ id: text.optional(), role: z.enum(['assistant', 'user']), content: z.array(z.unknown()) }),
});
const TextItem = z.object({ text });
const ThinkingItem = z.object({ thinking: text });
/** `status: error` is a tool call the model malformed: goose answers it with an error toolResponse. */
const ToolRequest = z.object({
  id: text.min(1),
  toolCall: z.object({ status: z.literal('success'), value: z.object({ name: text.min(1), arguments: z.object({}).optional() }) }),
});
/** success carries an MCP CallToolResult whose optional `isError` marks a failed tool run. */
const ToolResponse = z.object({
  id: text.min(1),
  toolResult: z.discriminatedUnion('status', [
    z.object({ status: z.literal('success'), value: z.object({ isError: z.boolean().optional() }) }),
    z.object({ status: z.literal('error') }),
  ]),
});
const SystemNotification = z.object({ notificationType: text, msg: text });
const ErrorRecord = z.object({ error: text });
const Notification = z.object({ log: z.object({}).optional(), progress: z.object({}).optional() });

/** Streamed text: goose sends an assistant reply as several messages sharing one id, each holding a chunk. */
interface PendingText {
  id: string | undefined;
  parts: string[];
}

export class GooseTranslator extends StructuredTranslator {
  private readonly calls = new PendingCalls<GooseToolCall, GooseToolOutcome>();
  private pending: PendingText | undefined;

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [...this.flushText(), unknownLine(line)];
    if (record.type === 'message') return this.message(record, line);
    const out = this.flushText();
    switch (record.type) {
      case 'notification': {
        // MCP log lines (streamed shell output) and progress ticks: tool output the tool's response repeats,
        // nothing an event type expresses.
        const parsed = Notification.safeParse(record);
        if (parsed.success && (parsed.data.log || parsed.data.progress)) return out;
        return [...out, unknownLine(line)];
      }
      case 'error': {
        this.result.is_error = true; // goose prints `error` instead of `complete` when the run fails
        const parsed = ErrorRecord.safeParse(record);
        return [...out, parsed.success ? { type: 'error', message: parsed.data.error } : unknownLine(line)];
      }
      case 'complete': {
        const usage = gooseUsage(record);
        this.result = { ...this.result, tokens: usage.tokens, raw_usage: usage.raw, reported_cost_usd: null, is_error: false };
        // cost_usd is goose's own estimate from its price table, not a charge: it stays in raw usage only.
        return usage.unreadable.length > 0 ? [...out, unreadableUsageWarning('goose', 'complete', usage.unreadable)] : out;
      }
      default:
        return [...out, unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushText();
    // Calls that never got a response, without an outcome; then responses no call claimed.
    this.calls.flush(events, (call, out) => out.push(mapToolCall(call, undefined, this.cwd)), (outcome) => outcome.item);
    return this.summary(events); // no session id: stream-json carries none, and tcab never mints one
  }

  private flushText(): DraftEvent[] {
    const text = this.pending?.parts.join('') ?? '';
    this.pending = undefined;
    return text.length > 0 ? [{ type: 'agent', message: text }] : [];
  }

  private message(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = Message.safeParse(record);
    if (!parsed.success) return [...this.flushText(), unknownLine(line)];
    const { id, role, content } = parsed.data.message;
    const out: DraftEvent[] = [];
    if (this.pending && (id === undefined || id !== this.pending.id)) out.push(...this.flushText());
    for (const raw of content) {
      const item = obj(raw);
      if (item?.type === 'text') {
        const textItem = TextItem.safeParse(item);
        if (!textItem.success) out.push(unknownValue(item));
        else if (role === 'assistant') (this.pending ??= { id, parts: [] }).parts.push(textItem.data.text);
        // user-role text is the prompt (or a goose-injected reminder): nothing happened
        continue;
      }
      out.push(...this.flushText(), ...this.item(item, raw));
    }
    return out;
  }

  private item(item: JsonObject | undefined, raw: unknown): DraftEvent[] {
    switch (item?.type) {
      case 'thinking': {
        const parsed = ThinkingItem.safeParse(item);
        if (!parsed.success) return [unknownValue(item)];
        return parsed.data.thinking.length > 0 ? [{ type: 'reasoning', message: parsed.data.thinking }] : [];
      }
      case 'redactedThinking':
        return []; // encrypted reasoning: no content to show
      case 'toolRequest':
        return this.toolRequest(item);
      case 'toolResponse':
        return this.toolResponse(item);
      case 'systemNotification':
        return this.notice(item);
      default:
        // image, toolConfirmationRequest, actionRequired, frontendToolRequest: no event type (and the CLI answers
        // confirmations itself in auto mode), kept lossless.
        return [unknownValue(item ?? raw)];
    }
  }

  private toolRequest(item: JsonObject): DraftEvent[] {
    const parsed = ToolRequest.safeParse(item);
    if (!parsed.success) return [unknownValue(item)];
    const { name } = parsed.data.toolCall.value;
    const args = (((item.toolCall as JsonObject).value as JsonObject).arguments ?? {}) as JsonObject; // raw, kept whole
    const call: GooseToolCall = { id: parsed.data.id, name, args, item };
    const answered = this.calls.answeredCall(call.id);
    if (answered && callIdentity(answered) === callIdentity(call)) return []; // a request printed again after its response
    const { displaced, result: early } = this.calls.open(call.id, call);
    if (displaced && callIdentity(displaced) === callIdentity(call)) return []; // printed again while pending
    const out: DraftEvent[] = [];
    if (displaced) out.push(mapToolCall(displaced, undefined, this.cwd)); // a second call under a pending id
    if (early) out.push(this.answer(call, early));
    return out;
  }

  private toolResponse(item: JsonObject): DraftEvent[] {
    const parsed = ToolResponse.safeParse(item);
    if (!parsed.success) return [unknownValue(item)];
    const result = parsed.data.toolResult;
    const ok = result.status === 'success' && result.value.isError !== true;
    const outcome: GooseToolOutcome = { ok, item };
    const { call, displaced } = this.calls.close(parsed.data.id, outcome);
    // A response before its request is held for it; one it displaces is reported unpaired.
    const out: DraftEvent[] = displaced ? [unknownValue(displaced.item)] : [];
    if (call) out.push(this.answer(call, outcome));
    return out;
  }

  private answer(call: GooseToolCall, outcome: GooseToolOutcome): DraftEvent {
    return mapToolCall(call, outcome, this.cwd);
  }

  private notice(item: JsonObject): DraftEvent[] {
    const parsed = SystemNotification.safeParse(item);
    if (!parsed.success) return [unknownValue(item)];
    const { notificationType: kind, msg } = parsed.data;
    if (kind === 'thinkingMessage') return []; // a "thinking…" status line, not reasoning content
    if (kind === 'creditsExhausted') return [{ type: 'error', message: msg, code: kind }];
    return [{ type: 'warning', message: msg, code: kind }];
  }
}
