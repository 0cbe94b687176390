// Cursor usage -> normalized classes (shared/reference/harnesses.md table A; cursor.com output-format doc).
// The terminal `result.usage{inputTokens,outputTokens,cacheReadTokens?,cacheWriteTokens?}` is the session total,
// read once. `inputTokens` is taken as already excluding cached tokens: a documented sample has inputTokens 5
// next to cacheReadTokens 10, which an inclusive count could not produce (UNVERIFIED against a live run).
// Reasoning is not reported separately; Cursor reports no cost. The cache counts are documented as optional
// (absent: none reported, 0); a count of the wrong type leaves its class null and is named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';

export const CURSOR_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'result.usage: inputTokens -> input (already uncached), cacheReadTokens -> cache_read, cacheWriteTokens -> ' +
    'cache_write, outputTokens -> output (reasoning included, not broken out). No cost reported.',
};

export const CursorUsage = z.object({
  inputTokens: TokenCount,
  outputTokens: TokenCount,
  cacheReadTokens: TokenCount.optional(),
  cacheWriteTokens: TokenCount.optional(),
});

/** Tokens from a terminal `result.usage` and the fields that failed their schema; undefined when it is no object. */
export function readCursorUsage(usage: unknown): { tokens: TokenUsage; unreadable: string[] } | undefined {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return undefined;
  const { fields, unreadable } = readUsage(CursorUsage, usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const tokens = shapeReadTokens(CURSOR_USAGE_SHAPE, {
    input: field('inputTokens'),
    output: field('outputTokens'),
    cache_read: field('cacheReadTokens'),
    cache_write: field('cacheWriteTokens'),
  });
  return { tokens, unreadable };
}

/** Tokens from a terminal `result.usage`, or null when the record carries no usage object. */
export function cursorUsage(usage: unknown): TokenUsage | null {
  return readCursorUsage(usage)?.tokens ?? null;
}
