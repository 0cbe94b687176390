// OpenHands tool calls -> events. The CLI's agent (openhands_cli/utils.py get_default_cli_tools, 1.16.0) has
// terminal, file_editor, task_tracker and task, plus the SDK's built-in finish and think (the translator reports
// those two at the call: finish's message is an answer, think's thought is reasoning). A call is an ActionEvent
// (`action`, the arguments as OpenHands validated them; `tool_call.arguments`, as the model wrote them), its result
// an ObservationEvent or, when OpenHands refused the call, an AgentErrorEvent, paired by tool_call_id.
// Tool docs: openhands-tools `openhands/tools/<tool>/definition.py`.
// - terminal: a command's outcome only from its own exit code (TerminalObservation.exit_code; -1 or null when the
//   command did not finish: timed out, or the shell it ran in went away), never from `is_error`;
// - file_editor: `view` of a directory is a listing (its result starts "Here's the files and directories up to"),
//   of a file a read; only a completed view says which (a failed or unanswered one is `unknown`); create,
//   str_replace, insert and undo_edit write; the outcome is the observation's is_error;
// - task: a subagent, started at the call and completed or failed with its result (TaskObservation.status);
// - task_tracker (a todo list) and every other name: no event type of their own, `unknown`.
// Arguments are read through zod schemas (extra keys are fine): a call whose arguments fail them is `unknown` with
// its raw records, never a default.
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { absolutePath, compact, contentText } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

const KINDS = {
  terminal: 'command',
  // view reads a file or lists a directory; the other sub-commands write.
  file_editor: 'text_editor',
  task: 'subagent',
} as const satisfies ToolKindTable;
export const openHandsToolKind = toolKindLookup(KINDS);

/** A call as the translator holds it. */
export interface OpenHandsCall {
  id: string;
  name: string;
  /** The validated action (null when OpenHands refused the call), else the model's own arguments. */
  args: unknown;
  /** The ActionEvent as printed. */
  record: JsonObject;
  /** A subagent call whose start was reported at the call. */
  started?: boolean;
}

/** What answered a call: its ObservationEvent, or the AgentErrorEvent that refused it. */
export type OpenHandsOutcome = { kind: 'observation'; observation: JsonObject; record: JsonObject } | { kind: 'error'; error: string; record: JsonObject };

const text = z.string();
const ARGS = {
  command: z.object({ command: text, is_input: z.boolean().optional() }),
  editor: z.object({ command: text, path: text.min(1), view_range: z.unknown().optional() }),
  task: z.object({ prompt: text, subagent_type: text.min(1).nullable().optional(), description: text.min(1).nullable().optional() }),
};
const TerminalResult = z.object({ exit_code: z.int().nullable().optional() });
const TaskResult = z.object({ status: text, is_error: z.boolean() });
/** view_range [start, end]: lines from 1; end -1 means to the end of the file. */
const ViewRange = z.tuple([z.int().positive(), z.union([z.int().positive(), z.literal(-1)])]);
const WRITES = new Set(['create', 'str_replace', 'insert', 'undo_edit']);

/** The header of a directory view (openhands-tools file_editor/editor.py `view`). */
const DIRECTORY_VIEW = /^Here's the files and directories up to \d+ levels? deep in /;
/** The note a view prepends when view_range ran past the end of the file. */
const SHOWN_UP_TO = /^NOTE: We only show up to (\d+) since/;

export function unknownCall(call: OpenHandsCall, outcome?: OpenHandsOutcome): DraftEvent {
  return unknownValue(outcome ? { ActionEvent: call.record, [outcome.kind === 'error' ? 'AgentErrorEvent' : 'ObservationEvent']: outcome.record } : call.record);
}

/** A subagent call's start, reported at the call; undefined when its arguments cannot be read. */
export function subagentStart(call: OpenHandsCall): DraftEvent | undefined {
  const a = ARGS.task.safeParse(call.args);
  if (!a.success) return undefined;
  return compact({ type: 'orchestration' as const, action: 'subagent_started' as const, subagent_id: call.id, subagent_name: a.data.subagent_type ?? a.data.description ?? undefined });
}

/** The call's events; `outcome` is undefined when no result came (no verdict is claimed then). */
export function mapOpenHandsCall(call: OpenHandsCall, outcome: OpenHandsOutcome | undefined, cwd: string | undefined): DraftEvent[] {
  const at = (p: string) => absolutePath(p, cwd);
  const unknown = () => [unknownCall(call, outcome)];
  const observation = outcome?.kind === 'observation' ? outcome.observation : undefined;
  // The tool's verdict: a refused call failed; an observation says with is_error.
  const ok = outcome === undefined ? undefined : outcome.kind === 'error' ? false : observation?.is_error === false ? true : observation?.is_error === true ? false : undefined;
  const tool_name = call.name;
  switch (openHandsToolKind(call.name)) {
    case 'command': {
      const a = ARGS.command.safeParse(call.args);
      // Keys sent to a command still running (is_input) are no command of their own.
      if (!a.success || a.data.is_input === true) return unknown();
      const result = TerminalResult.safeParse(observation);
      const exit = result.success && typeof result.data.exit_code === 'number' && result.data.exit_code >= 0 ? result.data.exit_code : undefined;
      return [compact({ type: 'command', command: a.data.command, exit_code: exit, is_success: exit === undefined ? undefined : exit === 0, tool_name })];
    }
    case 'text_editor': {
      const a = ARGS.editor.safeParse(call.args);
      if (!a.success) return unknown();
      const path = at(a.data.path);
      if (WRITES.has(a.data.command)) return [compact({ type: 'write', path, is_success: ok, tool_name })];
      if (a.data.command !== 'view' || ok !== true) return unknown();
      const shown = contentText(observation?.content) ?? '';
      if (DIRECTORY_VIEW.test(shown)) return [compact({ type: 'list', path, is_success: true, tool_name })];
      const range = ViewRange.safeParse(a.data.view_range);
      const upTo = SHOWN_UP_TO.exec(shown);
      const end = upTo ? Number(upTo[1]) : range.success && range.data[1] !== -1 ? range.data[1] : undefined;
      return [compact({ type: 'read', path, start_line: range.success ? range.data[0] : undefined, end_line: end, is_success: true, tool_name })];
    }
    case 'subagent': {
      if (!call.started) return unknown();
      if (outcome === undefined) return [];
      const started = subagentStart(call) as Extract<DraftEvent, { type: 'orchestration' }>;
      if (outcome.kind === 'error') return [{ ...started, action: 'subagent_failed', is_success: false }];
      const result = TaskResult.safeParse(observation);
      if (!result.success) return unknown();
      const { status, is_error: failed } = result.data;
      if (!failed && status === 'completed') return [{ ...started, action: 'subagent_completed', is_success: true }];
      if (failed || status === 'error') return [{ ...started, action: 'subagent_failed', is_success: false }];
      return unknown();
    }
    case 'other':
      return unknown();
  }
}
