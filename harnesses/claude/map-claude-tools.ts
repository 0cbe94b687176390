// Claude Code tool call + tool result -> one normalized event carrying the outcome.
// Tool names and input fields: `sdk-tools.d.ts` in @anthropic-ai/claude-code; observed shapes in
// shared/reference/harnesses.md ("Tool names -> category"). Bash, Read and Write report what they did; reading,
// searching or listing done through Bash stays a `command` (never guessed from shell text).
import type { DraftEvent, EventOf } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, contentText, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { compileSchema } from '../../shared/translate/compiled-schema.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

type Rec = Record<string, unknown>;

export interface ToolCall {
  id: string;
  name: string;
  input: JsonObject;
  /** The original tool_use block, kept for `unknown` fallbacks. */
  block: JsonObject;
}

export interface ToolOutcome {
  isError: boolean;
  content: unknown;
  /** The record's structured `tool_use_result` (an object, or a string like "Error: Exit code 3"). */
  structured: unknown;
  block: JsonObject;
}

/** Tools with a dedicated event type; everything else (web, cron, todo, MCP...) is surfaced as `unknown`. */
const TOOL_KINDS = {
  Bash: 'command',
  Read: 'read',
  Write: 'write',
  Edit: 'write',
  MultiEdit: 'write', // removed in 2.1.x; kept for older transcripts
  NotebookEdit: 'write',
  Grep: 'search',
  Glob: 'search',
  LS: 'list', // removed in 2.1.x; kept for older transcripts
  Skill: 'skill',
  Task: 'subagent',
  Agent: 'subagent', // the SDK's name for Task
} as const satisfies ToolKindTable;
export const claudeToolKind = toolKindLookup(TOOL_KINDS);

/** Claude's Bash result carries no exit code on success; on failure the text says `Exit code N`. */
export function bashExitCode(outcome: ToolOutcome): number | undefined {
  if (!outcome.isError) return undefined;
  const text = contentText(outcome.content) ?? str(outcome.structured) ?? '';
  const match = /Exit code (\d+)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

const lineNumber = z.int().nonnegative();
// Read per tool call, so as guards compiled from the schemas (compiled-schema.ts): zod's verdicts, no copies.
const isEditResult = compileSchema(z.object({ structuredPatch: z.array(z.object({ newStart: lineNumber, newLines: lineNumber })).min(1) }));
const isReadResult = compileSchema(z.object({ file: z.object({ startLine: lineNumber, numLines: lineNumber }) }));

/**
 * Line range touched by an Edit/Write, from the structured patch's hunks (new-file coordinates): set on the event
 * being built, only when the result reports one.
 */
function addPatchRange(event: Rec, structured: unknown): void {
  if (!isEditResult(structured)) return;
  let start = Infinity;
  let end = -Infinity;
  for (const { newStart, newLines } of structured.structuredPatch) {
    start = Math.min(start, newStart);
    end = Math.max(end, newStart + Math.max(newLines, 1) - 1);
  }
  event.start_line = start;
  event.end_line = end;
}

/** Line range actually read, from the result's `file.startLine/numLines`: set on the event, when known. */
function addReadRange(event: Rec, structured: unknown): void {
  if (!isReadResult(structured) || structured.file.numLines === 0) return;
  const { startLine, numLines } = structured.file;
  event.start_line = startLine;
  event.end_line = startLine + numLines - 1;
}

/** The outcome's fields every mapped event ends with: is_success (when the call finished), then tool_name. */
function finished(event: Rec, outcome: ToolOutcome | undefined, name: string): DraftEvent {
  if (outcome) event.is_success = !outcome.isError;
  event.tool_name = name;
  return event as unknown as DraftEvent;
}

/** The input fields each kind reads; a call whose input fails its schema is `unknown` (issue 19, finding 7). */
const INPUTS = {
  command: compileSchema(z.object({ command: z.string() })),
  read: compileSchema(z.object({ file_path: z.string() })),
  write: compileSchema(z.object({ file_path: z.string().optional(), notebook_path: z.string().optional() })),
  search: compileSchema(z.object({ pattern: z.string(), path: z.string().optional() })),
  list: compileSchema(z.object({ path: z.string().optional() })),
  skill: compileSchema(z.object({ skill: z.string().optional() })),
  subagent: compileSchema(z.object({ subagent_type: z.string().optional() })),
};

/** A skill's or subagent's name from its call, or undefined when the call does not name it readably. */
export function skillName(call: ToolCall): string | undefined {
  return INPUTS.skill(call.input) ? call.input.skill : undefined;
}
export function subagentType(call: ToolCall): string | undefined {
  return INPUTS.subagent(call.input) ? call.input.subagent_type : undefined;
}

export function unknownToolEvent(call: ToolCall, outcome?: ToolOutcome): DraftEvent {
  const raw = outcome ? { tool_use: call.block, tool_result: outcome.block } : { tool_use: call.block };
  return { type: 'unknown', raw: raw as EventOf<'unknown'>['raw'] };
}

/**
 * Maps a finished (or, with `outcome` undefined, never-finished) tool call. Returns undefined for kinds the
 * adapter pairs itself (skill, subagent), which need records beyond the tool result.
 */
export function mapToolCall(call: ToolCall, outcome: ToolOutcome | undefined, cwd: string | undefined): DraftEvent | undefined {
  // Each event is built as its final object, keys in wire order and optional fields only when known (what
  // compact() made of a literal with undefined fields), without a closure or a copy per call.
  const { input, name } = call;
  switch (claudeToolKind(name)) {
    case 'command': {
      if (!INPUTS.command(input)) return unknownToolEvent(call, outcome);
      const event: Rec = { type: 'command', command: input.command };
      if (outcome) {
        const exitCode = bashExitCode(outcome);
        if (exitCode !== undefined) event.exit_code = exitCode;
      }
      return finished(event, outcome, name);
    }
    case 'read': {
      if (!INPUTS.read(input)) return unknownToolEvent(call, outcome);
      const event: Rec = { type: 'read', path: absolutePath(input.file_path, cwd) };
      if (outcome) addReadRange(event, outcome.structured);
      return finished(event, outcome, name);
    }
    case 'write': {
      const file = INPUTS.write(input) ? (input.file_path ?? input.notebook_path) : undefined;
      if (file === undefined) return unknownToolEvent(call, outcome);
      const event: Rec = { type: 'write', path: absolutePath(file, cwd) };
      if (outcome) addPatchRange(event, outcome.structured);
      return finished(event, outcome, name);
    }
    case 'search': {
      if (!INPUTS.search(input)) return unknownToolEvent(call, outcome);
      const event: Rec = { type: 'search', query: input.pattern };
      if (input.path !== undefined) event.path = absolutePath(input.path, cwd);
      return finished(event, outcome, name);
    }
    case 'list': {
      if (!INPUTS.list(input)) return unknownToolEvent(call, outcome);
      const event: Rec = { type: 'list' };
      if (input.path !== undefined) event.path = absolutePath(input.path, cwd);
      return finished(event, outcome, name);
    }
    case 'skill':
    case 'subagent':
      return undefined;
    case 'other':
      return unknownToolEvent(call, outcome);
  }
}
