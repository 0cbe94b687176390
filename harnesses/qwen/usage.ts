// Qwen Code usage -> normalized classes. Terminal `result.usage`: input_tokens is the OpenAI prompt_tokens and
// INCLUDES cache_read_input_tokens (subtract); output_tokens; no cache-write or reasoning key; no cost.
// Per-assistant-line usage is per message and also summed into result.usage: never added again.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const QWEN_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read'],
  doc: 'result.usage: input_tokens - cache_read_input_tokens -> input, cache_read_input_tokens -> cache_read, output_tokens -> output. No cache write, reasoning or cost.',
};

export function qwenTokens(usage: JsonObject): TokenUsage {
  const input = num(usage.input_tokens) ?? 0;
  const cached = num(usage.cache_read_input_tokens) ?? 0;
  return shapeTokens(QWEN_USAGE_SHAPE, { input: input - cached, cache_read: cached, output: num(usage.output_tokens) });
}
