// The Claude Code stream-json records and fields the translator reads, as zod schemas (issue 19, finding 7): a
// record or block that fails its schema becomes `unknown`, never a default. Fields the translator does not read may
// hold anything: z.object ignores them (and does not copy them, which keeps the hot path fast); `unknown` events
// carry the raw record. Shapes: shared/reference/harnesses.md section 1.
import { z } from 'zod';

const id = z.string().min(1);

/** The session id the CLI stamps on every record. */
const stamped = { session_id: id.optional() };

export const SystemRecord = z.object({ type: z.literal('system'), ...stamped, subtype: z.string() });
export const InitRecord = z.object({ cwd: z.string().optional(), model: z.string().optional() });
export const ApiRetryRecord = z.object({
  error_status: z.int().nullable().optional(),
  error: z.string().optional(),
  attempt: z.int().nonnegative().optional(),
  max_retries: z.int().nonnegative().optional(),
  retry_delay_ms: z.number().nonnegative().optional(),
});
export const TaskStartedRecord = z.object({
  task_id: id,
  tool_use_id: id.optional(),
  subagent_type: z.string().optional(),
  description: z.string().optional(),
});
export const TaskNotificationRecord = z.object({ task_id: id, status: z.string().min(1), tool_use_id: id.optional() });

export const AssistantRecord = z.object({
  type: z.literal('assistant'),
  ...stamped,
  message: z.object({ content: z.array(z.unknown()), model: z.string().optional() }),
  /** Set on the synthetic assistant message Claude Code prints for a failed API call. */
  error: z.string().optional(),
});
/** Content blocks: shared/translate/anthropic-blocks.ts (ClaudeCodeBlock), read the same for Qwen Code and Amp. */

export const UserRecord = z.object({
  type: z.literal('user'),
  ...stamped,
  message: z.object({ content: z.union([z.string(), z.array(z.unknown())]) }),
  tool_use_result: z.unknown().optional(),
});
/** tool_result blocks: shared/translate/anthropic-blocks.ts (ToolResultBlock). */
/** The structured result of a Task/Agent call: `async_launched` means the subagent only started. */
export const TaskToolResult = z.object({ status: z.string(), agentId: id.optional() });

export const ResultRecord = z.object({
  type: z.literal('result'),
  ...stamped,
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  api_error_status: z.int().nullable().optional(),
  modelUsage: z.unknown().optional(),
  usage: z.unknown().optional(),
  total_cost_usd: z.unknown().optional(),
});

/**
 * One stdout line: a record of a known type with the fields every record of that type carries, read in one parse
 * (the translation hot path). An unknown type fails it like an unreadable field does: the line is `unknown`.
 */
export const ClaudeLine = z.discriminatedUnion('type', [
  SystemRecord,
  AssistantRecord,
  UserRecord,
  ResultRecord,
  z.object({ type: z.literal('stream_event'), ...stamped }),
]);
export type ClaudeLine = z.infer<typeof ClaudeLine>;
