// Droid tool_call + tool_result -> one event (tool names: `droid exec --list-tools`, reference section 11).
// Exit codes live only in the documented text "[Process exited with code N]"; read ranges in
// "[Showing lines A-B of N total lines]"; a skill's file in `filePath="…"`.
// Parameters and results are read through zod schemas (extra keys are fine): a call or result that fails them is
// `unknown` with both raw records, never a default (no success from a non-boolean isError).
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export interface DroidCall {
  id: string;
  tool: string;
  parameters: JsonObject;
  record: JsonObject;
}

const KINDS = {
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
} as const satisfies ToolKindTable;
export const droidToolKind = toolKindLookup(KINDS);

/** A tool_result: isError is the outcome; the text is `value`, or the error's message. */
export const ToolResult = z.object({
  id: z.string().min(1),
  isError: z.boolean(),
  value: z.string().optional(),
  error: z.object({ message: z.string().optional() }).optional(),
});
export type ToolResult = z.infer<typeof ToolResult>;

const text = z.string();
const PARAMETERS = {
  command: z.object({ command: text }),
  read: z.object({ file_path: text }),
  write: z.object({ file_path: text.optional(), path: text.optional() }),
  search: z.object({ pattern: text.optional(), patterns: z.array(text).optional(), path: text.optional(), folder: text.optional() }),
  list: z.object({ directory_path: text.optional() }),
  skill: z.object({ skill: text.optional() }),
  subagent: z.object({ subagent_type: text.optional() }),
} as const;

/** An exit code or line number printed in a fixed text: a safe integer, or unreadable. */
const PrintedInt = z.int();
const printedInt = (digits: string | undefined) => {
  if (digits === undefined) return undefined;
  const parsed = PrintedInt.safeParse(Number(digits));
  return parsed.success ? parsed.data : undefined;
};

export const unknownCall = (call: DroidCall, result?: JsonObject): DraftEvent => unknownValue(result ? { tool_call: call.record, tool_result: result } : { tool_call: call.record });

/** The subagent's name, when the Task call names it readably. */
export function subagentName(call: DroidCall): string | undefined {
  const parsed = PARAMETERS.subagent.safeParse(call.parameters);
  return parsed.success ? parsed.data.subagent_type : undefined;
}

/**
 * A call and its result (`raw` its record, `result` the parsed one), or a call that never got a result (both
 * undefined). Subagents are reported by the translator (started at the call): undefined here.
 */
export function mapDroidCall(call: DroidCall, result: ToolResult | undefined, raw: JsonObject | undefined, cwd: string | undefined): DraftEvent | undefined {
  const output = result ? (result.value ?? result.error?.message ?? '') : '';
  const is_success = result ? !result.isError : undefined;
  const abs = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const tool_name = call.tool;
  const kind = droidToolKind(call.tool);
  if (kind === 'subagent') return undefined;
  // TodoWrite, FetchUrl, WebSearch, missions, scripts, Slack...: no event type of their own.
  if (kind === 'other') return unknownCall(call, raw);
  const parsed = PARAMETERS[kind].safeParse(call.parameters);
  if (!parsed.success) return unknownCall(call, raw);
  switch (kind) {
    case 'command': {
      const p = parsed.data as z.infer<typeof PARAMETERS.command>;
      const exit = /\[Process exited with code (-?\d+)\]/.exec(output);
      return compact({ type: 'command', command: p.command, exit_code: printedInt(exit?.[1]), is_success, tool_name });
    }
    case 'read': {
      const p = parsed.data as z.infer<typeof PARAMETERS.read>;
      const range = /\[Showing lines (\d+)-(\d+) of \d+ total lines\]/.exec(output);
      return compact({ type: 'read', path: abs(p.file_path)!, start_line: printedInt(range?.[1]), end_line: printedInt(range?.[2]), is_success, tool_name });
    }
    case 'write': {
      const p = parsed.data as z.infer<typeof PARAMETERS.write>;
      const file = abs(p.file_path ?? p.path);
      return file === undefined ? unknownCall(call, raw) : compact({ type: 'write', path: file, is_success, tool_name });
    }
    case 'search': {
      const p = parsed.data as z.infer<typeof PARAMETERS.search>;
      const query = p.pattern ?? (p.patterns && p.patterns.length > 0 ? p.patterns.join(' ') : undefined);
      return query === undefined ? unknownCall(call, raw) : compact({ type: 'search', query, path: abs(p.path ?? p.folder), is_success, tool_name });
    }
    case 'list': {
      const p = parsed.data as z.infer<typeof PARAMETERS.list>;
      return compact({ type: 'list', path: abs(p.directory_path), is_success, tool_name });
    }
    case 'skill': {
      const p = parsed.data as z.infer<typeof PARAMETERS.skill>;
      const file = /filePath="([^"]+)"/.exec(output)?.[1];
      if (!file) return unknownCall(call, raw);
      return compact({ type: 'skill', path: file, skill_name: p.skill, is_success, tool_name });
    }
  }
}
