// Qwen Code tool call + result -> one event (tool names: reference section 4, "Tool names -> category").
// Shell results carry their facts in a fixed text block ("Command: …\nDirectory: …\nExit Code: N"); that
// documented format is the only text parsed. Reading, searching or listing through the shell stays `command`.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, contentText, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

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

export type QwenToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'subagent' | 'other';

const KINDS: Record<string, QwenToolKind> = {
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
};

export function qwenToolKind(name: string): QwenToolKind {
  return KINDS[name] ?? 'other';
}

export const unknownCall = (call: QwenCall, outcome?: QwenOutcome): DraftEvent => unknownValue(outcome ? { tool_use: call.block, tool_result: outcome.block } : { tool_use: call.block });

export function mapQwenCall(call: QwenCall, outcome: QwenOutcome | undefined, cwd: string | undefined): DraftEvent | undefined {
  const is_success = outcome ? !outcome.isError : undefined;
  const path = (key: string) => {
    const p = str(call.input[key]);
    return p === undefined ? undefined : absolutePath(p, cwd);
  };
  const text = outcome ? (contentText(outcome.content) ?? '') : '';
  switch (qwenToolKind(call.name)) {
    case 'command': {
      const command = str(call.input.command);
      if (command === undefined) return unknownCall(call, outcome);
      const exit = /^Exit Code: (-?\d+)$/m.exec(text);
      const dir = /^Directory: (.+)$/m.exec(text)?.[1];
      return compact({
        type: 'command',
        command,
        working_directory: str(call.input.directory) ?? (dir && dir !== '(root)' ? absolutePath(dir, cwd) : undefined),
        exit_code: exit ? Number(exit[1]) : undefined,
        is_success,
        tool_name: call.name,
      });
    }
    case 'read': {
      const file = path('file_path') ?? path('absolute_path');
      if (file === undefined) return unknownCall(call, outcome);
      const range = /^Read lines (\d+)-(\d+) of \d+/m.exec(text);
      return compact({ type: 'read', path: file, start_line: range ? Number(range[1]) : undefined, end_line: range ? Number(range[2]) : undefined, is_success, tool_name: call.name });
    }
    case 'write': {
      const file = path('file_path') ?? path('notebook_path');
      return file === undefined ? unknownCall(call, outcome) : compact({ type: 'write', path: file, is_success, tool_name: call.name });
    }
    case 'search': {
      const query = str(call.input.pattern);
      return query === undefined ? unknownCall(call, outcome) : compact({ type: 'search', query, path: path('path'), is_success, tool_name: call.name });
    }
    case 'list':
      return compact({ type: 'list', path: path('path'), is_success, tool_name: call.name });
    case 'subagent':
      return undefined;
    case 'other':
      // skill (its result names no file), web_fetch, goals, worktrees, cron, MCP...: no event type of their own.
      return unknownCall(call, outcome);
  }
}
