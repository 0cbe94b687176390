// Copilot tool.execution_start + tool.execution_complete -> one event (tool names: reference section 9).
// A shell command's exit code is `shellExecution.exitCode` (a failed command still says success:true);
// `view` of a directory is a listing (toolTelemetry.properties.viewType "directory"); a skill names no file.
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, arr, bool, compact, count, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

export interface CopilotCall {
  name: string;
  args: JsonObject;
  start: JsonObject;
}

export type CopilotToolKind = 'command' | 'view' | 'write' | 'search' | 'skill' | 'subagent' | 'other';

const KINDS: Record<string, CopilotToolKind> = {
  bash: 'command',
  view: 'view',
  create: 'write',
  edit: 'write',
  grep: 'search',
  glob: 'search',
  skill: 'skill',
  task: 'subagent',
};

export function copilotToolKind(name: string): CopilotToolKind {
  return KINDS[name] ?? 'other';
}

const unknownCall = (call: CopilotCall, complete?: JsonObject): DraftEvent => unknownValue(complete ? { tool_start: call.start, tool_complete: complete } : { tool_start: call.start });

/** `complete` is the execution_complete data, undefined when the session ended before it arrived. */
export function mapCopilotCall(call: CopilotCall, complete: JsonObject | undefined, cwd: string | undefined): DraftEvent | undefined {
  const a = call.args;
  const tool_name = call.name;
  const path = (value: unknown) => {
    const p = str(value);
    return p === undefined ? undefined : absolutePath(p, cwd);
  };
  const succeeded = complete ? bool(complete.success) : undefined;
  switch (copilotToolKind(call.name)) {
    case 'command': {
      const command = str(a.command);
      if (command === undefined) return unknownCall(call, complete);
      const exit_code = count(obj(complete?.shellExecution)?.exitCode);
      const is_success = exit_code !== undefined ? exit_code === 0 && succeeded !== false : succeeded;
      return compact({ type: 'command', command, exit_code, is_success, tool_name });
    }
    case 'view': {
      const target = path(a.path);
      if (target === undefined) return unknownCall(call, complete);
      const viewType = str(obj(obj(complete?.toolTelemetry)?.properties)?.viewType);
      if (viewType === 'directory') return compact({ type: 'list', path: target, is_success: succeeded, tool_name });
      const range = arr(a.view_range);
      const start_line = count(range?.[0]);
      const end = range?.[1];
      // view_range [a, -1] means "to the end of the file": no end line is known.
      return compact({ type: 'read', path: target, start_line, end_line: end === -1 ? undefined : count(end), is_success: succeeded, tool_name });
    }
    case 'write': {
      const target = path(a.path);
      return target === undefined ? unknownCall(call, complete) : compact({ type: 'write', path: target, is_success: succeeded, tool_name });
    }
    case 'search': {
      const query = str(a.pattern);
      if (query === undefined) return unknownCall(call, complete);
      const paths = arr(a.paths)?.map(str);
      const one = paths?.length === 1 ? paths[0] : str(a.path);
      return compact({ type: 'search', query, path: one === undefined ? undefined : absolutePath(one, cwd), is_success: succeeded, tool_name });
    }
    case 'subagent':
      return undefined; // subagent.started / subagent.completed report it with the subagent's own id
    case 'skill':
    case 'other':
      // skills (no file named), read_bash/stop_bash/list_bash, sql, *_agent, fetch docs, MCP: no type of their own.
      return unknownCall(call, complete);
  }
}
