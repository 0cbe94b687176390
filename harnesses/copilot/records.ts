// The Copilot `--output-format json` records and fields the translator reads, as zod schemas (issue 19, finding
// 7): a record that fails its schema becomes `unknown`, never a default. Loose objects: fields the translator
// does not read may hold anything. Shapes: shared/reference/harnesses.md section 9.
import { z } from 'zod';

const id = z.string().min(1);

export const CopilotRecord = z.looseObject({ type: z.string() });
export const DataRecord = z.looseObject({ data: z.looseObject({}), agentId: id.optional() });
export const ResultRecord = z.looseObject({ sessionId: id.optional(), exitCode: z.int().optional(), usage: z.unknown().optional() });

export const AssistantMessage = z.looseObject({ content: z.string().optional(), reasoningText: z.string().optional(), model: z.string().optional() });
export const AssistantReasoning = z.looseObject({ content: z.string() });
export const ToolStart = z.looseObject({ toolCallId: id, toolName: z.string().min(1), arguments: z.looseObject({}).optional() });
export const ToolComplete = z.looseObject({
  toolCallId: id,
  success: z.boolean().optional(),
  shellExecution: z.looseObject({ exitCode: z.int().optional() }).optional(),
  toolTelemetry: z.looseObject({ properties: z.looseObject({ viewType: z.string().optional() }).optional() }).optional(),
});
export type ToolComplete = z.infer<typeof ToolComplete>;
export const Subagent = z.looseObject({ toolCallId: id.optional(), agentDisplayName: z.string().optional(), agentName: z.string().optional() });
export const ModelCallFailure = z.looseObject({ statusCode: z.int().optional(), errorMessage: z.string().optional(), failureKind: z.string().optional() });
export const SessionError = z.looseObject({ message: z.string().optional(), errorType: z.string().optional() });
export const SessionWarning = z.looseObject({ message: z.string().optional(), warningType: z.string().optional() });
