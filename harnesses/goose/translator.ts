// goose `run --output-format stream-json` -> normalized events. Records are the serde enum `StreamEvent`
// (tag "type", snake_case) in crates/goose-cli/src/session/mod.rs: `message{message}`, `notification{extension_id,
// log{message} | progress{progress,total,message}}`, `error{error}`, `complete{…usage, cost_usd}`. The embedded
// goose Message is `{id, role, created, content:[…]}` with content items tagged by camelCase `type`
// (crates/goose/src/conversation/message.rs). UNVERIFIED by running. goose prints no session id in this mode.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { arr, bool, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { mapToolCall } from './map-goose-tools.ts';
import type { GooseToolCall } from './map-goose-tools.ts';
import { gooseUsage } from './usage.ts';

/** Streamed text: goose sends an assistant reply as several messages sharing one id, each holding a chunk. */
interface PendingText {
  id: string | undefined;
  parts: string[];
}

export class GooseTranslator implements SessionTranslator {
  private readonly cwd: string | undefined;
  private readonly calls = new Map<string, GooseToolCall>();
  private pending: PendingText | undefined;
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return undefined; // stream-json carries no session id, and tcab never mints one
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [...this.flushText(), unknownLine(line)];
    if (record.type === 'message') return this.message(record, line);
    const out = this.flushText();
    switch (record.type) {
      case 'notification':
        // MCP log lines (streamed shell output) and progress ticks: tool output the tool's response repeats,
        // nothing an event type expresses.
        if (obj(record.log) || obj(record.progress)) return out;
        return [...out, unknownLine(line)];
      case 'error': {
        const error = str(record.error);
        this.result.is_error = true; // goose prints `error` instead of `complete` when the run fails
        return [...out, error === undefined ? unknownLine(line) : { type: 'error', message: error }];
      }
      case 'complete': {
        const usage = gooseUsage(record);
        this.result = { ...this.result, tokens: usage.tokens, raw_usage: usage.raw, reported_cost_usd: null, is_error: false };
        // cost_usd is goose's own estimate from its price table, not a charge: it stays in raw usage only.
        return out;
      }
      default:
        return [...out, unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushText();
    for (const call of this.calls.values()) events.push(mapToolCall(call, undefined, this.cwd));
    this.calls.clear();
    return { events, result: this.result };
  }

  private flushText(): DraftEvent[] {
    const text = this.pending?.parts.join('') ?? '';
    this.pending = undefined;
    return text.length > 0 ? [{ type: 'agent', message: text }] : [];
  }

  private message(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const message = obj(record.message);
    const items = arr(message?.content);
    const role = str(message?.role);
    if (!message || !items || (role !== 'assistant' && role !== 'user')) return [...this.flushText(), unknownLine(line)];
    const id = str(message.id);
    const out: DraftEvent[] = [];
    if (this.pending && (id === undefined || id !== this.pending.id)) out.push(...this.flushText());
    for (const raw of items) {
      const item = obj(raw);
      if (item?.type === 'text') {
        const text = str(item.text);
        if (text === undefined) out.push(unknownValue(item));
        else if (role === 'assistant') (this.pending ??= { id, parts: [] }).parts.push(text);
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
        const text = str(item.thinking);
        if (text === undefined) return [unknownValue(item)];
        return text.length > 0 ? [{ type: 'reasoning', message: text }] : [];
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
    const id = str(item.id);
    const toolCall = obj(item.toolCall);
    const value = obj(toolCall?.value);
    const name = str(value?.name);
    // `status: error` is a tool call the model malformed: goose answers it with an error toolResponse.
    if (!id || toolCall?.status !== 'success' || !value || !name) return [unknownValue(item)];
    this.calls.set(id, { id, name, args: obj(value.arguments) ?? {}, item });
    return [];
  }

  private toolResponse(item: JsonObject): DraftEvent[] {
    const id = str(item.id);
    const call = id ? this.calls.get(id) : undefined;
    const result = obj(item.toolResult);
    const status = result?.status;
    if (!id || !call || (status !== 'success' && status !== 'error')) return [unknownValue(item)];
    this.calls.delete(id);
    // success carries an MCP CallToolResult whose `isError` marks a failed tool run.
    const ok = status === 'success' && bool(obj(result!.value)?.isError) !== true;
    return [mapToolCall(call, { ok, item }, this.cwd)];
  }

  private notice(item: JsonObject): DraftEvent[] {
    const kind = str(item.notificationType);
    const msg = str(item.msg);
    if (kind === undefined || msg === undefined) return [unknownValue(item)];
    if (kind === 'thinkingMessage') return []; // a "thinking…" status line, not reasoning content
    if (kind === 'creditsExhausted') return [{ type: 'error', message: msg, code: kind }];
    return [{ type: 'warning', message: msg, code: kind }];
  }
}
