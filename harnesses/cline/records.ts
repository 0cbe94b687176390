// The Cline `--json` records and fields the translator reads, as zod schemas (issue 19, finding 7): a record that
// fails its schema becomes `unknown`, never a default. Loose objects: fields the translator does not read may hold
// anything. Shapes: shared/reference/harnesses.md section 7.
import { z } from 'zod';

const id = z.string().min(1);

export const ClineRecord = z.looseObject({ type: z.string() });
export const HookRecord = z.looseObject({
  hookEventName: z.string(),
  agentId: id.optional(),
  taskId: id.optional(),
  /** null for the main agent, the parent's id for a subagent. */
  parentAgentId: z.string().nullable().optional(),
});
export const AgentEventRecord = z.looseObject({ event: z.looseObject({ type: z.string() }) });
export const ToolStart = z.looseObject({ toolCallId: id, toolName: z.string().min(1), input: z.looseObject({}) });
export const ToolEnd = z.looseObject({ toolCallId: id, toolName: z.string().optional(), output: z.unknown().optional() });
export const TextStart = z.looseObject({ contentType: z.enum(['text', 'reasoning']), text: z.string().optional(), reasoning: z.string().optional() });
export const ErrorEvent = z.looseObject({ error: z.looseObject({ message: z.string(), name: z.string().optional() }) });
export const RunResult = z.looseObject({
  finishReason: z.string().optional(),
  text: z.string().optional(),
  model: z.looseObject({ id: z.string().optional() }).optional(),
  usage: z.unknown().optional(),
  aggregateUsage: z.unknown().optional(),
});
export const RunAborted = z.looseObject({ message: z.string().optional(), reason: z.string().optional() });
