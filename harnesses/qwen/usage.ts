// Qwen Code usage -> normalized classes. Terminal `result.usage`: input_tokens is the OpenAI prompt_tokens and
// INCLUDES cache_read_input_tokens (subtract); output_tokens; no cache-write or reasoning key; no cost.
// Per-assistant-line usage is per message and also summed into result.usage: never added again.
// Each count is read through its schema: an unreadable one makes what is computed from it null, never 0.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { minus, readUsage, shapeReadTokens, TokenCount } from '../../shared/translate/token-counts.ts';

export const QWEN_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read'],
  doc: 'result.usage: input_tokens - cache_read_input_tokens -> input, cache_read_input_tokens -> cache_read, output_tokens -> output. No cache write, reasoning or cost. An unreadable count leaves what it feeds null, with a warning.',
};

const QwenUsage = z.object({ input_tokens: TokenCount.optional(), cache_read_input_tokens: TokenCount.optional(), output_tokens: TokenCount.optional() });

/** Tokens from `result.usage`, and the fields that failed their schema (all of them when it is not an object). */
export function qwenTokens(usage: unknown): { tokens: TokenUsage; unreadable: string[] } {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) {
    return { tokens: shapeReadTokens(QWEN_USAGE_SHAPE, { input: null, cache_read: null, output: null }), unreadable: ['usage'] };
  }
  const { fields, unreadable } = readUsage(QwenUsage, usage);
  const known = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const cached = known('cache_read_input_tokens');
  return {
    tokens: shapeReadTokens(QWEN_USAGE_SHAPE, { input: minus(known('input_tokens'), cached), cache_read: cached, output: known('output_tokens') }),
    unreadable: unreadable.map((f) => `usage.${f}`),
  };
}
