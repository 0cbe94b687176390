// Gemini CLI tool_use + tool_result -> one event (tool names: reference section 3). Gemini marks failed shell
// commands `status: "success"`: the exit code is only in the documented output text "Command exited with code: N".
// Skill files are named only in the documented "Resources loaded from `<dir>`" text.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, count, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

export interface GeminiCall {
  id: string;
  name: string;
  parameters: JsonObject;
  record: JsonObject;
}

export type GeminiToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'skill' | 'subagent' | 'other';

const KINDS: Record<string, GeminiToolKind> = {
  run_shell_command: 'command',
  read_file: 'read',
  read_many_files: 'read', // older releases
  write_file: 'write',
  replace: 'write',
  grep_search: 'search',
  search_file_content: 'search', // older releases
  glob: 'search',
  list_directory: 'list',
  activate_skill: 'skill',
  invoke_agent: 'subagent',
};

export function geminiToolKind(name: string): GeminiToolKind {
  return KINDS[name] ?? 'other';
}

export const unknownCall = (call: GeminiCall, result?: JsonObject): DraftEvent => unknownValue(result ? { tool_use: call.record, tool_result: result } : { tool_use: call.record });

export function mapGeminiCall(call: GeminiCall, result: JsonObject | undefined, cwd: string | undefined): DraftEvent | undefined {
  const p = call.parameters;
  const output = str(result?.output) ?? str(obj(result?.error)?.message) ?? '';
  const statusOk = result ? result.status === 'success' : undefined;
  const path = (key: string) => {
    const v = str(p[key]);
    return v === undefined ? undefined : absolutePath(v, cwd);
  };
  switch (geminiToolKind(call.name)) {
    case 'command': {
      const command = str(p.command);
      if (command === undefined) return unknownCall(call, result);
      const exit = /Command exited with code: (-?\d+)/.exec(output);
      const exitCode = exit ? Number(exit[1]) : undefined;
      return compact({
        type: 'command',
        command,
        working_directory: path('dir_path'),
        exit_code: exitCode,
        is_success: statusOk === undefined ? undefined : statusOk && (exitCode === undefined || exitCode === 0),
        tool_name: call.name,
      });
    }
    case 'read': {
      const file = path('file_path');
      if (file === undefined) return unknownCall(call, result);
      const range = /^Read lines (\d+)-(\d+) of \d+/m.exec(output);
      const start = range ? Number(range[1]) : count(p.start_line);
      const end = range ? Number(range[2]) : count(p.end_line);
      return compact({ type: 'read', path: file, start_line: start, end_line: end, is_success: statusOk, tool_name: call.name });
    }
    case 'write': {
      const file = path('file_path');
      return file === undefined ? unknownCall(call, result) : compact({ type: 'write', path: file, is_success: statusOk, tool_name: call.name });
    }
    case 'search': {
      const query = str(p.pattern);
      return query === undefined ? unknownCall(call, result) : compact({ type: 'search', query, path: path('dir_path'), is_success: statusOk, tool_name: call.name });
    }
    case 'list':
      return compact({ type: 'list', path: path('dir_path'), is_success: statusOk, tool_name: call.name });
    case 'skill': {
      const dir = /Resources loaded from `([^`]+)`/.exec(output)?.[1];
      if (!dir) return unknownCall(call, result);
      return compact({ type: 'skill', path: `${dir.replace(/\/$/, '')}/SKILL.md`, skill_name: str(p.name), is_success: statusOk, tool_name: call.name });
    }
    case 'subagent':
      return undefined;
    case 'other':
      // web_fetch, google_web_search, update_topic, plan mode, background processes, MCP: no event type.
      return unknownCall(call, result);
  }
}
