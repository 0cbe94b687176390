// Droid `exec -o stream-json` -> normalized events. Records: system/init, message, reasoning (printed twice with
// the same id: emitted once), tool_call, tool_result, error, completion (terminal; absent after an API error).
// Every record is read through a zod schema of the fields used here; one that fails it is `unknown`. Calls and
// results are paired by id (shared/translate/pending-calls.ts): none is lost, none reported twice.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, StdoutLine } from '../../shared/adapter.ts';
import { StructuredTranslator } from '../../shared/translate/structured-translator.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { PendingCalls } from '../../shared/translate/pending-calls.ts';
import { unreadableUsageWarning } from '../../shared/translate/token-counts.ts';
import { ToolResult, droidToolKind, mapDroidCall, subagentName, unknownCall } from './map-droid-tools.ts';
import type { DroidCall } from './map-droid-tools.ts';
import { readDroidUsage } from './usage.ts';

const text = z.string();
// z.object: extra keys are accepted and left out of the parsed copy; what is passed on (parameters, usage) is the
// raw value, so `unknown` events and raw usage keep every field.
const SystemInit = z.object({ cwd: text.optional(), model: text.optional() });
const Message = z.object({ role: text, text });
const Reasoning = z.object({ id: text.optional(), text });
const ToolCall = z.object({ id: text.min(1), toolId: text.min(1).optional(), toolName: text.min(1).optional(), parameters: z.object({}) });
const ErrorRecord = z.object({ message: text, source: text.optional() });
const Completion = z.object({ usage: z.object({}).optional(), finalText: text.optional() });

interface HeldResult {
  result: ToolResult;
  record: JsonObject;
}

/** Same id, same tool, same parameters: a call printed again, not a second call. */
const sameCall = (a: DroidCall, b: DroidCall) => a.tool === b.tool && JSON.stringify(a.parameters) === JSON.stringify(b.parameters);

export class DroidTranslator extends StructuredTranslator {
  private readonly calls = new PendingCalls<DroidCall, HeldResult>();
  private readonly reasoningIds = new Set<string>();

  line(line: StdoutLine): DraftEvent[] {
    const r = this.sessionRecord(line);
    if (!r) return [unknownLine(line)];
    switch (r.type) {
      case 'system': {
        const init = SystemInit.safeParse(r);
        if (r.subtype !== 'init' || !init.success) return [unknownLine(line)];
        this.cwd = init.data.cwd ?? this.cwd;
        this.result.reported_model = init.data.model;
        return [];
      }
      case 'message': {
        const parsed = Message.safeParse(r);
        if (!parsed.success) return [unknownLine(line)];
        const { role, text: message } = parsed.data;
        if (role === 'user') return []; // the prompt echoed back
        if (role !== 'assistant') return [unknownLine(line)];
        return message.length > 0 ? [{ type: 'agent', message }] : [];
      }
      case 'reasoning': {
        const parsed = Reasoning.safeParse(r);
        if (!parsed.success) return [unknownLine(line)];
        const { id, text: message } = parsed.data;
        if (id !== undefined && this.reasoningIds.has(id)) return []; // the same block is printed twice
        if (id !== undefined) this.reasoningIds.add(id);
        return message.length > 0 ? [{ type: 'reasoning', message }] : [];
      }
      case 'tool_call': {
        const parsed = ToolCall.safeParse(r);
        const tool = parsed.data?.toolId ?? parsed.data?.toolName;
        if (!parsed.success || tool === undefined) return [unknownLine(line)];
        return this.call({ id: parsed.data.id, tool, parameters: r.parameters as JsonObject, record: r });
      }
      case 'tool_result': {
        const parsed = ToolResult.safeParse(r);
        return parsed.success ? this.toolResult({ result: parsed.data, record: r }) : [unknownLine(line)];
      }
      case 'error': {
        const parsed = ErrorRecord.safeParse(r);
        if (!parsed.success) return [unknownLine(line)];
        this.result.is_error = true;
        return [compact({ type: 'error', message: parsed.data.message, code: parsed.data.source })];
      }
      case 'completion': {
        const parsed = Completion.safeParse(r);
        if (!parsed.success) return [unknownLine(line)];
        const { finalText } = parsed.data;
        const usage = r.usage as JsonObject | undefined; // raw: kept whole in raw usage
        const read = usage ? readDroidUsage(usage) : undefined;
        this.result = { ...this.result, tokens: read?.tokens ?? null, raw_usage: usage ?? null, final_text: finalText, is_error: this.result.is_error ?? false };
        return read && read.unreadable.length > 0 ? [unreadableUsageWarning('droid', 'completion.usage', read.unreadable)] : [];
      }
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    // Calls that never got a result (a subagent's start was already reported), then results no call claimed.
    const events = this.calls.flush([], (call, out) => out.push(...this.unanswered(call)), (held) => held.record);
    return this.summary(events);
  }

  private call(call: DroidCall): DraftEvent[] {
    const answered = this.calls.answeredCall(call.id);
    if (answered && sameCall(answered, call)) return []; // printed again after its result
    const { displaced, result: early } = this.calls.open(call.id, call);
    if (displaced && sameCall(displaced, call) && !early) return []; // printed again while pending
    const out = displaced ? this.unanswered(displaced) : [];
    if (droidToolKind(call.tool) === 'subagent') out.push(compact({ type: 'orchestration', action: 'subagent_started', subagent_id: call.id, subagent_name: subagentName(call) }));
    if (early) out.push(...this.answered(call, early));
    return out;
  }

  private toolResult(held: HeldResult): DraftEvent[] {
    const { call, displaced } = this.calls.close(held.result.id, held);
    // A result before its call is held until the call arrives; one it displaces is reported unpaired.
    if (!call) return displaced ? [unknownValue(displaced.record)] : [];
    return this.answered(call, held);
  }

  private answered(call: DroidCall, { result, record }: HeldResult): DraftEvent[] {
    if (droidToolKind(call.tool) === 'subagent') {
      const ok = !result.isError;
      return [compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: call.id, subagent_name: subagentName(call), is_success: ok })];
    }
    return [mapDroidCall(call, result, record, this.cwd) ?? unknownCall(call, record)];
  }

  private unanswered(call: DroidCall): DraftEvent[] {
    if (droidToolKind(call.tool) === 'subagent') return [];
    return [mapDroidCall(call, undefined, undefined, this.cwd) ?? unknownCall(call)];
  }
}
