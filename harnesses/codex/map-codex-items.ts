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

/**
 * What the stream has reported of each subagent so far, by thread id: started (running) or ended. Kept by the
 * translator for the session, so a wait reports what changed (issue 41).
 */
export type SubagentLifecycle = Map<string, 'running' | 'ended'>;

/** Agent states (CollabAgentStatus) that end a subagent: with Codex's verdict, or stopped without one. */
const ENDED_WITH_VERDICT = new Map([['completed', true], ['errored', false], ['not_found', false]]);
const STOPPED = new Set(['interrupted', 'shutdown']);
const RUNNING = new Set(['pending_init', 'running']);

/**
 * Subagents (multi-agent tools): spawn starts them; wait and close_agent report each agent's last known state.
 * A wait (Codex prints resume_agent as a wait too) becomes an orchestration event for each agent whose state it
 * changes: a verdict ends it (completed / failed), an agent stopped without one (interrupted, shutdown) has failed
 * to complete, with no is_success since Codex reports no failure, and an agent running that was not (resumed, or
 * its spawn unseen) has started. A wait that changes nothing (timed out on a running agent, or a wait reporting no
 * states) has no orchestration action of its own: it is kept as `unknown`, never dropped.
 */
function collabEvents(item: JsonObject, lifecycle: SubagentLifecycle): DraftEvent[] {
  const parsed = CollabToolCall.safeParse(item);
  if (!parsed.success) return [unknownValue(item)];
  const { tool, receiver_thread_ids: receivers = [], agents_states: states } = parsed.data;
  if (tool === 'spawn_agent' && receivers.length > 0) {
    for (const id of receivers) lifecycle.set(id, 'running');
    return receivers.map((id) => ({ type: 'orchestration', action: 'subagent_started', subagent_id: id }));
  }
  if (tool === 'wait' || tool === 'close_agent') {
    if (!states) return [unknownValue(item)];
    const out: DraftEvent[] = [];
    for (const [id, { status }] of Object.entries(states)) {
      const verdict = ENDED_WITH_VERDICT.get(status);
      if (verdict !== undefined) {
        out.push({ type: 'orchestration', action: verdict ? 'subagent_completed' : 'subagent_failed', subagent_id: id, is_success: verdict });
        lifecycle.set(id, 'ended');
      } else if (tool === 'wait' && STOPPED.has(status) && lifecycle.get(id) !== 'ended') {
        out.push({ type: 'orchestration', action: 'subagent_failed', subagent_id: id });
        lifecycle.set(id, 'ended');
      } else if (tool === 'wait' && RUNNING.has(status) && lifecycle.get(id) !== 'running') {
        out.push({ type: 'orchestration', action: 'subagent_started', subagent_id: id });
        lifecycle.set(id, 'running');
      }
    }
    return out.length > 0 || tool === 'close_agent' ? out : [unknownValue(item)];
  }
  if (tool === 'send_input') return [];
  return [unknownValue(item)];
}

/**
 * A completed item -> events. `warning` for Codex's non-fatal error items (fallback metadata, transport).
 * `lifecycle` is the session's subagent record (a fresh one reads the item on its own).
 */
export function mapCompletedItem(item: JsonObject, lifecycle: SubagentLifecycle = new Map()): DraftEvent[] {
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
      return collabEvents(item, lifecycle);
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
export function mapUnfinishedItem(item: JsonObject, lifecycle: SubagentLifecycle = new Map()): DraftEvent[] {
  return mapCompletedItem({ ...item, status: 'in_progress', exit_code: null }, lifecycle).map((event) =>
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
      // A spawn's receivers exist only once it completed (its start lists none): it is identified by its prompt.
      if (item.tool === 'spawn_agent') return `collab_tool_call\0spawn_agent\0${text(item.prompt)}`;
      return `collab_tool_call\0${text(item.tool)}\0${Array.isArray(item.receiver_thread_ids) ? item.receiver_thread_ids.map(text).join('\0') : ''}`;
    default:
      return String(item.type);
  }
}
