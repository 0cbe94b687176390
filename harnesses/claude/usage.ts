// Claude Code usage -> normalized classes (shared/reference/harnesses.md, table A).
// `result.usage` covers only the main agent; `result.modelUsage.<model>` covers every model call including
// subagents, so it is the whole-session figure. Anthropic's `input_tokens` already excludes cached tokens, and
// thinking is inside `output_tokens` with no separate count, so reasoning is not a class Claude reports.
// Per-assistant-line `message.usage` is a message_start copy (output_tokens: 1) repeated per block: never summed.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const CLAUDE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'result.modelUsage summed over models (falls back to result.usage): inputTokens/input_tokens -> input (already ' +
    'uncached), cacheReadInputTokens/cache_read_input_tokens -> cache_read, cacheCreationInputTokens/' +
    'cache_creation_input_tokens -> cache_write, outputTokens/output_tokens -> output (thinking included; no ' +
    'reasoning count). total_cost_usd -> reported cost (the CLI prices it from its own table).',
};

export function claudeUsage(result: JsonObject): { tokens: TokenUsage | null; raw: unknown } {
  const usage = obj(result.usage);
  const modelUsage = obj(result.modelUsage);
  const raw = { usage: usage ?? null, modelUsage: modelUsage ?? null };
  const perModel = modelUsage ? Object.values(modelUsage).map(obj).filter((m): m is JsonObject => m !== undefined) : [];
  if (perModel.length > 0) {
    const sum = (key: string) => perModel.reduce((acc, m) => acc + (num(m[key]) ?? 0), 0);
    return {
      tokens: shapeTokens(CLAUDE_USAGE_SHAPE, {
        input: sum('inputTokens'),
        output: sum('outputTokens'),
        cache_read: sum('cacheReadInputTokens'),
        cache_write: sum('cacheCreationInputTokens'),
      }),
      raw,
    };
  }
  if (usage) {
    return {
      tokens: shapeTokens(CLAUDE_USAGE_SHAPE, {
        input: num(usage.input_tokens),
        output: num(usage.output_tokens),
        cache_read: num(usage.cache_read_input_tokens),
        cache_write: num(usage.cache_creation_input_tokens),
      }),
      raw,
    };
  }
  return { tokens: null, raw: null };
}
