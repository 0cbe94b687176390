// The Qwen Code stream-json records and fields the translator reads, as zod schemas (issue 19, finding 7): a
// record or block that fails its schema becomes `unknown`, never a default. Fields the translator does not read may
// hold anything: z.object ignores them; `unknown` events carry the raw record. Shapes:
// shared/reference/harnesses.md section 4 (Claude-shaped records, `system/*` payloads under `data`).
import { z } from 'zod';

const id = z.string().min(1);

/** Every record: its type, and the session id the CLI stamps on it. */
export const QwenRecord = z.object({ type: z.string(), session_id: id.optional() });

export const SystemRecord = z.object({ subtype: z.string() });
const context = { cwd: z.string().optional(), model: z.string().optional() };
export const InitRecord = z.object({ ...context, data: z.object(context).optional() });
export const TaskStartedRecord = z.object({
  data: z.object({ task_id: id, tool_use_id: id.optional(), subagent_type: z.string().optional(), description: z.string().optional() }),
});
export const TaskNotificationRecord = z.object({ data: z.object({ task_id: id, status: z.string().min(1), tool_use_id: id.optional() }) });

export const AssistantRecord = z.object({ message: z.object({ content: z.array(z.unknown()) }) });
/** Content blocks: shared/translate/anthropic-blocks.ts (CompatibleBlock), read the same as Claude Code's. */

export const UserRecord = z.object({ message: z.object({ content: z.union([z.string(), z.array(z.unknown())]) }) });
/** tool_result blocks: shared/translate/anthropic-blocks.ts (ToolResultBlock). */

export const ResultRecord = z.object({
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  error: z.object({ message: z.string().optional() }).optional(),
  usage: z.unknown().optional(),
});
