// The Gemini CLI stream-json records and fields the translator reads, as zod schemas (issue 19, finding 7): a
// record that fails its schema becomes `unknown`, never a default (a status that is not one of the documented
// values is no verdict). Loose objects: fields the translator does not read may hold anything.
// Shapes: shared/reference/harnesses.md section 3.
import { z } from 'zod';

const id = z.string().min(1);
const status = z.enum(['success', 'error']);

export const GeminiRecord = z.looseObject({ type: z.string() });
export const InitRecord = z.looseObject({ session_id: id.optional(), model: z.string().optional() });
export const MessageRecord = z.looseObject({ role: z.string(), content: z.string(), delta: z.boolean().optional() });
export const ToolUseRecord = z.looseObject({ tool_id: id, tool_name: z.string().min(1), parameters: z.looseObject({}) });
export const ToolResultRecord = z.looseObject({
  tool_id: id,
  status,
  output: z.string().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
});
export type ToolResult = z.infer<typeof ToolResultRecord>;
export const ErrorRecord = z.looseObject({ message: z.string(), severity: z.enum(['warning', 'error']).optional() });
export const ResultRecord = z.looseObject({
  status,
  stats: z.unknown().optional(),
  error: z.looseObject({ message: z.string().optional(), type: z.string().optional() }).optional(),
});
