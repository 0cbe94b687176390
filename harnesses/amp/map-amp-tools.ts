// Amp tool_use + tool_result -> one normalized event carrying the outcome.
// Tool names: the `system/init.tools` list of a real session (ampcode.com/news/streaming-json). Argument names are
// UNVERIFIED (no captured tool line exists): `Read{path, read_range:[start,end]}` is confirmed by nshkrdotcom/amp_sdk
// examples/tools_use.exs; the others follow Amp's tool schemas as third parties describe them. A call whose
// expected argument is missing becomes `unknown`, never a guess. Shell reads/searches stay `command`.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

export const AMP_TOOL_KINDS = {
  Bash: 'command',
  Read: 'read',
  create_file: 'write',
  edit_file: 'write',
  undo_edit: 'write',
  Grep: 'search',
  glob: 'search',
  finder: 'search', // a search subagent; reported as the search it performs
  list_directory: 'list', // older releases
  // The skill event needs the skill file's path, which Amp's skill call does not report: kept as unknown.
  skill: 'skill',
  Task: 'subagent',
  oracle: 'subagent',
  librarian: 'subagent',
  handoff: 'subagent',
  find_thread: 'other',
  look_at: 'other',
  mermaid: 'other',
  painter: 'other',
  read_mcp_resource: 'other',
  read_thread: 'other',
  read_web_page: 'other',
  task_list: 'other',
  web_search: 'other',
} as const satisfies ToolKindTable;
/** Every name not in the table (toolbox `tb__*`, MCP tools, new tools) has no event type. */
export const ampToolKind = toolKindLookup(AMP_TOOL_KINDS);

/** Query and scope argument per search tool (UNVERIFIED names). */
const SEARCH_FIELDS: Readonly<Record<string, { query: string; scope?: string }>> = {
  Grep: { query: 'pattern', scope: 'path' },
  glob: { query: 'filePattern' },
  finder: { query: 'query' },
};

export interface AmpToolCall {
  id: string;
  name: string;
  input: JsonObject;
  block: JsonObject;
}

export interface AmpToolOutcome {
  isError: boolean;
  block: JsonObject;
}

export function unknownToolEvent(call: AmpToolCall, outcome?: AmpToolOutcome): DraftEvent {
  return unknownValue(outcome ? { tool_use: call.block, tool_result: outcome.block } : { tool_use: call.block });
}

const text = z.string();
const line = z.int().nonnegative();
/** Per kind: the input fields the mapping reads (extra keys are fine). `read_range` is [start, end], 1-based. */
const COMMAND = z.object({ cmd: text.optional(), command: text.optional(), cwd: text.optional() });
const READ = z.object({ path: text, read_range: z.tuple([line, line]).optional() });
const WRITE = z.object({ path: text });
const LIST = z.object({ path: text.optional() });
const SEARCH = Object.fromEntries(
  Object.entries(SEARCH_FIELDS).map(([tool, f]) => [tool, z.object({ [f.query]: text, ...(f.scope ? { [f.scope]: text.optional() } : {}) })]),
);

/** Maps a finished (or, without `outcome`, never-finished) non-subagent call. */
export function mapToolCall(call: AmpToolCall, outcome: AmpToolOutcome | undefined, cwd: string | undefined): DraftEvent {
  const { input, name: tool_name } = call;
  const is_success = outcome ? !outcome.isError : undefined;
  const abs = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  switch (ampToolKind(tool_name)) {
    case 'command': {
      // Amp's Bash takes `cmd` (and an optional `cwd`); `command` is accepted for the Claude-compatible spelling.
      const parsed = COMMAND.safeParse(input);
      const command = parsed.data?.cmd ?? parsed.data?.command;
      if (!parsed.success || command === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: 'command', command, working_directory: abs(parsed.data.cwd), is_success, tool_name });
    }
    case 'read': {
      const parsed = READ.safeParse(input);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      const range = parsed.data.read_range;
      return compact({ type: 'read', path: abs(parsed.data.path)!, start_line: range?.[0], end_line: range?.[1], is_success, tool_name });
    }
    case 'write': {
      const parsed = WRITE.safeParse(input);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      return compact({ type: 'write', path: abs(parsed.data.path)!, is_success, tool_name });
    }
    case 'search': {
      const fields = SEARCH_FIELDS[tool_name];
      const parsed = SEARCH[tool_name]?.safeParse(input);
      if (fields === undefined || !parsed?.success) return unknownToolEvent(call, outcome);
      const query = parsed.data[fields.query] as string;
      const scope = fields.scope ? (parsed.data[fields.scope] as string | undefined) : undefined;
      return compact({ type: 'search', query, path: abs(scope), is_success, tool_name });
    }
    case 'list': {
      const parsed = LIST.safeParse(input);
      if (!parsed.success) return unknownToolEvent(call, outcome);
      return compact({ type: 'list', path: abs(parsed.data.path), is_success, tool_name });
    }
    case 'skill':
    case 'subagent':
    case 'other':
      return unknownToolEvent(call, outcome);
  }
}

/** Same tool, same input: one call printed again. */
export const callIdentity = (call: AmpToolCall): string => JSON.stringify([call.name, call.input]);
