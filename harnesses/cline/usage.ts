// Cline usage -> normalized classes, from `run_result.usage`: inputTokens is the prompt count INCLUDING
// cacheReadTokens (subtract), cacheWriteTokens, outputTokens; no reasoning count. totalCost is Cline's catalogue
// estimate (0 for unknown models): raw usage only. The subagents' usage is NOT in run_result (seen in 3.0.65).
// Each count is read through its schema: an unreadable one makes what is computed from it null, never 0.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { minus, readUsage, shapeReadTokens, TokenCount } from '../../shared/translate/token-counts.ts';

export const CLINE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc: 'run_result.usage: inputTokens - cacheReadTokens -> input, cacheReadTokens -> cache_read, cacheWriteTokens -> cache_write, outputTokens -> output. totalCost (estimate) kept raw; subagents not included by Cline. An unreadable count leaves what it feeds null, with a warning.',
};

const Usage = z.object({
  inputTokens: TokenCount.optional(),
  cacheReadTokens: TokenCount.optional(),
  cacheWriteTokens: TokenCount.optional(),
  outputTokens: TokenCount.optional(),
});

/** Tokens from `run_result.usage`, and the fields that failed their schema (all of them when it is not an object). */
export function clineTokens(usage: unknown): { tokens: TokenUsage; unreadable: string[] } {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) {
    return { tokens: shapeReadTokens(CLINE_USAGE_SHAPE, { input: null, cache_read: null, cache_write: null, output: null }), unreadable: ['usage'] };
  }
  const { fields, unreadable } = readUsage(Usage, usage);
  const known = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const cacheRead = known('cacheReadTokens');
  return {
    tokens: shapeReadTokens(CLINE_USAGE_SHAPE, { input: minus(known('inputTokens'), cacheRead), cache_read: cacheRead, cache_write: known('cacheWriteTokens'), output: known('outputTokens') }),
    unreadable: unreadable.map((f) => `usage.${f}`),
  };
}
