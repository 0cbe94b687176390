// The Pi `--mode json` records and fields the translator reads, as zod schemas (docs/json.md of the package:
// AgentSessionEvent). A record that fails its schema becomes `unknown`, never a default. Fields the translator does
// not read may hold anything: z.object ignores them, and `unknown` events carry the raw record.
import { z } from 'zod';

const id = z.string().min(1);

export const PiRecord = z.object({ type: z.string() });
export const SessionHeader = z.object({ id, cwd: z.string().min(1).optional() });
/** A message of message_start / message_end: its role decides what it is. */
export const MessageRecord = z.object({ message: z.object({ role: z.string() }) });
export const AssistantMessage = z.object({
  content: z.array(z.unknown()),
  /** Read on its own (usage.ts), so that one bad count costs only its class. */
  usage: z.unknown().optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
  model: z.string().min(1).optional(),
});
export const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
export const ThinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string() });
export const ToolCallBlock = z.object({ type: z.literal('toolCall'), id, name: z.string().min(1), arguments: z.unknown() });
export const ToolStart = z.object({ toolCallId: id, toolName: z.string().min(1), args: z.unknown() });
export const ToolEnd = z.object({ toolCallId: id, result: z.unknown(), isError: z.boolean() });
export const RetryStart = z.object({ attempt: z.int().optional(), maxAttempts: z.int().optional(), delayMs: z.number().optional(), errorMessage: z.string().optional() });
export const RetryEnd = z.object({ success: z.boolean(), attempt: z.int().optional(), finalError: z.string().optional() });
export const CompactionStart = z.object({ reason: z.string().optional() });
export const CompactionEnd = z.object({ reason: z.string().optional(), aborted: z.boolean().optional(), errorMessage: z.string().optional() });
