// The Qwen Code stream-json records and fields the translator reads, as zod schemas (issue 19, finding 7): a
// record or block that fails its schema becomes `unknown`, never a default. Loose objects: fields the translator
// does not read may hold anything. Shapes: shared/reference/harnesses.md section 4 (Claude-shaped records,
// `system/*` payloads under `data`).
import { z } from 'zod';

const id = z.string().min(1);

/** Every record: its type, and the session id the CLI stamps on it. */
export const QwenRecord = z.looseObject({ type: z.string(), session_id: id.optional() });

export const SystemRecord = z.looseObject({ subtype: z.string() });
const context = { cwd: z.string().optional(), model: z.string().optional() };
export const InitRecord = z.looseObject({ ...context, data: z.looseObject(context).optional() });
export const TaskStartedRecord = z.looseObject({
  data: z.looseObject({ task_id: id, tool_use_id: id.optional(), subagent_type: z.string().optional(), description: z.string().optional() }),
});
export const TaskNotificationRecord = z.looseObject({ data: z.looseObject({ task_id: id, status: z.string().min(1), tool_use_id: id.optional() }) });

export const AssistantRecord = z.looseObject({ message: z.looseObject({ content: z.array(z.unknown()) }) });
export const AssistantBlock = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('thinking'), thinking: z.string() }),
  z.looseObject({ type: z.literal('tool_use'), id, name: z.string().min(1), input: z.looseObject({}) }),
]);

export const UserRecord = z.looseObject({ message: z.looseObject({ content: z.union([z.string(), z.array(z.unknown())]) }) });
export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: id,
  /** Absent means success (the Anthropic-style tool_result this mirrors). */
  is_error: z.boolean().optional(),
  content: z.unknown().optional(),
});

export const ResultRecord = z.looseObject({
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
  usage: z.unknown().optional(),
});
