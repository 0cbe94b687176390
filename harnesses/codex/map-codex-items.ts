// Codex `exec --json` items -> normalized events. The stream is already categorised by Codex
// (codex-rs/exec/src/exec_events.rs): command_execution -> command, file_change -> write (one per change),
// collab_tool_call -> orchestration; mcp_tool_call, web_search, todo_list, plan have no event type -> unknown.
// Reads, searches and listings Codex runs through the shell stay `command` events (never guessed from the text).
import type { DraftEvent } from '../../shared/events.ts';
import { arr, compact, num, obj, str } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { unknownValue } from '../../shared/translate/best-effort.ts';

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
  const command = str(item.command);
  if (command === undefined) return unknownValue(item);
  const status = str(item.status);
  const exitCode = num(item.exit_code);
  const finished = status === 'completed' || status === 'failed' || status === 'declined';
  return compact({
    type: 'command',
    command: unwrapShell(command),
    exit_code: exitCode,
    is_success: finished ? status === 'completed' && (exitCode === undefined || exitCode === 0) : undefined,
  });
}

function fileChangeEvents(item: JsonObject): DraftEvent[] {
  const changes = arr(item.changes);
  if (!changes) return [unknownValue(item)];
  const status = str(item.status);
  const is_success = status === 'completed' ? true : status === 'failed' ? false : undefined;
  return changes.map((change) => {
    const path = str(obj(change)?.path);
    return path === undefined ? unknownValue(change) : compact({ type: 'write', path, is_success });
  });
}

/** Subagents (multi-agent tools): spawn starts them; a finished wait reports each agent's final state. */
function collabEvents(item: JsonObject): DraftEvent[] {
  const tool = str(item.tool);
  const receivers = (arr(item.receiver_thread_ids) ?? []).map(str).filter((s): s is string => s !== undefined);
  if (tool === 'spawn_agent' && receivers.length > 0) {
    return receivers.map((id) => ({ type: 'orchestration', action: 'subagent_started', subagent_id: id }));
  }
  if (tool === 'wait' || tool === 'close_agent') {
    const states = obj(item.agents_states);
    if (!states) return [unknownValue(item)];
    const out: DraftEvent[] = [];
    for (const [id, state] of Object.entries(states)) {
      const status = str(obj(state)?.status);
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
    case 'agent_message': {
      const text = str(item.text);
      return text === undefined ? [unknownValue(item)] : text.length > 0 ? [{ type: 'agent', message: text }] : [];
    }
    case 'reasoning': {
      const text = str(item.text);
      return text === undefined ? [unknownValue(item)] : text.length > 0 ? [{ type: 'reasoning', message: text }] : [];
    }
    case 'command_execution':
      return [commandEvent(item)];
    case 'file_change':
      return fileChangeEvents(item);
    case 'collab_tool_call':
      return collabEvents(item);
    case 'error': {
      const message = str(item.message);
      return message === undefined ? [unknownValue(item)] : [{ type: 'warning', message }];
    }
    default:
      // mcp_tool_call, web_search, todo_list, plan, and anything newer: no event type of their own.
      return [unknownValue(item)];
  }
}
