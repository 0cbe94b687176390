// Amp `-x --stream-json --stream-json-thinking` -> normalized events. Amp promises "Claude Code-compatible stream
// JSON" (ampcode.com/news/streaming-json): records system/init, user, assistant, result, every line carrying the
// thread id (`T-…`) as session_id. Every documented record type is handled; anything else becomes `unknown`.
import type { DraftEvent } from '../../shared/events.ts';
import type { SessionResult, SessionTranslator, StdoutLine, TranslatorContext } from '../../shared/adapter.ts';
import { arr, bool, compact, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownLine, unknownValue } from '../../shared/translate/best-effort.ts';
import { ampToolKind, mapToolCall } from './map-amp-tools.ts';
import type { AmpToolCall } from './map-amp-tools.ts';
import { addUsage, ampTokens, messageUsage } from './usage.ts';
import type { AmpUsageTotals } from './usage.ts';

export class AmpTranslator implements SessionTranslator {
  private session: string | undefined;
  private cwd: string | undefined;
  private readonly calls = new Map<string, AmpToolCall>();
  private usage: AmpUsageTotals | undefined;
  private readonly rawUsage: unknown[] = [];
  private readonly countedMessages = new Set<string>();
  private result: SessionResult = { tokens: null, raw_usage: null, reported_cost_usd: null };

  constructor(context: TranslatorContext) {
    this.cwd = context.workdir;
  }

  sessionId(): string | undefined {
    return this.session;
  }

  line(line: StdoutLine): DraftEvent[] {
    const record = obj(line.json);
    if (!record) return [unknownLine(line)];
    const sid = str(record.session_id);
    if (sid) this.session = sid;
    switch (record.type) {
      case 'system':
        return this.system(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'user':
        return this.user(record);
      case 'result':
        return this.terminal(record);
      default:
        return [unknownLine(line)];
    }
  }

  finish(): { events: DraftEvent[]; result: SessionResult } {
    // Calls that never got a result: reported without an outcome (a subagent's start was already reported).
    const events: DraftEvent[] = [];
    for (const call of this.calls.values()) {
      if (ampToolKind(call.name) !== 'subagent') events.push(mapToolCall(call, undefined, this.cwd));
    }
    this.calls.clear();
    this.result.tokens = ampTokens(this.usage);
    this.result.raw_usage = this.rawUsage.length > 0 ? this.rawUsage : null;
    if (this.session) this.result.session_id = this.session;
    return { events, result: this.result };
  }

  private system(record: JsonObject, line: StdoutLine): DraftEvent[] {
    if (record.subtype !== 'init') return [unknownLine(line)];
    // The documented sample prints a home-relative cwd ("~/dev/labs"); only an absolute one beats the workdir.
    const cwd = str(record.cwd);
    if (cwd?.startsWith('/')) this.cwd = cwd;
    return [];
  }

  private assistant(record: JsonObject, line: StdoutLine): DraftEvent[] {
    const message = obj(record.message);
    const blocks = arr(message?.content);
    if (!message || !blocks) return [unknownLine(line)];
    this.countUsage(message);
    const model = str(message.model);
    if (model) this.result.reported_model = model;
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      switch (block?.type) {
        case 'text': {
          const text = str(block.text);
          if (text === undefined) out.push(unknownValue(block));
          else if (text.length > 0) out.push({ type: 'agent', message: text });
          break;
        }
        case 'thinking': {
          const text = str(block.thinking);
          if (text === undefined) out.push(unknownValue(block));
          else if (text.length > 0) out.push({ type: 'reasoning', message: text });
          break;
        }
        case 'tool_use': {
          const id = str(block.id);
          const name = str(block.name);
          const input = obj(block.input);
          if (!id || !name || !input) {
            out.push(unknownValue(block));
            break;
          }
          this.calls.set(id, { id, name, input, block });
          // A subagent is reported as started when it is launched, and completed when its result comes back.
          if (ampToolKind(name) === 'subagent') out.push({ type: 'orchestration', action: 'subagent_started', subagent_id: id, subagent_name: name });
          break;
        }
        default:
          out.push(unknownValue(block ?? raw));
      }
    }
    return out;
  }

  private countUsage(message: JsonObject): void {
    const id = str(message.id);
    if (id !== undefined && this.countedMessages.has(id)) return;
    const one = messageUsage(message.usage);
    if (!one) return;
    if (id !== undefined) this.countedMessages.add(id);
    this.usage = addUsage(this.usage, one);
    this.rawUsage.push(message.usage);
  }

  private user(record: JsonObject): DraftEvent[] {
    const blocks = arr(obj(record.message)?.content);
    if (!blocks) return [];
    const out: DraftEvent[] = [];
    for (const raw of blocks) {
      const block = obj(raw);
      if (block?.type !== 'tool_result') continue; // the prompt echoed back
      const id = str(block.tool_use_id);
      const call = id ? this.calls.get(id) : undefined;
      if (!id || !call) {
        out.push(unknownValue(block));
        continue;
      }
      this.calls.delete(id);
      const outcome = { isError: bool(block.is_error) ?? false, block };
      if (ampToolKind(call.name) === 'subagent') {
        const ok = !outcome.isError;
        out.push({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: call.id, subagent_name: call.name, is_success: ok });
      } else {
        out.push(mapToolCall(call, outcome, this.cwd));
      }
    }
    return out;
  }

  private terminal(record: JsonObject): DraftEvent[] {
    this.result.is_error = bool(record.is_error);
    this.result.final_text = str(record.result);
    if (record.is_error !== true) return [];
    // Error results carry the reason in `error` (amp_sdk ErrorResultMessage) or, Claude-style, in `result`.
    const message = str(record.error) ?? str(record.result) ?? 'Amp reported an error';
    return [compact({ type: 'error', message, code: str(record.subtype) })];
  }
}
