// Grok tool calls -> events. Tools (0.2.111, the `tools` of its chat requests to the stub): run_terminal_command,
// read_file, search_replace, write, list_dir, grep, spawn_subagent, todo_write, kill_command_or_subagent,
// get_command_or_subagent_output, monitor, scheduler_*, search_tool, use_tool, workflow, enter/exit_plan_mode,
// ask_user_question, web_search, image_*; `--tools` documents the shell tool as `run_terminal_cmd`
// (~/.grok/docs/user-guide/14-headless-mode.md). A call is an ACP `tool_call` in the session's updates.jsonl
// (`_meta["x.ai/tool"].name`, `rawInput` as the model sent it), followed by `tool_call_update`s (the input again,
// normalized; progress; then status `completed` or `failed` with `rawOutput`), which the translator pairs by
// toolCallId; this file turns a call and its outcome into events. spawn_subagent is the translator's own (its
// subagent_spawned / subagent_finished records report the subagent).
// A command's `completed` only says the tool ran: its verdict is rawOutput.exit_code (and timed_out). Arguments
// are read through zod schemas (extra keys are fine): a call whose arguments fail them is `unknown` with its raw
// records, never a default.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  run_terminal_command: 'command',
  run_terminal_cmd: 'command',
  read_file: 'read',
  write: 'write',
  search_replace: 'write',
  list_dir: 'list',
  grep: 'search',
  spawn_subagent: 'subagent',
} as const satisfies ToolKindTable;
export const grokToolKind = toolKindLookup(KINDS);

/** A call as the translator holds it: the tool, its input and output so far, and the records that reported it. */
export interface GrokCall {
  id: string;
  name: string;
  /** The session (main or a subagent's) whose updates.jsonl reported it. */
  session: string;
  input: unknown;
  output: unknown;
  /** The tool_call record and the call's latest update, as written (for `unknown`). */
  records: JsonObject;
  /** spawn_subagent: the subagent a subagent_spawned record reported for this call. */
  subagentId?: string;
}

/** The call's terminal update: ACP's `completed` or `failed`. */
export type GrokStatus = 'completed' | 'failed';

const text = z.string().min(1);
const lineNumber = z.int().positive();
const ARGS = {
  command: z.object({ command: text }),
  read: z.object({ target_file: text, offset: z.unknown().optional(), limit: z.unknown().optional() }),
  write: z.object({ file_path: text }),
  search: z.object({ pattern: text, path: text.optional() }),
  list: z.object({ target_directory: text.optional() }),
  subagent: z.object({ description: z.string().optional(), subagent_type: z.string().optional() }),
};
/** A shell command's rawOutput (`type: "Bash"`). */
const CommandOutput = z.object({ exit_code: z.int().optional(), current_dir: text.optional(), timed_out: z.boolean().optional() });
/** A read's rawOutput (`FileContent`). */
const ReadOutput = z.object({ FileContent: z.object({ total_lines: z.int().nonnegative().optional() }) });

export const unknownCall = (call: GrokCall): DraftEvent => unknownValue(call.records);

/** The subagent's name as the call gives it: its type, else its description. */
export function subagentName(call: GrokCall): string | undefined {
  const a = ARGS.subagent.safeParse(call.input);
  return a.success ? (a.data.subagent_type ?? a.data.description) : undefined;
}

/** The call's events (not spawn_subagent's); `status` is undefined when its terminal update never came. */
export function mapGrokCall(call: GrokCall, status: GrokStatus | undefined, cwd: string | undefined): DraftEvent[] {
  const ok = status === undefined ? undefined : status === 'completed';
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => [unknownCall(call)];
  const tool = call.name;
  switch (grokToolKind(tool)) {
    case 'command': {
      const a = ARGS.command.safeParse(call.input);
      if (!a.success) return unknown();
      const out = status === undefined ? undefined : CommandOutput.safeParse(call.output);
      const o = out?.success ? out.data : {};
      // `completed` means the tool ran; the command's own verdict is its exit code (a timeout is a failure).
      const success = status === 'failed' || o.timed_out === true ? false : o.exit_code === undefined ? undefined : o.exit_code === 0;
      return [compact({ type: 'command', command: a.data.command, working_directory: o.current_dir, exit_code: o.exit_code, is_success: success, tool_name: tool })];
    }
    case 'read': {
      const a = ARGS.read.safeParse(call.input);
      if (!a.success) return unknown();
      const offset = lineNumber.safeParse(a.data.offset);
      const limit = lineNumber.safeParse(a.data.limit);
      const read = ok === true ? ReadOutput.safeParse(call.output) : undefined;
      const total = read?.success ? read.data.FileContent.total_lines : undefined;
      // The range only when Grok read it: from `offset`, `limit` lines, never past the file's end.
      const start = ok === true && offset.success ? offset.data : undefined;
      const end = start !== undefined && limit.success && total !== undefined ? Math.min(start + limit.data - 1, total) : undefined;
      return [compact({ type: 'read', path: at(a.data.target_file)!, start_line: start, end_line: end !== undefined && end >= start! ? end : undefined, is_success: ok, tool_name: tool })];
    }
    case 'write': {
      const a = ARGS.write.safeParse(call.input);
      return a.success ? [compact({ type: 'write', path: at(a.data.file_path)!, is_success: ok, tool_name: tool })] : unknown();
    }
    case 'search': {
      const a = ARGS.search.safeParse(call.input);
      return a.success ? [compact({ type: 'search', query: a.data.pattern, path: at(a.data.path), is_success: ok, tool_name: tool })] : unknown();
    }
    case 'list': {
      const a = ARGS.list.safeParse(call.input);
      return a.success ? [compact({ type: 'list', path: at(a.data.target_directory), is_success: ok, tool_name: tool })] : unknown();
    }
    case 'subagent':
      // The translator reports subagents (subagent_spawned / subagent_finished); a spawn is never a tool event.
      return [];
    case 'other':
      // todo_write, web_search, MCP and other tools: no event type of their own.
      return unknown();
  }
}

/** The subagent a spawn_subagent call's rawOutput names (`SubagentCompleted` and the like), if readable. */
export function spawnedSubagentId(output: unknown): string | undefined {
  const id = obj(output)?.subagent_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
