// Gemini CLI tool_use + tool_result -> one event (tool names: reference section 3). Gemini marks failed shell
// commands `status: "success"`: a shell command's outcome is reported only by the tool's own display text, which
// is the whole output when the command printed nothing ("Command exited with code: N", "Command terminated by
// signal: S"); a command that printed something gets its output only, so its outcome is not reported (issue 41).
// Skill files are named only in the documented "Resources loaded from `<dir>`" text.
import type { DraftEvent } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import type { ToolResult } from './records.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export interface GeminiCall {
  id: string;
  name: string;
  parameters: JsonObject;
  record: JsonObject;
}

const KINDS = {
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
} as const satisfies ToolKindTable;
export const geminiToolKind = toolKindLookup(KINDS);

export const unknownCall = (call: GeminiCall, result?: JsonObject): DraftEvent => unknownValue(result ? { tool_use: call.record, tool_result: result } : { tool_use: call.record });

const lineNumber = z.int().nonnegative();
/** The parameters each kind reads; a call whose parameters fail their schema is `unknown` (issue 19, finding 7). */
const PARAMETERS = {
  command: z.object({ command: z.string(), dir_path: z.string().optional() }),
  read: z.object({ file_path: z.string(), start_line: lineNumber.optional(), end_line: lineNumber.optional() }),
  write: z.object({ file_path: z.string() }),
  search: z.object({ pattern: z.string(), dir_path: z.string().optional() }),
  list: z.object({ dir_path: z.string().optional() }),
  skill: z.object({ name: z.string().optional() }),
  subagent: z.object({ agent_name: z.string().optional() }),
};

export function subagentName(call: GeminiCall): string | undefined {
  const parsed = PARAMETERS.subagent.safeParse(call.parameters);
  return parsed.success ? parsed.data.agent_name : undefined;
}

/** A tool_result: the fields read through ToolResultRecord, and the record as printed (for `unknown`). */
export interface GeminiOutcome {
  result: ToolResult;
  raw: JsonObject;
}

/** Gemini's display texts for a shell command that printed nothing (run_shell_command's returnDisplay): whole output. */
const EXITED = /^Command exited with code: (-?\d+)$/;
const SIGNALLED = /^Command terminated by signal: \S+$/;

/**
 * A shell command's own outcome, from what reports it (issue 41): a tool that failed (`status: "error"`: the
 * command could not run) is a failure; with `status: "success"` only Gemini's outcome text is read. Anything else
 * (the command's own output, which may even contain such a line) reports no outcome: no exit code, no verdict.
 */
function shellOutcome(result: ToolResult | undefined): ShellOutcome {
  if (!result) return {};
  return result.status === 'error' ? { isSuccess: false } : reportedShellOutcome(result.output);
}

interface ShellOutcome {
  exitCode?: number;
  isSuccess?: boolean;
}

/** What a successful run_shell_command result's output reports of the command: nothing when it is its output. */
export function reportedShellOutcome(output: string | undefined = ''): ShellOutcome {
  const exit = EXITED.exec(output);
  if (exit) {
    const exitCode = Number(exit[1]);
    return { exitCode, isSuccess: exitCode === 0 };
  }
  return SIGNALLED.test(output) ? { isSuccess: false } : {};
}

/** `outcome` is undefined when the call's result never came. */
export function mapGeminiCall(call: GeminiCall, outcome: GeminiOutcome | undefined, cwd: string | undefined): DraftEvent | undefined {
  const result = outcome?.result;
  const output = result?.output ?? result?.error?.message ?? '';
  const statusOk = result ? result.status === 'success' : undefined;
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => unknownCall(call, outcome?.raw);
  switch (geminiToolKind(call.name)) {
    case 'command': {
      const p = PARAMETERS.command.safeParse(call.parameters);
      if (!p.success) return unknown();
      const { exitCode, isSuccess } = shellOutcome(result);
      return compact({
        type: 'command',
        command: p.data.command,
        working_directory: at(p.data.dir_path),
        exit_code: exitCode,
        is_success: isSuccess,
        tool_name: call.name,
      });
    }
    case 'read': {
      const p = PARAMETERS.read.safeParse(call.parameters);
      if (!p.success) return unknown();
      // The range read, from the documented result text; the requested one only while no result says otherwise.
      const range = /^Read lines (\d+)-(\d+) of \d+/m.exec(output);
      const start = range ? Number(range[1]) : p.data.start_line;
      const end = range ? Number(range[2]) : p.data.end_line;
      return compact({ type: 'read', path: at(p.data.file_path)!, start_line: start, end_line: end, is_success: statusOk, tool_name: call.name });
    }
    case 'write': {
      const p = PARAMETERS.write.safeParse(call.parameters);
      return p.success ? compact({ type: 'write', path: at(p.data.file_path)!, is_success: statusOk, tool_name: call.name }) : unknown();
    }
    case 'search': {
      const p = PARAMETERS.search.safeParse(call.parameters);
      return p.success ? compact({ type: 'search', query: p.data.pattern, path: at(p.data.dir_path), is_success: statusOk, tool_name: call.name }) : unknown();
    }
    case 'list': {
      const p = PARAMETERS.list.safeParse(call.parameters);
      return p.success ? compact({ type: 'list', path: at(p.data.dir_path), is_success: statusOk, tool_name: call.name }) : unknown();
    }
    case 'skill': {
      const p = PARAMETERS.skill.safeParse(call.parameters);
      const dir = /Resources loaded from `([^`]+)`/.exec(output)?.[1];
      if (!p.success || !dir) return unknown();
      return compact({ type: 'skill', path: `${dir.replace(/\/$/, '')}/SKILL.md`, skill_name: p.data.name, is_success: statusOk, tool_name: call.name });
    }
    case 'subagent':
      return undefined;
    case 'other':
      // web_fetch, google_web_search, update_topic, plan mode, background processes, MCP: no event type.
      return unknown();
  }
}
