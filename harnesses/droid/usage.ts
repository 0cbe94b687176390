// Droid usage -> normalized classes, from the terminal `completion.usage`: input_tokens is already NON-cached
// (9900 = 11 x 900 against the stub), output_tokens includes reasoning (no separate count), cache_read_input_tokens,
// cache_creation_input_tokens. factory_credits is Factory's billing unit, not USD: raw usage only.
// A count that is not a non-negative integer leaves its class null (never 0) and is named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';

export const DROID_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc: 'completion.usage: input_tokens (non-cached) -> input, output_tokens -> output, cache_read_input_tokens -> cache_read, cache_creation_input_tokens -> cache_write. factory_credits kept raw.',
};

export const DroidUsage = z.object({
  input_tokens: TokenCount,
  output_tokens: TokenCount,
  cache_read_input_tokens: TokenCount,
  cache_creation_input_tokens: TokenCount,
});

export function readDroidUsage(usage: unknown): { tokens: TokenUsage; unreadable: string[] } {
  const { fields, unreadable } = readUsage(DroidUsage, usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const tokens = shapeReadTokens(DROID_USAGE_SHAPE, {
    input: field('input_tokens'),
    output: field('output_tokens'),
    cache_read: field('cache_read_input_tokens'),
    cache_write: field('cache_creation_input_tokens'),
  });
  return { tokens, unreadable };
}

export const droidTokens = (usage: unknown): TokenUsage => readDroidUsage(usage).tokens;
