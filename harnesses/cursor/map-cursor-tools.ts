// Cursor `tool_call` records -> one normalized event per call, carrying the outcome.
// Shapes: `tool_call.<name>ToolCall{args, result:{<outcome>:{…}}}` (cursor.com/docs/cli/reference/output-format;
// outcome keys from lines captured off a real run in ZhengyiLuo/AgentsServer tests/test_cursor_agent_client.py).
// Reading, searching or listing done through the shell stays a `command`: shell text is never parsed.
import type { DraftEvent, EventOf } from '../../shared/events.ts';
import { z } from 'zod';
import { absolutePath, compact, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { toolKindLookup } from '../../shared/translate/tool-kind.ts';
import type { ToolKindTable } from '../../shared/translate/tool-kind.ts';

/** Every tool key the reference lists; anything else (a new tool, `function`, MCP) is `other` -> unknown. */
export const CURSOR_TOOL_KINDS = {
  shellToolCall: 'command',
  readToolCall: 'read',
  writeToolCall: 'write',
  editToolCall: 'write',
  deleteToolCall: 'write',
  grepToolCall: 'search',
  globToolCall: 'search',
  semSearchToolCall: 'search',
  lsToolCall: 'list',
  mcpToolCall: 'other',
  awaitToolCall: 'other',
  askQuestionToolCall: 'other',
  prManagementToolCall: 'other',
  recordScreenToolCall: 'other',
} as const satisfies ToolKindTable;
export const cursorToolKind = toolKindLookup(CURSOR_TOOL_KINDS);

/** Outcome keys that mean the tool did its job, and those that mean it did not (AgentsServer fixtures). */
const SUCCESS_OUTCOMES = new Set(['success', 'complete', 'registered', 'startSuccess', 'saveSuccess', 'discardSuccess']);
const FAILURE_OUTCOMES = new Set([
  'failure', 'rejected', 'error', 'timeout', 'spawnError', 'permissionDenied', 'readPermissionDenied',
  'writePermissionDenied', 'fileNotFound', 'invalidFile', 'notFile', 'fileBusy', 'noSpace', 'sandboxUnsupported',
  'notFound', 'serverNotFound', 'toolNotFound',
]);

/**
 * Argument names per search tool. globToolCall's are documented (real captured line); grepToolCall's and
 * semSearchToolCall's follow the same naming in third-party parsers and are UNVERIFIED: a missing field -> unknown.
 */
const SEARCH_FIELDS: Readonly<Record<string, { query: string; scope?: string }>> = {
  globToolCall: { query: 'globPattern', scope: 'targetDirectory' },
  grepToolCall: { query: 'pattern', scope: 'path' },
  semSearchToolCall: { query: 'query' },
};

export interface CursorToolCall {
  callId: string;
  /** The `<name>ToolCall` key: the raw tool name. */
  key: string;
  args: JsonObject;
  /** The records seen for this call, kept whole for `unknown` fallbacks. */
  records: JsonObject[];
}

export interface CursorOutcome {
  key: string;
  payload: JsonObject;
  ok: boolean;
}

/** Reads `result:{<one outcome key>:{…}}`; undefined when it is not exactly one known outcome. */
export function readOutcome(result: unknown): CursorOutcome | undefined {
  const r = obj(result);
  if (!r) return undefined;
  const keys = Object.keys(r).filter((k) => SUCCESS_OUTCOMES.has(k) || FAILURE_OUTCOMES.has(k));
  if (keys.length !== 1) return undefined;
  const key = keys[0]!;
  const payload = obj(r[key]);
  if (!payload) return undefined;
  return { key, payload, ok: SUCCESS_OUTCOMES.has(key) };
}

export function unknownToolEvent(call: CursorToolCall): DraftEvent {
  const raw = call.records.length === 1 ? call.records[0] : call.records;
  return { type: 'unknown', raw: raw as EventOf<'unknown'>['raw'] };
}

const text = z.string();
/** Per kind: the argument and outcome-payload fields the mapping reads (extra keys are fine). */
const COMMAND = { args: z.object({ command: text.optional() }), payload: z.object({ command: text.optional(), exitCode: z.int().optional(), workingDirectory: text.optional() }) };
const FILE = { args: z.object({ path: text.optional() }), payload: z.object({ path: text.optional() }) };
const LIST = z.object({ path: text.optional() });
const SEARCH = Object.fromEntries(
  Object.entries(SEARCH_FIELDS).map(([tool, f]) => [tool, z.object({ [f.query]: text, ...(f.scope ? { [f.scope]: text.optional() } : {}) })]),
);

/**
 * Maps a finished call (`outcome` set) or one that never completed (`outcome` undefined). A field the mapping
 * needs but cannot read, or one it reads that has the wrong type, makes the whole call `unknown`.
 */
export function mapToolCall(call: CursorToolCall, outcome: CursorOutcome | undefined, cwd: string | undefined): DraftEvent {
  const { args, key: tool_name } = call;
  const payload = outcome?.payload ?? {};
  let is_success = outcome?.ok;
  const path = (p: string | undefined) => (p === undefined ? undefined : absolutePath(p, cwd));
  switch (cursorToolKind(tool_name)) {
    case 'command': {
      const a = COMMAND.args.safeParse(args);
      const o = COMMAND.payload.safeParse(payload);
      if (!a.success || !o.success) return unknownToolEvent(call);
      // A rejected call echoes its command only inside the outcome.
      const command = a.data.command ?? o.data.command;
      if (command === undefined) return unknownToolEvent(call);
      const exit_code = o.data.exitCode;
      // A `success` envelope can still carry a non-zero exit code (seen in the fixtures).
      if (exit_code !== undefined && exit_code !== 0) is_success = false;
      return compact({ type: 'command', command, working_directory: o.data.workingDirectory, exit_code, is_success, tool_name });
    }
    case 'read':
    case 'write': {
      const a = FILE.args.safeParse(args);
      const o = FILE.payload.safeParse(payload);
      if (!a.success || !o.success) return unknownToolEvent(call);
      const file = path(a.data.path ?? o.data.path);
      if (file === undefined) return unknownToolEvent(call);
      return compact({ type: cursorToolKind(tool_name) as 'read' | 'write', path: file, is_success, tool_name });
    }
    case 'search': {
      const fields = SEARCH_FIELDS[tool_name];
      if (fields === undefined) return unknownToolEvent(call);
      const a = SEARCH[tool_name]!.safeParse(args);
      if (!a.success) return unknownToolEvent(call);
      const query = a.data[fields.query] as string;
      const scope = fields.scope ? (a.data[fields.scope] as string | undefined) : undefined;
      return compact({ type: 'search', query, path: path(scope), is_success, tool_name });
    }
    case 'list': {
      const a = LIST.safeParse(args);
      if (!a.success) return unknownToolEvent(call);
      return compact({ type: 'list', path: path(a.data.path), is_success, tool_name });
    }
    case 'other':
      return unknownToolEvent(call);
  }
}

/** Same tool, same arguments: two records of one call. */
export function sameCall(a: CursorToolCall, b: CursorToolCall): boolean {
  return a.key === b.key && JSON.stringify(a.args) === JSON.stringify(b.args);
}
