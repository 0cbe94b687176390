// Amp usage -> normalized classes (shared/reference/harnesses.md section 10 and table A).
// Usage arrives per assistant message (`message.usage`, Anthropic-shaped); the terminal `result` carries none in
// the vendor sample, so the session total is the sum over messages, each message counted once (by `message.id`
// when present: a message repeated over several lines must not be added twice).
// Unlike Anthropic's API, Amp's `input_tokens` INCLUDES the cached prompt: the vendor sample reports
// input_tokens 12783 = cache_read_input_tokens 12416 + cache_creation_input_tokens 367, so both cache classes are
// subtracted to get the uncached input. Thinking is inside output_tokens with no separate count. No cost.
// The cache counts are optional (Anthropic omits them when nothing was cached: 0). A count of the wrong type
// makes its classes null for the whole session (a sum with an unknown term is unknown), named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, minus, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const AMP_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'Sum of assistant message.usage (each message once): input_tokens - cache_read_input_tokens - ' +
    'cache_creation_input_tokens -> input (Amp counts the cached prompt inside input_tokens), ' +
    'cache_read_input_tokens -> cache_read, cache_creation_input_tokens -> cache_write, output_tokens -> output ' +
    '(thinking included, not broken out). No cost reported.',
};

export const AmpMessageUsage = z.object({
  input_tokens: TokenCount,
  output_tokens: TokenCount,
  cache_read_input_tokens: TokenCount.optional(),
  cache_creation_input_tokens: TokenCount.optional(),
});

/** The classes of one message's usage, and the fields that failed their schema. */
export function messageUsage(usage: unknown): { classes: ClassValues; unreadable: string[] } {
  const { fields, unreadable } = readUsage(AmpMessageUsage, usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const cacheRead = field('cache_read_input_tokens');
  const cacheWrite = field('cache_creation_input_tokens');
  const classes: ClassValues = {
    input: minus(field('input_tokens'), cacheRead, cacheWrite),
    output: field('output_tokens'),
    cache_read: cacheRead === undefined ? 0 : cacheRead,
    cache_write: cacheWrite === undefined ? 0 : cacheWrite,
  };
  return { classes, unreadable };
}

export const addUsage = (total: ClassValues | undefined, one: ClassValues): ClassValues => (total ? addClassValues(total, one) : { ...one });

export function ampTokens(total: ClassValues | undefined): TokenUsage | null {
  return total ? shapeReadTokens(AMP_USAGE_SHAPE, total) : null;
}
