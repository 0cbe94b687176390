// The Kimi Code `--output-format stream-json` records and fields the translator reads, as zod schemas: OpenAI-style
// chat messages one per line (`role` assistant/tool) and `role: "meta"` records (`type` system.version,
// session.resume_hint). A record that fails its schema becomes `unknown`, never a default; fields the translator
// does not read may hold anything (z.object ignores them).
import { z } from 'zod';

const id = z.string().min(1);

export const KimiRecord = z.object({ role: z.string() });
export const MetaRecord = z.object({ type: z.string() });
export const ResumeHint = z.object({ session_id: id });
export const ToolCall = z.object({ id, type: z.literal('function').optional(), function: z.object({ name: z.string().min(1), arguments: z.string() }) });
export const AssistantMessage = z.object({
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  /** Reasoning as OpenAI-compatible streams name it, when Kimi prints it. */
  reasoning_content: z.string().optional(),
  tool_calls: z.array(z.unknown()).optional(),
});
export const ToolMessage = z.object({ tool_call_id: id, content: z.union([z.string(), z.array(z.unknown())]) });
export const TextPart = z.object({ type: z.literal('text'), text: z.string() });
export const ThinkPart = z.object({ type: z.literal('think'), think: z.string() });
