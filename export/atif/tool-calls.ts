// One tool event of our stream -> an ATIF tool call and, when we observed how it went, its observation result.
// Our events are finished activities: the call and what tcab saw of its outcome (success, exit code) arrive together,
// but never the tool's output, which the stream does not carry; so an observation holds only what we saw.
import type { EventOf } from '../../shared/events.ts';
import type { AtifObservationResult, AtifToolCall, JsonValue } from './schema.ts';

export type ToolEvent = EventOf<'command' | 'read' | 'write' | 'search' | 'list' | 'skill'>;
export const TOOL_EVENT_TYPES: readonly ToolEvent['type'][] = ['command', 'read', 'write', 'search', 'list', 'skill'];

export function isToolEvent(event: { type: string }): event is ToolEvent {
  return (TOOL_EVENT_TYPES as readonly string[]).includes(event.type);
}

/** Drops undefined fields: ATIF leaves out what we do not know, it never carries a null we would have made up. */
export function defined(fields: Record<string, JsonValue | undefined>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<string, JsonValue>;
}

function argumentsOf(event: ToolEvent): Record<string, JsonValue> {
  switch (event.type) {
    case 'command':
      return defined({ command: event.command, working_directory: event.working_directory });
    case 'read':
    case 'write':
      return defined({ path: event.path, start_line: event.start_line, end_line: event.end_line });
    case 'skill':
      return defined({ skill_name: event.skill_name, path: event.path, start_line: event.start_line, end_line: event.end_line });
    case 'search':
      return defined({ query: event.query, path: event.path });
    case 'list':
      return defined({ path: event.path });
  }
}

/**
 * The harness's own tool name when the event says it (what a reader of that harness's transcripts knows), else
 * our activity kind; the kind is always in `extra.tcab_kind`, so a consumer can group calls across harnesses.
 */
export function toolCall(event: ToolEvent, callId: string): AtifToolCall {
  return { tool_call_id: callId, function_name: event.tool_name ?? event.type, arguments: argumentsOf(event), extra: { tcab_kind: event.type } };
}

/** What tcab observed of the outcome, as a result linked to the call; undefined when it observed nothing. */
export function toolResult(event: ToolEvent, callId: string): AtifObservationResult | undefined {
  const seen = defined({ is_success: event.is_success, exit_code: event.type === 'command' ? event.exit_code : undefined });
  return Object.keys(seen).length === 0 ? undefined : { source_call_id: callId, extra: seen };
}
