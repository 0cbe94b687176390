// OpenHands usage -> normalized classes. Not on stdout: the conversation's state file
// ~/.openhands/conversations/<id>/base_state.json (a side file the driver reads after the session) holds
// `stats.usage_to_metrics`, one entry per LLM the conversation used (`agent`, `condenser`, and `task:<id>` for each
// subagent, whose metrics the SDK copies into its parent), each with `accumulated_token_usage` (the sum over its
// calls) and `accumulated_cost`. Classes, as the SDK reads them from LiteLLM's usage (openhands-sdk
// llm/utils/telemetry.py): `prompt_tokens` counts every prompt token (cached ones included; LiteLLM adds
// Anthropic's cache reads and writes to it), `cache_read_tokens` (prompt_tokens_details.cached_tokens) and
// `cache_write_tokens` (cache creation) are part of it, `completion_tokens` is every generated token and
// `reasoning_tokens` the part of it spent on reasoning. So input = prompt - cache_read - cache_write, output =
// completion, reasoning a breakdown of output. The whole conversation's figures: a resumed conversation's include
// its earlier sessions (the adapter's usageScope is `thread`).
// `accumulated_cost` is LiteLLM's price-table estimate, 0 for a model the table does not know: never a reported
// charge. The sum is kept in raw usage (estimated_cost_usd), null when it is 0 (0 says "no price", not "free").
// A count that is not a non-negative integer makes its class null for the session (never 0), named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, minus, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';
import { obj } from '../../shared/translate/json.ts';

export const OPENHANDS_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    'sum over base_state.json stats.usage_to_metrics.*.accumulated_token_usage (agent, condenser, task:* subagents): ' +
    'prompt_tokens - cache_read_tokens - cache_write_tokens -> input, completion_tokens -> output, cache_read_tokens -> ' +
    'cache_read, cache_write_tokens -> cache_write, reasoning_tokens -> reasoning (within output). Sum of accumulated_cost ' +
    "(LiteLLM's price-table estimate, 0 for unknown models) kept in raw usage as estimated_cost_usd, null when 0.",
};

const TokenUsageFields = z.object({
  prompt_tokens: TokenCount,
  completion_tokens: TokenCount,
  cache_read_tokens: TokenCount,
  cache_write_tokens: TokenCount,
  reasoning_tokens: TokenCount,
});
const Cost = z.number().nonnegative();
const State = z.object({
  execution_status: z.string().optional(),
  stats: z.object({ usage_to_metrics: z.record(z.string(), z.unknown()) }),
});

export interface OpenHandsState {
  /** Null when the file holds no usage (no LLM entry) or cannot be read. */
  tokens: TokenUsage | null;
  /** Each entry's model, accumulated usage and cost, as written; null when the file cannot be read. */
  raw: Record<string, unknown> | null;
  /** The summed price-table estimate; null when 0 or any entry's is unreadable. */
  estimatedCostUsd: number | null;
  /** ConversationExecutionStatus: finished, error, stuck, paused, ... */
  executionStatus?: string;
  /** The agent LLM's model name. */
  model?: string;
  /** Fields that failed their schema, dotted from the file's root. */
  unreadable: string[];
}

/** base_state.json's text -> the conversation's usage, status and model. */
export function openHandsState(text: string): OpenHandsState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { tokens: null, raw: null, estimatedCostUsd: null, unreadable: ['(the file is no JSON)'] };
  }
  const state = State.safeParse(value);
  if (!state.success) return { tokens: null, raw: null, estimatedCostUsd: null, unreadable: ['stats.usage_to_metrics'] };
  const unreadable: string[] = [];
  const raw: Record<string, unknown> = {};
  let classes: ClassValues = {};
  let entries = 0;
  let cost: number | null = 0;
  for (const [name, entry] of Object.entries(state.data.stats.usage_to_metrics)) {
    const metrics = obj(entry) ?? {};
    const where = `stats.usage_to_metrics.${name}`;
    raw[name] = { model_name: metrics.model_name, accumulated_token_usage: metrics.accumulated_token_usage, accumulated_cost: metrics.accumulated_cost };
    const spent = Cost.safeParse(metrics.accumulated_cost);
    if (!spent.success) unreadable.push(`${where}.accumulated_cost`);
    cost = cost === null || !spent.success ? null : cost + spent.data;
    // An LLM that never answered has no accumulated usage yet.
    if (metrics.accumulated_token_usage === null || metrics.accumulated_token_usage === undefined) continue;
    const { fields, unreadable: bad } = readUsage(TokenUsageFields, metrics.accumulated_token_usage);
    for (const field of bad) unreadable.push(`${where}.accumulated_token_usage.${field}`);
    const field = (key: keyof typeof fields) => (bad.includes(key) ? null : fields[key]);
    const cacheRead = field('cache_read_tokens');
    const cacheWrite = field('cache_write_tokens');
    classes = addClassValues(classes, {
      input: minus(field('prompt_tokens'), cacheRead, cacheWrite),
      output: field('completion_tokens'),
      cache_read: cacheRead,
      cache_write: cacheWrite,
      reasoning: field('reasoning_tokens'),
    });
    entries += 1;
  }
  const agent = obj(state.data.stats.usage_to_metrics.agent);
  const model = typeof agent?.model_name === 'string' && agent.model_name.length > 0 ? agent.model_name : undefined;
  return {
    tokens: entries > 0 ? shapeReadTokens(OPENHANDS_USAGE_SHAPE, classes) : null,
    raw,
    estimatedCostUsd: cost === null || cost === 0 ? null : cost,
    ...(state.data.execution_status === undefined ? {} : { executionStatus: state.data.execution_status }),
    ...(model === undefined ? {} : { model }),
    unreadable,
  };
}
