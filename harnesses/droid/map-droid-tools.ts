// Droid tool_call + tool_result -> one event (tool names: `droid exec --list-tools`, reference section 11).
// Exit codes live only in the documented text "[Process exited with code N]"; read ranges in
// "[Showing lines A-B of N total lines]"; a skill's file in `filePath="…"`.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, arr, compact, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

export interface DroidCall {
  id: string;
  tool: string;
  parameters: JsonObject;
  record: JsonObject;
}

export type DroidToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'skill' | 'subagent' | 'other';

const KINDS: Record<string, DroidToolKind> = {
  Execute: 'command',
  Read: 'read',
  Create: 'write',
  Edit: 'write',
  MultiEdit: 'write',
  ApplyPatch: 'write',
  Grep: 'search',
  Glob: 'search',
  LS: 'list',
  Skill: 'skill',
  Task: 'subagent',
};

export function droidToolKind(tool: string): DroidToolKind {
  return KINDS[tool] ?? 'other';
}

const resultText = (result: JsonObject) => str(result.value) ?? str(obj(result.error)?.message) ?? '';
export const unknownCall = (call: DroidCall, result?: JsonObject): DraftEvent => unknownValue(result ? { tool_call: call.record, tool_result: result } : { tool_call: call.record });

export function mapDroidCall(call: DroidCall, result: JsonObject | undefined, cwd: string | undefined): DraftEvent | undefined {
  const p = call.parameters;
  const text = result ? resultText(result) : '';
  const is_success = result ? result.isError !== true : undefined;
  const path = (key: string) => {
    const v = str(p[key]);
    return v === undefined ? undefined : absolutePath(v, cwd);
  };
  switch (droidToolKind(call.tool)) {
    case 'command': {
      const command = str(p.command);
      if (command === undefined) return unknownCall(call, result);
      const exit = /\[Process exited with code (-?\d+)\]/.exec(text);
      return compact({ type: 'command', command, exit_code: exit ? Number(exit[1]) : undefined, is_success, tool_name: call.tool });
    }
    case 'read': {
      const file = path('file_path');
      if (file === undefined) return unknownCall(call, result);
      const range = /\[Showing lines (\d+)-(\d+) of \d+ total lines\]/.exec(text);
      return compact({ type: 'read', path: file, start_line: range ? Number(range[1]) : undefined, end_line: range ? Number(range[2]) : undefined, is_success, tool_name: call.tool });
    }
    case 'write': {
      const file = path('file_path') ?? path('path');
      return file === undefined ? unknownCall(call, result) : compact({ type: 'write', path: file, is_success, tool_name: call.tool });
    }
    case 'search': {
      const patterns = arr(p.patterns)?.map(str).filter((s): s is string => s !== undefined);
      const query = str(p.pattern) ?? (patterns && patterns.length > 0 ? patterns.join(' ') : undefined);
      return query === undefined ? unknownCall(call, result) : compact({ type: 'search', query, path: path('path') ?? path('folder'), is_success, tool_name: call.tool });
    }
    case 'list':
      return compact({ type: 'list', path: path('directory_path'), is_success, tool_name: call.tool });
    case 'skill': {
      const file = /filePath="([^"]+)"/.exec(text)?.[1];
      if (!file) return unknownCall(call, result);
      return compact({ type: 'skill', path: file, skill_name: str(p.skill), is_success, tool_name: call.tool });
    }
    case 'subagent':
      return undefined;
    case 'other':
      // TodoWrite, FetchUrl, WebSearch, missions, scripts, Slack...: no event type of their own.
      return unknownCall(call, result);
  }
}
