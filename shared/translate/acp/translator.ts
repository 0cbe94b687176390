// The Agent Client Protocol as a session's raw stream (issue 41): the driver is the agent's ACP client
// (driver/acp/client.ts) and hands over every JSON-RPC message the agent wrote on its stdout, one per line, so a
// recorded ACP session replays through `tcab translate --protocol acp` like any stdout. One mapping serves every ACP
// agent:
//   - `session/update` notifications: message and thought chunks become `agent` / `reasoning` events, one per
//     message (chunks are joined until the message id or the kind of update changes); tool calls become the event of
//     their ACP `kind` once they end (`tool_call_update` status completed / failed), their fields merged across
//     updates: execute -> command, read -> read (a directory -> list), edit / delete / move -> write, search ->
//     search; fetch, think, other and anything unreadable -> `unknown` with the call's records (never a guess);
//     `notice` -> warning; the agent's commands, modes, config and session info are housekeeping (no event).
//   - responses: `session/new` names the session; `session/prompt` ends the turn with its stop reason and, where the
//     agent sends ACP's (unstable) usage, the turn's tokens; a JSON-RPC error -> `error`.
// ACP reports no command exit code of its own: a command's `exit_code` / `is_success` come only from a raw output
// that carries one (`exit_code`, `exitCode`, `metadata.exit`), never from the call's status (the tool ran, the
// command may still have failed).
import type { DraftEvent } from '../../events.ts';
import type { SessionReports, SessionResult, StdoutLine, TranslatorContext } from '../../adapter.ts';
import type { TokenUsage, UsageShape } from '../../usage.ts';
import { unknownValue } from '../best-effort.ts';
import { absolutePath, arr, compact, count, num, obj, str } from '../json.ts';
import type { JsonObject } from '../json.ts';
import { StructuredTranslator } from '../structured-translator.ts';

/** ACP's `Usage` (unstable): totals of one prompt turn. */
export const ACP_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    "ACP's session/prompt response `usage` (unstable), summed over turns: inputTokens -> input, outputTokens -> output. ACP does not say " +
    'whether inputTokens includes cachedReadTokens/cachedWriteTokens or outputTokens includes thoughtTokens, so a turn reporting any of ' +
    'them leaves the tokens null (kept raw). usage_update cost in USD is the reported cost.',
};

interface Call {
  id: string;
  records: JsonObject[];
  fields: JsonObject;
}

const HOUSEKEEPING = new Set(['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'compaction_update', 'compaction_summary_chunk', 'user_message_chunk']);
const ENDED = new Set(['completed', 'failed']);

export class AcpTranslator extends StructuredTranslator {
  /** The message being streamed: its kind, its id, its text so far. */
  private open: { type: 'agent' | 'reasoning'; id: string | undefined; text: string } | undefined;
  private readonly calls = new Map<string, Call>();
  private readonly turns: JsonObject[] = [];
  private stopReasons: string[] = [];
  private costUsd: number | undefined;

  constructor(context: TranslatorContext = {}) {
    super(context);
  }

  line(line: StdoutLine): DraftEvent[] {
    const message = obj(line.json);
    if (!message || message.jsonrpc !== '2.0') return [unknownValue(line.json ?? line.text)];
    const method = str(message.method);
    if (method === 'session/update') return this.update(message);
    // A permission request carries the call it is for (some agents announce a call only there: Gemini CLI's
    // commands): merged into the call, whose end reports it. The client answered by the run's policy.
    if (method === 'session/request_permission') {
      const call = obj(obj(message.params)?.toolCall);
      return call ? [...this.flushText(), ...this.toolCall(call)] : [unknownValue(message)];
    }
    if (method !== undefined) return [unknownValue(message)];
    if ('error' in message) {
      const error = obj(message.error);
      return [...this.flushText(), compact({ type: 'error' as const, message: str(error?.message) ?? JSON.stringify(message.error), code: error && 'code' in error ? String(error.code as number) : undefined })];
    }
    const result = obj(message.result);
    if (!result) return [unknownValue(message)];
    const sessionId = str(result.sessionId);
    if (sessionId) this.session = sessionId;
    const stopReason = str(result.stopReason);
    if (stopReason !== undefined) {
      this.stopReasons.push(stopReason);
      if (obj(result.usage)) this.turns.push(obj(result.usage)!);
      return this.flushText();
    }
    return [];
  }

  private update(message: JsonObject): DraftEvent[] {
    const params = obj(message.params);
    const update = obj(params?.update);
    const kind = str(update?.sessionUpdate);
    if (!params || !update || !kind) return [unknownValue(message)];
    const sessionId = str(params.sessionId);
    if (sessionId) this.session = sessionId;
    if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') return this.chunk(kind === 'agent_message_chunk' ? 'agent' : 'reasoning', update, message);
    if (HOUSEKEEPING.has(kind)) return [];
    if (kind === 'tool_call' || kind === 'tool_call_update') return [...this.flushText(), ...this.toolCall(update)];
    if (kind === 'usage_update') {
      const cost = obj(update.cost);
      if (cost && str(cost.currency) === 'USD' && num(cost.amount) !== undefined && num(cost.amount)! >= 0) this.costUsd = num(cost.amount);
      return [];
    }
    if (kind === 'notice') {
      const text = str(update.message) ?? str(obj(update.content)?.text);
      return [...this.flushText(), text ? { type: 'warning', message: text, code: 'acp_notice' } : unknownValue(message)];
    }
    return [...this.flushText(), unknownValue(message)];
  }

  private chunk(type: 'agent' | 'reasoning', update: JsonObject, message: JsonObject): DraftEvent[] {
    const content = obj(update.content);
    const text = content?.type === 'text' ? str(content.text) : undefined;
    if (text === undefined) return [...this.flushText(), unknownValue(message)];
    const id = str(update.messageId);
    const out = this.open && (this.open.type !== type || this.open.id !== id) ? this.flushText() : [];
    if (this.open) this.open.text += text;
    else this.open = { type, id, text };
    return out;
  }

  private flushText(): DraftEvent[] {
    const open = this.open;
    this.open = undefined;
    if (!open || open.text.length === 0) return [];
    return [open.type === 'agent' ? { type: 'agent', message: open.text } : { type: 'reasoning', message: open.text }];
  }

  private toolCall(update: JsonObject): DraftEvent[] {
    const id = str(update.toolCallId);
    if (!id) return [unknownValue(update)];
    const call = this.calls.get(id) ?? { id, records: [], fields: {} };
    call.records.push(update);
    for (const [key, value] of Object.entries(update)) if (key !== 'sessionUpdate' && value !== undefined && value !== null) call.fields[key] = value;
    this.calls.set(id, call);
    if (!ENDED.has(str(call.fields.status) ?? '')) return [];
    this.calls.delete(id);
    return [this.toolEvent(call)];
  }

  /** The event of an ended call (or of one that never ended, at the end of the session: no outcome then). */
  private toolEvent(call: Call): DraftEvent {
    const f = call.fields;
    const input = obj(f.rawInput) ?? {};
    const status = str(f.status);
    const ok = status === 'completed' ? true : status === 'failed' ? false : undefined;
    const location = obj(arr(f.locations)?.[0]);
    const path = str(location?.path) ?? firstString(input, ['path', 'file_path', 'filePath', 'absolute_path', 'dir_path', 'directory', 'target_file']);
    const unknown = () => unknownValue(call.records.length === 1 ? call.records[0] : call.records);
    switch (str(f.kind)) {
      case 'execute': {
        // ACP agents title a shell call with its command line; raw input, where sent, is more exact.
        const command = firstString(input, ['command', 'cmd']) ?? joined(input.command) ?? joined(input.argv) ?? nonEmpty(str(f.title));
        if (command === undefined) return unknown();
        const exit = exitCodeOf(f.rawOutput);
        return compact({ type: 'command' as const, command, working_directory: firstString(input, ['cwd', 'workdir', 'dir_path']), exit_code: exit, is_success: exit === undefined ? undefined : exit === 0 });
      }
      case 'read': {
        if (path === undefined) return unknown();
        const listing = 'dir_path' in input || 'directory' in input || (str(f.title) ?? '').toLowerCase().startsWith('list');
        if (listing) return compact({ type: 'list' as const, path: absolutePath(path, this.cwd), is_success: ok });
        return compact({ type: 'read' as const, path: absolutePath(path, this.cwd), start_line: count(location?.line), is_success: ok });
      }
      case 'edit':
      case 'delete':
      case 'move':
        return path === undefined ? unknown() : compact({ type: 'write' as const, path: absolutePath(path, this.cwd), is_success: ok });
      case 'search': {
        // Without raw input the title is the only description of the search ACP gives (Gemini CLI: `'hello' within ./`).
        const query = firstString(input, ['pattern', 'query', 'regex', 'glob']) ?? (Object.keys(input).length === 0 ? nonEmpty(str(f.title)) : undefined);
        if (query === undefined) {
          // A search kind with a directory and no pattern is a listing (Gemini CLI's list_directory is `search`).
          return path !== undefined ? compact({ type: 'list' as const, path: absolutePath(path, this.cwd), is_success: ok }) : unknown();
        }
        return compact({ type: 'search' as const, query, path: path === undefined ? undefined : absolutePath(path, this.cwd), is_success: ok });
      }
      default:
        return unknown();
    }
  }

  finish(_reports?: SessionReports): { events: DraftEvent[]; result: SessionResult } {
    const events = this.flushText();
    for (const call of this.calls.values()) events.push(this.toolEvent(call));
    this.calls.clear();
    this.result = { ...this.result, ...usageOf(this.turns), reported_cost_usd: this.costUsd ?? null };
    const stop = this.stopReasons.at(-1);
    if (stop !== undefined && stop !== 'end_turn') {
      this.result.is_error = true;
      events.push({ type: 'error', message: `the agent ended its turn with stop reason "${stop}"`, code: `acp_${stop}` });
    } else if (stop === 'end_turn') {
      this.result.is_error = false;
    }
    return this.summary(events);
  }
}

function firstString(input: JsonObject, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = str(input[key]);
    if (value !== undefined && value.length > 0) return value;
  }
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim().length > 0 ? value : undefined;
}

function joined(value: unknown): string | undefined {
  const parts = arr(value);
  return parts && parts.length > 0 && parts.every((p) => typeof p === 'string') ? (parts as string[]).join(' ') : undefined;
}

function exitCodeOf(rawOutput: unknown): number | undefined {
  const output = obj(rawOutput);
  if (!output) return undefined;
  for (const value of [output.exit_code, output.exitCode, obj(output.metadata)?.exit, obj(output.metadata)?.exit_code]) {
    if (typeof value === 'number' && Number.isInteger(value)) return value;
  }
  return undefined;
}

/**
 * The turns' ACP usage summed. ACP does not say whether inputTokens includes cached tokens, nor whether outputTokens
 * includes thoughtTokens (agents differ), so the sum is exact only while no turn reports either: then input and output
 * are as reported, and a class a turn reported as 0 is 0; a class never reported stays null. A turn with cached or
 * thought tokens, or an unreadable count, leaves the tokens null (the raw usage is kept either way).
 */
function usageOf(turns: readonly JsonObject[]): Pick<SessionResult, 'tokens' | 'raw_usage'> {
  if (turns.length === 0) return { tokens: null, raw_usage: null };
  const raw = turns.length === 1 ? turns[0]! : [...turns];
  const tokens: TokenUsage = { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  const optional = { cache_read: 'cachedReadTokens', cache_write: 'cachedWriteTokens', reasoning: 'thoughtTokens' } as const;
  for (const turn of turns) {
    const [input, output] = [count(turn.inputTokens), count(turn.outputTokens)];
    if (input === undefined || output === undefined) return { tokens: null, raw_usage: raw };
    tokens.input! += input;
    tokens.output! += output;
    for (const [cls, key] of Object.entries(optional) as [keyof typeof optional, string][]) {
      if (turn[key] === undefined || turn[key] === null) tokens[cls] = null;
      else if (count(turn[key]) !== 0) return { tokens: null, raw_usage: raw };
    }
  }
  return { tokens, raw_usage: raw };
}
