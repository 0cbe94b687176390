// Normalized token usage (spec: "Usage reporting"). Each class is a count or null: null means the harness's usage
// shape does not report that class, so a genuine 0 stays distinguishable from "never reported".
//
// Class meanings (disjoint unless noted, so cost = sum of class x price, with reasoning never added on top):
//   input       prompt tokens NOT served from cache (OpenAI-style totals that include cached tokens are reduced)
//   cache_read  prompt tokens served from the provider's cache
//   cache_write prompt tokens written to the provider's cache
//   output      all generated tokens, reasoning included
//   reasoning   the part of `output` spent on reasoning: a breakdown, already inside output
import { z } from 'zod';

export const TOKEN_CLASSES = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;
export type TokenClass = (typeof TOKEN_CLASSES)[number];

const count = z.int().nonnegative().nullable();
export const TokenUsage = z.strictObject({
  input: count.describe('Prompt tokens not served from the cache'),
  output: count.describe('Generated tokens, reasoning included'),
  cache_read: count.describe("Prompt tokens served from the provider's cache"),
  cache_write: count.describe("Prompt tokens written to the provider's cache"),
  reasoning: count.describe('The part of output spent on reasoning (already counted in output)'),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

export const UsageReport = z.strictObject({
  tokens: TokenUsage,
  raw: z.json().describe('The harness usage object(s) as reported, kept so usage can be re-derived'),
});
export type UsageReport = z.infer<typeof UsageReport>;

/** Which classes a harness reports: the only ones ever filled in for its runs. */
export interface UsageShape {
  readonly classes: readonly TokenClass[];
  /** Where the numbers come from and how raw keys map, for docs and `tcab harnesses list`. */
  readonly doc: string;
}

export const EMPTY_TOKENS: TokenUsage = Object.freeze({
  input: null,
  output: null,
  cache_read: null,
  cache_write: null,
  reasoning: null,
});

/**
 * Applies a usage shape: declared classes take the adapter's number (a missing number counts as 0, since the
 * harness does report that class), undeclared classes stay null whatever the adapter computed.
 */
export function shapeTokens(shape: UsageShape, values: Partial<Record<TokenClass, number>>): TokenUsage {
  const tokens: Record<TokenClass, number | null> = { ...EMPTY_TOKENS };
  for (const cls of shape.classes) tokens[cls] = Math.max(0, Math.round(values[cls] ?? 0));
  return tokens;
}

/** Sums usage across sessions of one run; a class stays null only when every session left it null. */
export function addTokens(a: TokenUsage, b: TokenUsage): TokenUsage {
  const out: Record<TokenClass, number | null> = { ...EMPTY_TOKENS };
  for (const cls of TOKEN_CLASSES) {
    const x = a[cls];
    const y = b[cls];
    out[cls] = x === null && y === null ? null : (x ?? 0) + (y ?? 0);
  }
  return out;
}
