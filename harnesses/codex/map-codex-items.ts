// Codex `exec --json` items -> normalized events. The stream is already categorised by Codex
// (codex-rs/exec/src/exec_events.rs): command_execution -> command, file_change -> write (one per change),
// collab_tool_call -> orchestration; mcp_tool_call, web_search, todo_list, plan have no event type -> unknown.
// Reads, searches and listings Codex runs through the shell stay `command` events (never guessed from the text).
// Each item type is read through a zod schema of the fields used here (extra keys are fine); an item that fails it
// is `unknown` with the raw item, never a default (a float exit code, a numeric status, a non-string path).
import { z } from 'zod';
import type { DraftEvent } from '../../shared/events.ts';
import { compact } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

// z.object: extra keys are accepted (and left out of the parsed copy, which is only read; the raw item is kept).
const Text = z.object({ text: z.string() });
const Message = z.object({ message: z.string() });
/** exit_code is null until the command ends; an exit code is an integer (a float is unreadable, not rounded). */
const CommandExecution = z.object({
  command: z.string(),
  exit_code: z.int().nullable().optional(),
  status: z.string().optional(),
});
const FileChange = z.object({ changes: z.array(z.unknown()), status: z.string().optional() });
const Change = z.object({ path: z.string() });
const CollabToolCall = z.object({
  tool: z.string(),
  receiver_thread_ids: z.array(z.string()).optional(),
  agents_states: z.record(z.string(), z.object({ status: z.string() })).optional(),
});

/**
 * Codex runs commands as `/bin/bash -lc '<cmd>'`, or `/bin/bash -lc "<cmd>"` when the command holds single quotes
 * (seen in 0.171.0). Only those exact wrappers are removed, with bash's quoting undone; any other form is
 * reported as Codex gave it.
 */
export function unwrapShell(command: string): string {
  const single = /^\/bin\/bash -lc '((?:[^']|'\\'')*)'$/.exec(command);
  if (single) return single[1]!.replace(/'\\''/g, "'");
  const double = /^\/bin\/bash -lc "((?:[^"\\]|\\.)*)"$/s.exec(command);
  // Inside double quotes bash removes a backslash only before " \ $ ` and newline.
  if (double) return double[1]!.replace(/\\(["\\$`\n])/g, '$1');
  return command;
}

function commandEvent(item: JsonObject): DraftEvent {
  const parsed = CommandExecution.safeParse(item);
  if (!parsed.success) return unknownValue(item);
  const { command, status } = parsed.data;
  const exitCode = parsed.data.exit_code ?? undefined;
  const finished = status === 'completed' || status === 'failed' || status === 'declined';
  return compact({
    type: 'command',
    command: unwrapShell(command),
    exit_code: exitCode,
    is_success: finished ? status === 'completed' && (exitCode === undefined || exitCode === 0) : undefined,
  });
}

function fileChangeEvents(item: JsonObject): DraftEvent[] {
  const parsed = FileChange.safeParse(item);
  if (!parsed.success) return [unknownValue(item)];
  const { changes, status } = parsed.data;
  const is_success = status === 'completed' ? true : status === 'failed' ? false : undefined;
  return changes.map((change) => {
    const readable = Change.safeParse(change);
    return readable.success ? compact({ type: 'write', path: readable.data.path, is_success }) : unknownValue(change);
  });
}

/** Subagents (multi-agent tools): spawn starts them; a finished wait reports each agent's final state. */
function collabEvents(item: JsonObject): DraftEvent[] {
  const parsed = CollabToolCall.safeParse(item);
  if (!parsed.success) return [unknownValue(item)];
  const { tool, receiver_thread_ids: receivers = [], agents_states: states } = parsed.data;
  if (tool === 'spawn_agent' && receivers.length > 0) {
    return receivers.map((id) => ({ type: 'orchestration', action: 'subagent_started', subagent_id: id }));
  }
  if (tool === 'wait' || tool === 'close_agent') {
    if (!states) return [unknownValue(item)];
    const out: DraftEvent[] = [];
    // States still running (pending_init, running) report nothing yet.
    for (const [id, { status }] of Object.entries(states)) {
      if (status === 'completed') out.push({ type: 'orchestration', action: 'subagent_completed', subagent_id: id, is_success: true });
      else if (status === 'errored' || status === 'not_found') out.push({ type: 'orchestration', action: 'subagent_failed', subagent_id: id, is_success: false });
    }
    return out;
  }
  if (tool === 'send_input') return [];
  return [unknownValue(item)];
}

/** A completed item -> events. `warning` for Codex's non-fatal error items (fallback metadata, transport). */
export function mapCompletedItem(item: JsonObject): DraftEvent[] {
  switch (item.type) {
    case 'agent_message':
    case 'reasoning': {
      const parsed = Text.safeParse(item);
      if (!parsed.success) return [unknownValue(item)];
      const text = parsed.data.text;
      return text.length > 0 ? [{ type: item.type === 'agent_message' ? 'agent' : 'reasoning', message: text }] : [];
    }
    case 'command_execution':
      return [commandEvent(item)];
    case 'file_change':
      return fileChangeEvents(item);
    case 'collab_tool_call':
      return collabEvents(item);
    case 'error': {
      const parsed = Message.safeParse(item);
      return parsed.success ? [{ type: 'warning', message: parsed.data.message }] : [unknownValue(item)];
    }
    default:
      // mcp_tool_call, web_search, todo_list, plan, and anything newer: no event type of their own.
      return [unknownValue(item)];
  }
}

/** An item that never completed (killed mid-command): what it was doing, without an outcome. */
export function mapUnfinishedItem(item: JsonObject): DraftEvent[] {
  return mapCompletedItem({ ...item, status: 'in_progress', exit_code: null }).map((event) =>
    event.type === 'orchestration' ? compact({ ...event, is_success: undefined }) : event,
  );
}

/**
 * What an item does, outcome aside: two records for one id describe the same operation exactly when their
 * identities match. Operations are identified by what they act on (the command, the changed paths, the subagent
 * tool and its receivers), everything else by its type alone (a message's text or a todo list's progress changes,
 * the item stays one). Read from the raw fields without parsing: it is only ever compared, never reported, and an
 * item whose fields are unreadable is reported as `unknown` on its own. Kept small: identities of completed items
 * are held for the whole session.
 */
export function itemIdentity(item: JsonObject): string {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (item.type) {
    case 'command_execution':
      return `command_execution\0${text(item.command)}`;
    case 'file_change':
      return `file_change\0${Array.isArray(item.changes) ? item.changes.map((c) => text((c as JsonObject | null)?.path)).join('\0') : ''}`;
    case 'collab_tool_call':
      return `collab_tool_call\0${text(item.tool)}\0${Array.isArray(item.receiver_thread_ids) ? item.receiver_thread_ids.map(text).join('\0') : ''}`;
    default:
      return String(item.type);
  }
}
