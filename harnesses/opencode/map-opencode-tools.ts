// OpenCode `tool_use` records -> events. Each record arrives once, after the tool finished, carrying input, output
// and metadata together. A shell command that failed is still `status: "completed"`: its exit code is
// `state.metadata.exit`; `status: "error"` means the tool itself failed. `read` also reads directories: its output
// then starts with the documented `<path>…</path>\n<type>directory</type>` header, and the call is a listing.
// Each tool's fields are read through a zod schema (extra keys are fine): a part that fails it is `unknown` with
// the raw part, never a default (a float exit code, a numeric status, a string line number).
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  bash: 'command',
  read: 'read',
  write: 'write',
  edit: 'write',
  multiedit: 'write',
  patch: 'write',
  apply_patch: 'write',
  grep: 'search',
  glob: 'search',
  list: 'list',
  skill: 'skill',
  task: 'subagent',
} as const satisfies ToolKindTable;
export const opencodeToolKind = toolKindLookup(KINDS);

const text = z.string();
const line = z.int().nonnegative();
const ToolName = z.string().min(1);

/** A tool part whose state has these input and metadata fields (extra keys are fine): one parse per record. */
const toolPart = <I extends z.ZodRawShape, M extends z.ZodRawShape, S extends z.ZodRawShape = Record<never, never>>(input: I, metadata: M, state?: S) =>
  z.object({ callID: text.optional(), state: z.object({ status: text, input: z.object(input), metadata: z.object(metadata).optional(), ...(state as S) }) });

/** The header OpenCode's read tool puts before a directory's entries (a file's says `<type>file</type>`). */
const DIRECTORY_READ = /^<path>[^\n]*<\/path>\n<type>directory<\/type>(?:\n|$)/;

/** Per kind: the fields the mapping reads. */
const PARTS = {
  command: toolPart({ command: text, workdir: text.optional() }, { exit: z.int().nullable().optional() }),
  read: toolPart({ filePath: text }, { display: z.object({ lineStart: line.optional(), lineEnd: line.optional() }).optional() }, { output: text.optional() }),
  write: toolPart({ filePath: text.optional() }, { filediff: z.object({ file: text.optional() }).optional() }),
  search: toolPart({ pattern: text, path: text.optional() }, {}),
  list: toolPart({ path: text.optional() }, {}),
  skill: toolPart({ name: text.optional() }, { dir: text.min(1), name: text.optional() }),
  subagent: toolPart({ subagent_type: text.optional(), description: text.optional() }, { sessionId: text.optional() }),
} as const;

export function mapToolPart(part: JsonObject, cwd: string | undefined): DraftEvent[] {
  const name = ToolName.safeParse(part.tool);
  if (!name.success) return [unknownValue(part)];
  const tool = name.data;
  const kind = opencodeToolKind(tool);
  // todowrite, todoread, webfetch, websearch, codesearch, question, MCP tools: no event type of their own.
  if (kind === 'other') return [unknownValue(part)];
  const parsed = PARTS[kind].safeParse(part);
  if (!parsed.success) return [unknownValue(part)];
  const { callID, state } = parsed.data;
  const finished = state.status === 'completed' || state.status === 'error';
  const ok = finished ? state.status === 'completed' : undefined;
  const abs = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  // Each case reads its own kind's fields (the casts name the schema the part just passed).
  switch (kind) {
    case 'command': {
      const { input, metadata } = state as z.infer<typeof PARTS.command>['state'];
      const exit = metadata?.exit ?? undefined;
      // The command's outcome is its exit code: `completed` says the tool ran, not that the command succeeded. A null
      // exit (OpenCode passes on the process's exitCode, null when a signal ended it; fuzz seed 328713745) or none at
      // all reports no outcome (issue 41). A failed tool is a failure either way.
      const success = ok === undefined ? undefined : !ok ? false : exit === undefined ? undefined : exit === 0;
      return [compact({ type: 'command', command: input.command, working_directory: abs(input.workdir), exit_code: exit, is_success: success, tool_name: tool })];
    }
    case 'read': {
      const { input, metadata, output } = state as z.infer<typeof PARTS.read>['state'];
      // A directory read lists it (issue 41): known only from the output's header, so only for a finished read.
      if (output !== undefined && DIRECTORY_READ.test(output)) return [compact({ type: 'list', path: abs(input.filePath), is_success: ok, tool_name: tool })];
      const display = metadata?.display;
      return [compact({ type: 'read', path: abs(input.filePath)!, start_line: display?.lineStart, end_line: display?.lineEnd, is_success: ok, tool_name: tool })];
    }
    case 'write': {
      const { input, metadata } = state as z.infer<typeof PARTS.write>['state'];
      const file = abs(input.filePath) ?? metadata?.filediff?.file;
      return file === undefined ? [unknownValue(part)] : [compact({ type: 'write', path: file, is_success: ok, tool_name: tool })];
    }
    case 'search': {
      const { input } = state as z.infer<typeof PARTS.search>['state'];
      return [compact({ type: 'search', query: input.pattern, path: abs(input.path), is_success: ok, tool_name: tool })];
    }
    case 'list': {
      const { input } = state as z.infer<typeof PARTS.list>['state'];
      return [compact({ type: 'list', path: abs(input.path), is_success: ok, tool_name: tool })];
    }
    case 'skill': {
      const { input, metadata } = state as z.infer<typeof PARTS.skill>['state'];
      // The skill's file is known only from its directory.
      if (!metadata) return [unknownValue(part)];
      return [compact({ type: 'skill', path: `${metadata.dir.replace(/\/$/, '')}/SKILL.md`, skill_name: input.name ?? metadata.name, is_success: ok, tool_name: tool })];
    }
    case 'subagent': {
      // Subagent sessions do not stream: the finished `task` record brackets the subagent.
      const { input, metadata } = state as z.infer<typeof PARTS.subagent>['state'];
      const id = metadata?.sessionId ?? callID;
      const subagentName = input.subagent_type ?? input.description;
      const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: id, subagent_name: subagentName });
      if (!finished) return [started];
      return [started, compact({ type: 'orchestration', action: ok ? 'subagent_completed' : 'subagent_failed', subagent_id: id, subagent_name: subagentName, is_success: ok })];
    }
  }
}
