// Qwen Code tool call + result -> one event (tool names: reference section 4, "Tool names -> category").
// Shell results carry their facts in a fixed text block ("Command: …\nDirectory: …\nOutput: …\nError: …\nExit Code:
// N\n…"); that documented format is the only text parsed, and only when the result is that block: a successful
// command's result is its bare output, which may hold any text (issue 41). The block's own Exit Code line follows the
// output, so the last one is Qwen's. Reading, searching or listing through the shell stays `command`.
import type { DraftEvent } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact, contentText } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export interface QwenCall {
  id: string;
  name: string;
  input: JsonObject;
  block: JsonObject;
}

export interface QwenOutcome {
  isError: boolean;
  content: unknown;
  block: JsonObject;
}

const KINDS = {
  run_shell_command: 'command',
  read_file: 'read',
  read_many_files: 'read',
  write_file: 'write',
  edit: 'write',
  notebook_edit: 'write',
  grep_search: 'search',
  glob: 'search',
  list_directory: 'list', // older releases
  agent: 'subagent',
  task: 'subagent', // older releases
} as const satisfies ToolKindTable;
export const qwenToolKind = toolKindLookup(KINDS);

export const unknownCall = (call: QwenCall, outcome?: QwenOutcome): DraftEvent => unknownValue(outcome ? { tool_use: call.block, tool_result: outcome.block } : { tool_use: call.block });

/** The input fields each kind reads; a call whose input fails its schema is `unknown` (issue 19, finding 7). */
const INPUTS = {
  command: z.object({ command: z.string(), directory: z.string().optional() }),
  read: z.object({ file_path: z.string().optional(), absolute_path: z.string().optional() }),
  write: z.object({ file_path: z.string().optional(), notebook_path: z.string().optional() }),
  search: z.object({ pattern: z.string(), path: z.string().optional() }),
  list: z.object({ path: z.string().optional() }),
  subagent: z.object({ subagent_type: z.string().optional() }),
};

export function subagentType(call: QwenCall): string | undefined {
  const parsed = INPUTS.subagent.safeParse(call.input);
  return parsed.success ? parsed.data.subagent_type : undefined;
}

/** The start of Qwen's shell result block (a failed command's result): "Command: …" then "Directory: …". */
const SHELL_BLOCK = /^Command: [\s\S]*?\nDirectory: .*\nOutput: /;

export function mapQwenCall(call: QwenCall, outcome: QwenOutcome | undefined, cwd: string | undefined): DraftEvent | undefined {
  const is_success = outcome ? !outcome.isError : undefined;
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const text = outcome ? (contentText(outcome.content) ?? '') : '';
  const unknown = () => unknownCall(call, outcome);
  switch (qwenToolKind(call.name)) {
    case 'command': {
      const parsed = INPUTS.command.safeParse(call.input);
      if (!parsed.success) return unknown();
      const block = SHELL_BLOCK.test(text) ? text : '';
      const exit = [...block.matchAll(/^Exit Code: (-?\d+)$/gm)].at(-1);
      const dir = /^Directory: (.+)$/m.exec(block)?.[1];
      return compact({
        type: 'command',
        command: parsed.data.command,
        working_directory: parsed.data.directory ?? (dir && dir !== '(root)' ? absolutePath(dir, cwd) : undefined),
        exit_code: exit ? Number(exit[1]) : undefined,
        is_success,
        tool_name: call.name,
      });
    }
    case 'read': {
      const parsed = INPUTS.read.safeParse(call.input);
      const file = parsed.success ? (parsed.data.file_path ?? parsed.data.absolute_path) : undefined;
      if (file === undefined) return unknown();
      const range = /^Read lines (\d+)-(\d+) of \d+/m.exec(text);
      return compact({ type: 'read', path: at(file)!, start_line: range ? Number(range[1]) : undefined, end_line: range ? Number(range[2]) : undefined, is_success, tool_name: call.name });
    }
    case 'write': {
      const parsed = INPUTS.write.safeParse(call.input);
      const file = parsed.success ? (parsed.data.file_path ?? parsed.data.notebook_path) : undefined;
      return file === undefined ? unknown() : compact({ type: 'write', path: at(file)!, is_success, tool_name: call.name });
    }
    case 'search': {
      const parsed = INPUTS.search.safeParse(call.input);
      return parsed.success ? compact({ type: 'search', query: parsed.data.pattern, path: at(parsed.data.path), is_success, tool_name: call.name }) : unknown();
    }
    case 'list': {
      const parsed = INPUTS.list.safeParse(call.input);
      return parsed.success ? compact({ type: 'list', path: at(parsed.data.path), is_success, tool_name: call.name }) : unknown();
    }
    case 'subagent':
      return undefined;
    case 'other':
      // skill (its result names no file), web_fetch, goals, worktrees, cron, MCP...: no event type of their own.
      return unknown();
  }
}
