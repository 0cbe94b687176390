// The Copilot `--output-format json` records and fields the translator reads, as zod schemas (issue 19, finding
// 7): a record that fails its schema becomes `unknown`, never a default. Fields the translator does not read may
// hold anything: z.object ignores them; `unknown` events carry the raw record. Shapes:
// shared/reference/harnesses.md section 9.
import { z } from 'zod';
import { AnyJsonObject } from '../../shared/translate/json-object.ts';

const id = z.string().min(1);

export const CopilotRecord = z.object({ type: z.string() });
export const DataRecord = z.object({ data: AnyJsonObject, agentId: id.optional() });
export const ResultRecord = z.object({ sessionId: id.optional(), exitCode: z.int().optional(), usage: z.unknown().optional() });

export const AssistantMessage = z.object({ content: z.string().optional(), reasoningText: z.string().optional(), model: z.string().optional() });
export const AssistantReasoning = z.object({ content: z.string() });
export const ToolStart = z.object({ toolCallId: id, toolName: z.string().min(1), arguments: AnyJsonObject.optional() });
export const ToolComplete = z.object({
  toolCallId: id,
  success: z.boolean().optional(),
  shellExecution: z.object({ exitCode: z.int().optional() }).optional(),
  toolTelemetry: z.object({ properties: z.object({ viewType: z.string().optional() }).optional() }).optional(),
});
export type ToolComplete = z.infer<typeof ToolComplete>;
export const Subagent = z.object({ toolCallId: id.optional(), agentDisplayName: z.string().optional(), agentName: z.string().optional() });
export const ModelCallFailure = z.object({ statusCode: z.int().optional(), errorMessage: z.string().optional(), failureKind: z.string().optional() });
export const SessionError = z.object({ message: z.string().optional(), errorType: z.string().optional() });
export const SessionWarning = z.object({ message: z.string().optional(), warningType: z.string().optional() });
