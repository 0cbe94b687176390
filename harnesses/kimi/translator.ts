// Kimi Code `--output-format stream-json` -> normalized events. One OpenAI-style message per line:
// - `role: "assistant"`: `content` (text, or parts) -> agent, reasoning (`reasoning_content`, `think` parts) when
//   printed -> reasoning, `tool_calls` announce calls;
// - `role: "tool"`: a call's result, paired by tool_call_id (map-kimi-tools.ts);
// - `role: "meta"`: `system.version`, `session.resume_hint` (the session id).
// Tokens come from the session's wire files, tailed live as the `wire` side file (sideLine; usage.ts); a session
// whose wire files hold no usage record (no model call answered, or none was read) has unknown usage (null).
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { mapKimiCall } from './map-kimi-tools.ts';
import type { KimiCall, KimiOutcome } from './map-kimi-tools.ts';
import { AssistantMessage, KimiRecord, MetaRecord, ResumeHint, TextPart, ThinkPart, ToolCall, ToolMessage } from './records.ts';
import { WireUsage } from './usage.ts';

/** The side file's name (Invocation.sideFiles): every agent's wire.jsonl of the session. */
export const WIRE = 'wire';

export class KimiTranslator extends StructuredTranslator {
  private readonly calls = new PendingCalls<KimiCall, KimiOutcome>();
  /** The text of the last assistant message, when that message called no tool (an answer, not a step). */
  private lastText: string | undefined;
  /** The resume hint came: Kimi prints it once the prompt has finished. */
  private ended = false;
  private readonly usage = new WireUsage();

  line(line: StdoutLine): DraftEvent[] {
    const parsed = KimiRecord.safeParse(line.json);
    if (!parsed.success) return [unknownLine(line)];
    const record = line.json as JsonObject;
    switch (parsed.data.role) {
      case 'assistant':
        return this.assistant(record, line);
      case 'tool':
        return this.tool(record, line);
      case 'meta':
        return this.meta(record, line);
      default:
        // The prompt echo or a role this version does not print.
        return [unknownLine(line)];
    }
  }

  /**
   * One line of a wire file: its usage records and prompt times are kept (usage.ts), every other record is what
   * stdout already said (or Kimi's internals: profile, context, requests) and yields nothing. A line that is no wire
   * record is unknown.
   */
  sideLine(name: string, line: StdoutLine): DraftEvent[] {
    if (name !== WIRE) return [unknownLine(line)];
    return this.usage.add(line) ? [] : [unknownLine(line)];
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    const events: DraftEvent[] = [];
    this.calls.flush(events, (call, out) => out.push(...mapKimiCall(call, undefined, this.cwd)), (outcome) => outcome.record);
    const usage = this.usage.total();
    if (usage && usage.unreadable.length > 0) events.push(unreadableUsageWarning('kimi', 'wire.jsonl', usage.unreadable));
    this.result = {
      ...this.result,
      tokens: usage?.tokens ?? null,
      raw_usage: usage ? { usage_records: usage.raw } : null,
      // Kimi reports no cost.
      reported_cost_usd: null,
      // The answer only once the session finished (a stream cut short has no final answer).
      final_text: this.ended ? this.lastText : undefined,
    };
    return this.summary(events);
  }

  private meta(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const meta = MetaRecord.safeParse(record);
    if (!meta.success) return [unknownLine(line)];
    switch (meta.data.type) {
      case 'system.version':
        // The CLI's version: the probe reports it already.
        return [];
      case 'session.resume_hint': {
        const hint = ResumeHint.safeParse(record);
        if (!hint.success) return [unknownLine(line)];
        this.session = hint.data.session_id;
        this.ended = true;
        return [];
      }
      default:
        return [unknownLine(line)];
    }
  }

  private assistant(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = AssistantMessage.safeParse(record);
    if (!parsed.success) return [unknownLine(line)];
    const { content, reasoning_content: reasoning, tool_calls: toolCalls } = parsed.data;
    const out: DraftEvent[] = [];
    if (reasoning !== undefined && reasoning.length > 0) out.push({ type: 'reasoning', message: reasoning });
    const texts: string[] = [];
    if (typeof content === 'string') {
      if (content.length > 0) texts.push(content);
    } else if (Array.isArray(content)) {
      for (const part of content) {
        const text = TextPart.safeParse(part);
        const think = ThinkPart.safeParse(part);
        if (text.success) {
          if (text.data.text.length > 0) texts.push(text.data.text);
        } else if (think.success) {
          if (think.data.think.length > 0) out.push({ type: 'reasoning', message: think.data.think });
        } else {
          out.push(unknownValue(part));
        }
      }
    }
    for (const text of texts) out.push({ type: 'agent', message: text });
    this.lastText = texts.length > 0 && (toolCalls ?? []).length === 0 ? texts.join('\n') : undefined;
    for (const entry of toolCalls ?? []) {
      const call = ToolCall.safeParse(entry);
      if (!call.success) {
        out.push(unknownValue(entry));
        continue;
      }
      const held: KimiCall = { id: call.data.id, name: call.data.function.name, args: call.data.function.arguments, records: { assistant: obj(entry) ?? {} } };
      const { displaced, result } = this.calls.open(held.id, held);
      if (displaced) out.push(...mapKimiCall(displaced, undefined, this.cwd));
      if (result) out.push(...mapKimiCall(held, result, this.cwd));
    }
    return out;
  }

  private tool(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const parsed = ToolMessage.safeParse(record);
    // Its call, if any, stays pending and is reported without an outcome.
    if (!parsed.success) return [unknownLine(line)];
    const outcome: KimiOutcome = { record };
    const { call, displaced } = this.calls.close(parsed.data.tool_call_id, outcome);
    const out: DraftEvent[] = displaced ? [unknownValue(displaced.record)] : [];
    if (call) out.push(...mapKimiCall(call, outcome, this.cwd));
    return out;
  }
}
