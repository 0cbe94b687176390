// Mistral Vibe tool calls -> events. A call is an `effect` entry of the stream: `detail.toolName` the qualified
// built-in name (mistralai_vibe_local_harness/protocol.py RUNTIME_BUILTIN_TOOL_NAMES: file_system.bash,
// file_system.read_file, file_system.write_file, file_system.edit, file_system.search_replace, skill.read,
// process.*, agents.*, subagent.*, self.wait/sleep; MCP and connector tools by their own names), `detail.kind`
// Vibe's own class of it (vibe/utils/tool_presentation.py ToolEffectKind: shell, file_read, file_write, file_edit,
// file_search, subagent, skill, todo, web_search, web_fetch, process, worktree, scratchpad, user_question, tool),
// `detail.input` the arguments (vibe/app_server/_effect_models.py), `state` how it went.
// The name decides first; a name this table does not list is classed by `detail.kind` (a user's manual `!` shell is
// tool `shell`, kind shell; a bash call that is a grep invocation comes as tool `grep`, kind file_search, its
// pattern and path only). An outcome is claimed only from a settled state: completed -> display.success (for bash,
// return code 0), failed/cancelled/skipped -> not a success. The stream reports no exit code. A read of a
// directory is a listing (when the path says so). Subagents: the model reaches agents.spawn only inside a
// run_typescript program, whose own call is not on the stream; the spawn's effect is (kind subagent). Skill reads name a skill but no file
// (the skill event needs its path), so they stay `unknown`, as do todo, web, process and other tools. Arguments are
// read through zod schemas (extra keys are fine): a call whose arguments fail them is `unknown`, never a default.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';
import type { SettledState } from './records.ts';

const BY_NAME = {
  // The model-facing names (the Rust core's direct_model_name), which effects carry too.
  bash: 'command',
  read_file: 'read',
  write_file: 'write',
  edit: 'write',
  // Vibe's own projection of a `bash` call that is a grep invocation (input pattern/path; the command is not kept).
  grep: 'search',
  'file_system.bash': 'command',
  'file_system.read_file': 'read',
  'file_system.write_file': 'write',
  'file_system.edit': 'write',
  // Retired in 3.x for file_system.edit; restored sessions can still hold it.
  'file_system.search_replace': 'write',
  'agents.spawn': 'subagent',
  'subagent.spawn': 'subagent',
} as const satisfies ToolKindTable;
const BY_KIND = {
  shell: 'command',
  file_read: 'read',
  file_write: 'write',
  file_edit: 'write',
  file_search: 'search',
  subagent: 'subagent',
} as const satisfies ToolKindTable;
const byName = toolKindLookup(BY_NAME);
const byKind = toolKindLookup(BY_KIND);

/** The class of a call: by its qualified name, else by Vibe's own kind of it. */
export function vibeToolKind(toolName: string, kind: string): ReturnType<typeof byName> | ReturnType<typeof byKind> {
  const named = byName(toolName);
  return named !== 'other' ? named : byKind(kind);
}

/** A call as the translator holds it: its entry as last printed (the arguments are in detail.input). */
export interface VibeCall {
  id: string;
  toolName: string;
  kind: string;
  input: unknown;
  /** The entry's detail as printed (a spawn's child id and name sit beside its input). */
  detail: JsonObject;
  record: JsonObject;
}

const text = z.string().min(1);
const ARGS = {
  command: z.object({ command: text }),
  // The stream prints the effect models' file_path camelCase (filePath); the model-facing tool schemas say path.
  file: z.union([z.object({ filePath: text }).transform((a) => a.filePath), z.object({ file_path: text }).transform((a) => a.file_path), z.object({ path: text }).transform((a) => a.path)]),
  search: z.object({ pattern: text, path: text.optional() }),
  subagent: z.object({ agent: z.string().optional(), task: z.string().optional() }),
  /** Beside the input on a spawn's detail: the child's session id (null until known) and the name it was given. */
  child: z.object({ childSessionId: text.nullable().optional().transform((v) => v ?? undefined), agentName: text.nullable().optional().transform((v) => v ?? undefined) }),
};
/** FileReadEffectOutput, camelCase as printed: the first line returned and how many. */
const ReadOutput = z.object({ startLine: z.int().positive(), numLines: z.int().nonnegative() });

function isDirectoryPath(given: string, resolved: string, cwd: string | undefined): boolean {
  if (given === '.' || given === '..' || given.endsWith('/') || given.endsWith('/.') || given.endsWith('/..')) return true;
  return cwd !== undefined && resolved.replace(/\/+$/, '') === cwd.replace(/\/+$/, '');
}

/** Whether a settled call did what it was asked; undefined while it is not settled (no outcome is claimed). */
function succeeded(state: z.infer<typeof SettledState> | undefined): boolean | undefined {
  if (!state) return undefined;
  if (state.status === 'completed') return state.display?.success;
  return false;
}

/** The call's events; `settled` is its final state, undefined when the stream ended before it settled. */
export function mapVibeCall(call: VibeCall, settled: z.infer<typeof SettledState> | undefined, cwd: string | undefined): DraftEvent[] {
  const ok = succeeded(settled);
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => [unknownValue(call.record)];
  const tool = call.toolName;
  switch (vibeToolKind(tool, call.kind)) {
    case 'command': {
      const a = ARGS.command.safeParse(call.input);
      return a.success ? [compact({ type: 'command', command: a.data.command, is_success: ok, tool_name: tool })] : unknown();
    }
    case 'read': {
      const a = ARGS.file.safeParse(call.input);
      if (!a.success) return unknown();
      const path = at(a.data)!;
      // read_file lists a directory's entries; nothing in its result says it did, so only a path that names a
      // directory by itself (`.`, `..`, a trailing `/`, the session's own directory) is taken for a listing.
      if (isDirectoryPath(a.data, path, cwd)) return [compact({ type: 'list', path, is_success: ok, tool_name: tool })];
      const range = ok === true ? ReadOutput.safeParse(settled?.output) : undefined;
      const start = range?.success ? range.data.startLine : undefined;
      const end = range?.success && range.data.numLines > 0 ? range.data.startLine + range.data.numLines - 1 : undefined;
      return [compact({ type: 'read', path, start_line: end === undefined ? undefined : start, end_line: end, is_success: ok, tool_name: tool })];
    }
    case 'write': {
      const a = ARGS.file.safeParse(call.input);
      return a.success ? [compact({ type: 'write', path: at(a.data)!, is_success: ok, tool_name: tool })] : unknown();
    }
    case 'search': {
      const a = ARGS.search.safeParse(call.input);
      return a.success ? [compact({ type: 'search', query: a.data.pattern, path: at(a.data.path), is_success: ok, tool_name: tool })] : unknown();
    }
    case 'subagent': {
      const a = ARGS.subagent.safeParse(call.input);
      const child = ARGS.child.safeParse(call.detail);
      if (!a.success || !child.success) return unknown();
      // agents.spawn starts the child and returns (its display says "Started <name>"): how the child ended is in the
      // export's subagents (translator.ts), not here. The child's session id is the export's id for it.
      const name = child.data.agentName ?? (a.data.agent !== undefined && a.data.agent.length > 0 ? a.data.agent : undefined);
      const started = compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: child.data.childSessionId ?? call.id, subagent_name: name });
      if (settled === undefined || ok === true) return [started];
      return [started, compact({ type: 'orchestration' as const, action: 'subagent_failed' as const, subagent_id: child.data.childSessionId ?? call.id, subagent_name: name, is_success: false })];
    }
    case 'other':
      return unknown();
  }
}
