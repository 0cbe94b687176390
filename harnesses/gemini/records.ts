// The Gemini CLI stream-json records and fields the translator reads, as zod schemas (issue 19, finding 7): a
// record that fails its schema becomes `unknown`, never a default (a status that is not one of the documented
// values is no verdict). Fields the translator does not read may hold anything: z.object ignores them; `unknown`
// events carry the raw record. Shapes: shared/reference/harnesses.md section 3.
import { z } from 'zod';
import { AnyJsonObject } from '../../shared/translate/json-object.ts';

const id = z.string().min(1);
const status = z.enum(['success', 'error']);

export const GeminiRecord = z.object({ type: z.string() });
export const InitRecord = z.object({ session_id: id.optional(), model: z.string().optional() });
export const MessageRecord = z.object({ role: z.string(), content: z.string(), delta: z.boolean().optional() });
export const ToolUseRecord = z.object({ tool_id: id, tool_name: z.string().min(1), parameters: AnyJsonObject });
export const ToolResultRecord = z.object({
  tool_id: id,
  status,
  output: z.string().optional(),
  error: z.object({ message: z.string().optional() }).optional(),
});
export type ToolResult = z.infer<typeof ToolResultRecord>;
export const ErrorRecord = z.object({ message: z.string(), severity: z.enum(['warning', 'error']).optional() });
export const ResultRecord = z.object({
  status,
  stats: z.unknown().optional(),
  error: z.object({ message: z.string().optional(), type: z.string().optional() }).optional(),
});
