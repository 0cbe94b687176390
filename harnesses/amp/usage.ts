// Amp usage -> normalized classes (shared/reference/harnesses.md section 10 and table A).
// Usage arrives per assistant message (`message.usage`, Anthropic-shaped); the terminal `result` carries none in
// the vendor sample, so the session total is the sum over messages, each message counted once (by `message.id`
// when present: a message repeated over several lines must not be added twice).
// Unlike Anthropic's API, Amp's `input_tokens` INCLUDES the cached prompt: the vendor sample reports
// input_tokens 12783 = cache_read_input_tokens 12416 + cache_creation_input_tokens 367, so both cache classes are
// subtracted to get the uncached input. Thinking is inside output_tokens with no separate count. No cost.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { count, obj } from '../../shared/translate/json.ts';

export const AMP_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'Sum of assistant message.usage (each message once): input_tokens - cache_read_input_tokens - ' +
    'cache_creation_input_tokens -> input (Amp counts the cached prompt inside input_tokens), ' +
    'cache_read_input_tokens -> cache_read, cache_creation_input_tokens -> cache_write, output_tokens -> output ' +
    '(thinking included, not broken out). No cost reported.',
};

export interface AmpUsageTotals {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** The classes of one message's usage, or undefined when it has no readable token counts. */
export function messageUsage(usage: unknown): AmpUsageTotals | undefined {
  const u = obj(usage);
  const inclusiveInput = count(u?.input_tokens);
  const output = count(u?.output_tokens);
  if (!u || inclusiveInput === undefined || output === undefined) return undefined;
  const cache_read = count(u.cache_read_input_tokens) ?? 0;
  const cache_write = count(u.cache_creation_input_tokens) ?? 0;
  return { input: Math.max(0, inclusiveInput - cache_read - cache_write), output, cache_read, cache_write };
}

export function addUsage(total: AmpUsageTotals | undefined, one: AmpUsageTotals): AmpUsageTotals {
  if (!total) return { ...one };
  return {
    input: total.input + one.input,
    output: total.output + one.output,
    cache_read: total.cache_read + one.cache_read,
    cache_write: total.cache_write + one.cache_write,
  };
}

export function ampTokens(total: AmpUsageTotals | undefined): TokenUsage | null {
  return total ? shapeTokens(AMP_USAGE_SHAPE, total) : null;
}
