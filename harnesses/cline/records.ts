// The Cline `--json` records and fields the translator reads, as zod schemas (issue 19, finding 7): a record that
// fails its schema becomes `unknown`, never a default. Fields the translator does not read may hold anything:
// z.object ignores them; `unknown` events carry the raw record. Shapes: shared/reference/harnesses.md section 7.
import { z } from 'zod';
import { AnyJsonObject } from '../../shared/translate/json-object.ts';

const id = z.string().min(1);

export const ClineRecord = z.object({ type: z.string() });
export const HookRecord = z.object({
  hookEventName: z.string(),
  agentId: id.optional(),
  taskId: id.optional(),
  /** null for the main agent, the parent's id for a subagent. */
  parentAgentId: z.string().nullable().optional(),
});
export const AgentEventRecord = z.object({ event: z.object({ type: z.string() }) });
export const ToolStart = z.object({ toolCallId: id, toolName: z.string().min(1), input: AnyJsonObject });
export const ToolEnd = z.object({ toolCallId: id, toolName: z.string().optional(), output: z.unknown().optional() });
export const TextStart = z.object({ contentType: z.enum(['text', 'reasoning']), text: z.string().optional(), reasoning: z.string().optional() });
export const ErrorEvent = z.object({ error: z.object({ message: z.string(), name: z.string().optional() }) });
export const RunResult = z.object({
  finishReason: z.string().optional(),
  text: z.string().optional(),
  model: z.object({ id: z.string().optional() }).optional(),
  usage: z.unknown().optional(),
  aggregateUsage: z.unknown().optional(),
});
export const RunAborted = z.object({ message: z.string().optional(), reason: z.string().optional() });
