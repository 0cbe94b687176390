// Claude Code tool call + tool result -> one normalized event carrying the outcome.
// Tool names and input fields: `sdk-tools.d.ts` in @anthropic-ai/claude-code; observed shapes in
// shared/reference/harnesses.md ("Tool names -> category"). Bash, Read and Write report what they did; reading,
// searching or listing done through Bash stays a `command` (never guessed from shell text).
import type { DraftEvent, EventOf } from '../../shared/events.ts';
import { absolutePath, arr, compact, contentText, count, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

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
  return TOOL_KINDS[name] ?? 'other';
}

/** Claude's Bash result carries no exit code on success; on failure the text says `Exit code N`. */
export function bashExitCode(outcome: ToolOutcome): number | undefined {
  if (!outcome.isError) return undefined;
  const text = contentText(outcome.content) ?? str(outcome.structured) ?? '';
  const match = /Exit code (\d+)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** Line range touched by an Edit/Write, from the structured patch's hunks (new-file coordinates). */
function patchRange(structured: unknown): { start_line?: number; end_line?: number } {
  const hunks = arr(obj(structured)?.structuredPatch);
  if (!hunks || hunks.length === 0) return {};
  let start = Infinity;
  let end = -Infinity;
  for (const hunk of hunks) {
    const newStart = count(obj(hunk)?.newStart);
    const newLines = count(obj(hunk)?.newLines);
    if (newStart === undefined || newLines === undefined) return {};
    start = Math.min(start, newStart);
    end = Math.max(end, newStart + Math.max(newLines, 1) - 1);
  }
  return { start_line: start, end_line: end };
}

/** Line range actually read, from the result's `file.startLine/numLines`. */
function readRange(structured: unknown): { start_line?: number; end_line?: number } {
  const file = obj(obj(structured)?.file);
  const startLine = count(file?.startLine);
  const numLines = count(file?.numLines);
  if (startLine === undefined || numLines === undefined || numLines === 0) return {};
  return { start_line: startLine, end_line: startLine + numLines - 1 };
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
  const path = (key: string) => {
    const p = str(input[key]);
    return p === undefined ? undefined : absolutePath(p, cwd);
  };
  switch (claudeToolKind(name)) {
    case 'command': {
      const command = str(input.command);
      if (command === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: 'command', command, exit_code: outcome ? bashExitCode(outcome) : undefined, is_success, tool_name: name });
    }
    case 'read': {
      const file = path('file_path');
      if (file === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: 'read', path: file, ...readRange(outcome?.structured), is_success, tool_name: name });
    }
    case 'write': {
      const file = path('file_path') ?? path('notebook_path');
      if (file === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: 'write', path: file, ...patchRange(outcome?.structured), is_success, tool_name: name });
    }
    case 'search': {
      const query = str(input.pattern);
      if (query === undefined) return unknownToolEvent(call, outcome);
      return compact({ type: 'search', query, path: path('path'), is_success, tool_name: name });
    }
    case 'list':
      return compact({ type: 'list', path: path('path'), is_success, tool_name: name });
    case 'skill':
    case 'subagent':
      return undefined;
    case 'other':
      return unknownToolEvent(call, outcome);
  }
}
