// Attribute names of the OpenTelemetry GenAI semantic conventions (gen_ai.*, as of semantic-conventions 1.38, now
// kept in the semantic-conventions-genai repository) and the few general ones (error.type, file.path,
// process.exit.code) a tcab span carries, plus tcab.* for what the conventions have no name for. Written out here
// rather than imported: the JS package marks the gen_ai constants deprecated (moved), and the names are the contract
// a backend reads, not the package.
import { TOKEN_CLASSES } from '../../shared/usage.ts';
import type { TokenUsage } from '../../shared/usage.ts';
import type { WireAccount } from '../../shared/gateway.ts';

export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  workflowName: 'gen_ai.workflow.name',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
} as const;

export const OPERATION = { workflow: 'invoke_workflow', agent: 'invoke_agent', tool: 'execute_tool' } as const;

export type AttributeValue = string | number | boolean;
export type SpanAttributes = Record<string, AttributeValue>;

/** Longest text put in one attribute: an agent message can be megabytes; a trace backend wants a readable line. */
export const MAX_TEXT = 4096;

/** Text cut to MAX_TEXT characters, saying how long it was (the full text is on the run's NATS stream). */
export function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT)}… [${text.length} characters, cut]`;
}

/**
 * Token usage as gen_ai.usage.* attributes. The conventions' input_tokens includes cached tokens, while our `input`
 * class excludes them (shared/usage.ts), so input_tokens is input + cache_read + cache_write; the uncached part
 * stays visible as tcab.usage.input_uncached_tokens. A class the harness does not report (null) is left out, never 0.
 */
export function usageAttributes(tokens: TokenUsage | null): SpanAttributes {
  if (!tokens) return {};
  const out: SpanAttributes = {};
  const inputs = [tokens.input, tokens.cache_read, tokens.cache_write].filter((n): n is number => n !== null);
  if (inputs.length > 0) out[GEN_AI.inputTokens] = inputs.reduce((a, b) => a + b, 0);
  if (tokens.input !== null) out['tcab.usage.input_uncached_tokens'] = tokens.input;
  if (tokens.output !== null) out[GEN_AI.outputTokens] = tokens.output;
  if (tokens.cache_read !== null) out[GEN_AI.cacheReadTokens] = tokens.cache_read;
  if (tokens.cache_write !== null) out[GEN_AI.cacheWriteTokens] = tokens.cache_write;
  if (tokens.reasoning !== null) out[GEN_AI.reasoningTokens] = tokens.reasoning;
  return out;
}

/**
 * What the model gateway measured on the wire (issue 34), beside the harness's own usage: tcab.wire.* (the GenAI
 * conventions have one usage per span, the harness's; the wire's is ours).
 */
export function wireAttributes(wire: WireAccount | null | undefined): SpanAttributes {
  if (!wire) return {};
  const out: SpanAttributes = { 'tcab.wire.requests': wire.requests, 'tcab.wire.throttled': wire.throttled, 'tcab.wire.refused': wire.refused };
  for (const cls of TOKEN_CLASSES) if (wire.tokens?.[cls] != null) out[`tcab.wire.${cls}_tokens`] = wire.tokens[cls]!;
  if (wire.cost_usd != null) out['tcab.wire.cost_usd'] = wire.cost_usd;
  return out;
}

/** Cost attributes (USD): the conventions define none, so tcab.cost.* with the meaning of RunResult's fields. */
export function costAttributes(cost: { reported?: number | null; actual?: number | null; comparable?: number | null }): SpanAttributes {
  const out: SpanAttributes = {};
  if (cost.reported != null) out['tcab.cost.reported_usd'] = cost.reported;
  if (cost.actual != null) out['tcab.cost.actual_usd'] = cost.actual;
  if (cost.comparable != null) out['tcab.cost.comparable_usd'] = cost.comparable;
  return out;
}

/** Copies the defined values only (an attribute is never set to undefined). */
export function defined(attributes: Record<string, AttributeValue | undefined | null>): SpanAttributes {
  const out: SpanAttributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined && value !== null) out[key] = value;
  return out;
}
