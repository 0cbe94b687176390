// Droid usage -> normalized classes, from the terminal `completion.usage`: input_tokens is already NON-cached
// (9900 = 11 x 900 against the stub), output_tokens includes reasoning (no separate count), cache_read_input_tokens,
// cache_creation_input_tokens. factory_credits is Factory's billing unit, not USD: raw usage only.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const DROID_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc: 'completion.usage: input_tokens (non-cached) -> input, output_tokens -> output, cache_read_input_tokens -> cache_read, cache_creation_input_tokens -> cache_write. factory_credits kept raw.',
};

export function droidTokens(usage: JsonObject): TokenUsage {
  return shapeTokens(DROID_USAGE_SHAPE, { input: num(usage.input_tokens), output: num(usage.output_tokens), cache_read: num(usage.cache_read_input_tokens), cache_write: num(usage.cache_creation_input_tokens) });
}
