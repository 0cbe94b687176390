// The Grok records and fields the translator reads, as zod schemas. Two sources:
// - stdout (`--output-format streaming-json`, the headless-mode guide Grok installs as
//   ~/.grok/docs/user-guide/14-headless-mode.md): `text`, `thought`, `end`, `error`, plus `max_turns_reached` and
//   `auto_compact_*`;
// - the session's updates.jsonl (ACP `session/update` notifications and xAI's `_x.ai/session/update` extension):
//   `{timestamp, method, params: {sessionId, update: {sessionUpdate, ...}}}`.
// A record that fails its schema becomes `unknown`, never a default; fields the translator does not read may hold
// anything (z.object ignores them).
import { z } from 'zod';

const id = z.string().min(1);

/** A stdout record: its `type` decides the rest. */
export const StdoutRecord = z.object({ type: z.string() });
/** `text` / `thought`: a chunk of the answer or of the reasoning. */
export const TextChunk = z.object({ data: z.string() });
/** `end`: always the last record; spend fields only when the prompt reached the model. */
export const EndRecord = z.object({
  stopReason: z.string().min(1).optional(),
  sessionId: id.optional(),
  /** Read on its own (usage.ts), so that one bad count costs only its class. */
  usage: z.unknown().optional(),
  modelUsage: z.record(z.string(), z.unknown()).optional(),
  num_turns: z.unknown().optional(),
  total_cost_usd: z.unknown().optional(),
  cost_is_partial: z.unknown().optional(),
  usage_is_incomplete: z.unknown().optional(),
});
/** `error`: carries `message`, and spend fields when usage was recorded. */
export const ErrorRecord = EndRecord.extend({ message: z.string() });

/** An updates.jsonl line: the notification envelope. */
export const UpdateLine = z.object({
  method: z.string(),
  params: z.object({ sessionId: id, update: z.object({ sessionUpdate: z.string().min(1) }) }),
});
/** `agent_message_chunk` / `agent_thought_chunk` / `user_message_chunk`: one content block. */
export const ChunkUpdate = z.object({ content: z.object({ type: z.string(), text: z.string().optional() }) });
/** ACP ToolCall: the tool's own name is `_meta["x.ai/tool"].name` (the title, until an update retitles it). */
export const ToolCallUpdate = z.object({
  toolCallId: id,
  title: z.string().optional(),
  status: z.string().optional(),
  rawInput: z.unknown().optional(),
  rawOutput: z.unknown().optional(),
  _meta: z.object({ 'x.ai/tool': z.object({ name: z.string().min(1) }).optional() }).optional(),
});
export const SubagentSpawned = z.object({ subagent_id: id, subagent_type: z.string().optional(), description: z.string().optional() });
export const SubagentFinished = z.object({ subagent_id: id, status: z.string().min(1) });
export const RetryState = z.object({ type: z.string().min(1), message: z.string().optional() });
