// Copilot tool.execution_start + tool.execution_complete -> one event (tool names: reference section 9).
// A shell command's exit code is `shellExecution.exitCode` (a failed command still says success:true);
// `view` of a directory is a listing (toolTelemetry.properties.viewType "directory"); a skill names no file.
import type { DraftEvent } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import type { ToolComplete } from './records.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export interface CopilotCall {
  name: string;
  args: JsonObject;
  start: JsonObject;
}

const KINDS = {
  bash: 'command',
  view: 'view',
  create: 'write',
  edit: 'write',
  grep: 'search',
  glob: 'search',
  skill: 'skill',
  task: 'subagent',
} as const satisfies ToolKindTable;
export const copilotToolKind = toolKindLookup(KINDS);

const unknownCall = (call: CopilotCall, complete?: JsonObject): DraftEvent => unknownValue(complete ? { tool_start: call.start, tool_complete: complete } : { tool_start: call.start });

const lineNumber = z.int().nonnegative();
/** The arguments each kind reads; a call whose arguments fail their schema is `unknown` (issue 19, finding 7). */
const ARGUMENTS = {
  command: z.object({ command: z.string() }),
  // view_range [a, -1] means "to the end of the file".
  view: z.object({ path: z.string(), view_range: z.tuple([lineNumber, z.union([lineNumber, z.literal(-1)])]).optional() }),
  write: z.object({ path: z.string() }),
  search: z.object({ pattern: z.string(), path: z.string().optional(), paths: z.array(z.string()).optional() }),
};

/** A tool.execution_complete: its data read through ToolComplete, and the data as printed (for `unknown`). */
export interface CopilotOutcome {
  complete: ToolComplete;
  raw: JsonObject;
}

/** `outcome` is undefined when the session ended before the completion came. */
export function mapCopilotCall(call: CopilotCall, outcome: CopilotOutcome | undefined, cwd: string | undefined): DraftEvent | undefined {
  const tool_name = call.name;
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const complete = outcome?.complete;
  const succeeded = complete?.success;
  const unknown = () => unknownCall(call, outcome?.raw);
  switch (copilotToolKind(call.name)) {
    case 'command': {
      const a = ARGUMENTS.command.safeParse(call.args);
      if (!a.success) return unknown();
      const exit_code = complete?.shellExecution?.exitCode;
      const is_success = exit_code !== undefined ? exit_code === 0 && succeeded !== false : succeeded;
      return compact({ type: 'command', command: a.data.command, exit_code, is_success, tool_name });
    }
    case 'view': {
      const a = ARGUMENTS.view.safeParse(call.args);
      if (!a.success) return unknown();
      // Only the completion says whether a file or a directory was viewed: without it, nothing is guessed.
      const viewType = complete?.toolTelemetry?.properties?.viewType;
      if (viewType === 'directory') return compact({ type: 'list', path: at(a.data.path), is_success: succeeded, tool_name });
      if (viewType !== 'file') return unknown();
      const [start, end] = a.data.view_range ?? [];
      return compact({ type: 'read', path: at(a.data.path)!, start_line: start, end_line: end === -1 ? undefined : end, is_success: succeeded, tool_name });
    }
    case 'write': {
      const a = ARGUMENTS.write.safeParse(call.args);
      return a.success ? compact({ type: 'write', path: at(a.data.path)!, is_success: succeeded, tool_name }) : unknown();
    }
    case 'search': {
      const a = ARGUMENTS.search.safeParse(call.args);
      if (!a.success) return unknown();
      const one = a.data.paths?.length === 1 ? a.data.paths[0] : a.data.path;
      return compact({ type: 'search', query: a.data.pattern, path: at(one), is_success: succeeded, tool_name });
    }
    case 'subagent':
      return undefined; // subagent.started / subagent.completed report it with the subagent's own id
    case 'skill':
    case 'other':
      // skills (no file named), read_bash/stop_bash/list_bash, sql, *_agent, fetch docs, MCP: no type of their own.
      return unknown();
  }
}
