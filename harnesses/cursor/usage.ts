// Cursor usage -> normalized classes (shared/reference/harnesses.md table A; cursor.com output-format doc).
// The terminal `result.usage{inputTokens,outputTokens,cacheReadTokens?,cacheWriteTokens?}` is the session total,
// read once. `inputTokens` is taken as already excluding cached tokens: a documented sample has inputTokens 5
// next to cacheReadTokens 10, which an inclusive count could not produce (UNVERIFIED against a live run).
// Reasoning is not reported separately; Cursor reports no cost.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { count, obj } from '../../shared/translate/json.ts';

export const CURSOR_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'result.usage: inputTokens -> input (already uncached), cacheReadTokens -> cache_read, cacheWriteTokens -> ' +
    'cache_write, outputTokens -> output (reasoning included, not broken out). No cost reported.',
};

/** Tokens from a terminal `result.usage`, or null when the record carries no readable usage. */
export function cursorUsage(usage: unknown): TokenUsage | null {
  const u = obj(usage);
  if (!u) return null;
  const input = count(u.inputTokens);
  const output = count(u.outputTokens);
  if (input === undefined && output === undefined) return null;
  return shapeTokens(CURSOR_USAGE_SHAPE, {
    input,
    output,
    cache_read: count(u.cacheReadTokens),
    cache_write: count(u.cacheWriteTokens),
  });
}
