// Claude Code tool call + tool result -> one normalized event carrying the outcome.
// Tool names and input fields: `sdk-tools.d.ts` in @anthropic-ai/claude-code; observed shapes in
// shared/reference/harnesses.md ("Tool names -> category"). Bash, Read and Write report what they did; reading,
// searching or listing done through Bash stays a `command` (never guessed from shell text).
import type { DraftEvent, EventOf } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact, contentText, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { compileSchema } from '../../shared/translate/compiled-schema.ts';

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
export type ClaudeToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'skill' | 'subagent' | 'other';

const TOOL_KINDS: Record<string, ClaudeToolKind> = {
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
};

export function claudeToolKind(name: string): ClaudeToolKind {
  return Object.hasOwn(TOOL_KINDS, name) ? TOOL_KINDS[name]! : 'other'; // own keys only: 'constructor' is no tool
}

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

/** Line range touched by an Edit/Write, from the structured patch's hunks (new-file coordinates). */
function patchRange(structured: unknown): { start_line?: number; end_line?: number } {
  if (!isEditResult(structured)) return {};
  let start = Infinity;
  let end = -Infinity;
  for (const { newStart, newLines } of structured.structuredPatch) {
    start = Math.min(start, newStart);
    end = Math.max(end, newStart + Math.max(newLines, 1) - 1);
  }
  return { start_line: start, end_line: end };
}

/** Line range actually read, from the result's `file.startLine/numLines`. */
function readRange(structured: unknown): { start_line?: number; end_line?: number } {
  if (!isReadResult(structured) || structured.file.numLines === 0) return {};
  const { startLine, numLines } = structured.file;
  return { start_line: startLine, end_line: startLine + numLines - 1 };
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
  const { input, name } = call;
  const is_success = outcome ? !outcome.isError : undefined;
  const at = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  const unknown = () => unknownToolEvent(call, outcome);
  switch (claudeToolKind(name)) {
    case 'command': {
      if (!INPUTS.command(input)) return unknown();
      return compact({ type: 'command', command: input.command, exit_code: outcome ? bashExitCode(outcome) : undefined, is_success, tool_name: name });
    }
    case 'read': {
      if (!INPUTS.read(input)) return unknown();
      return compact({ type: 'read', path: at(input.file_path)!, ...readRange(outcome?.structured), is_success, tool_name: name });
    }
    case 'write': {
      const file = INPUTS.write(input) ? (input.file_path ?? input.notebook_path) : undefined;
      if (file === undefined) return unknown();
      return compact({ type: 'write', path: at(file)!, ...patchRange(outcome?.structured), is_success, tool_name: name });
    }
    case 'search': {
      if (!INPUTS.search(input)) return unknown();
      return compact({ type: 'search', query: input.pattern, path: at(input.path), is_success, tool_name: name });
    }
    case 'list': {
      if (!INPUTS.list(input)) return unknown();
      return compact({ type: 'list', path: at(input.path), is_success, tool_name: name });
    }
    case 'skill':
    case 'subagent':
      return undefined;
    case 'other':
      return unknown();
  }
}
