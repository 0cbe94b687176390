// goose usage -> normalized classes. The terminal `complete` record carries the session's accumulated totals
// (`get_session_usage_totals`, crates/goose-cli/src/session/mod.rs), read once, never summed.
// goose's `Usage` doc comment (crates/goose/src/providers/base.rs): "`input_tokens` is the total input including
// cache read/write tokens; the cache fields are breakdown subsets of it" -> both are subtracted for `input`.
// A count left out is not reported: an input or output count left out leaves its class null, a cache count left
// out subtracts nothing (0). A count of the wrong type (a string, a fraction, null where only total_tokens may be
// null) leaves its classes null and is named in a warning.
// `cost_usd` is goose's own figure priced from its model catalogue (an estimate, not a provider invoice).
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import type { JsonObject } from '../../shared/translate/json.ts';
import { TokenCount, minus, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';

export const GOOSE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'complete record (session totals): input_tokens - cache_read_input_tokens - cache_write_input_tokens -> input ' +
    '(goose counts cached prompt tokens inside input_tokens), cache_read_input_tokens -> cache_read, ' +
    'cache_write_input_tokens -> cache_write, output_tokens -> output (reasoning not broken out). cost_usd -> ' +
    "reported cost (goose's own estimate from its pricing catalogue).",
};

/** `total_tokens` is an Option (null when unknown); the other counts are left out when not reported. */
export const GooseComplete = z.object({
  total_tokens: TokenCount.nullable().optional(),
  input_tokens: TokenCount.optional(),
  output_tokens: TokenCount.optional(),
  cache_read_input_tokens: TokenCount.optional(),
  cache_write_input_tokens: TokenCount.optional(),
  cost_usd: z.number().nonnegative().optional(),
});

const USAGE_KEYS = ['total_tokens', 'input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_write_input_tokens', 'cost_usd'] as const;

export function gooseUsage(complete: JsonObject): { tokens: TokenUsage | null; raw: JsonObject | null; unreadable: string[] } {
  const raw: JsonObject = {};
  for (const key of USAGE_KEYS) if (complete[key] !== undefined) raw[key] = complete[key];
  const { fields, unreadable } = readUsage(GooseComplete, complete);
  const field = (key: 'input_tokens' | 'output_tokens') => (unreadable.includes(key) ? null : fields[key]);
  const inclusiveInput = field('input_tokens');
  const output = field('output_tokens');
  if (inclusiveInput === undefined && output === undefined) return { tokens: null, raw: Object.keys(raw).length > 0 ? raw : null, unreadable };
  // A cache count not reported is no cached tokens: nothing to subtract.
  const cache = (key: 'cache_read_input_tokens' | 'cache_write_input_tokens') => (unreadable.includes(key) ? null : (fields[key] ?? 0));
  const cacheRead = cache('cache_read_input_tokens');
  const cacheWrite = cache('cache_write_input_tokens');
  const tokens = shapeReadTokens(GOOSE_USAGE_SHAPE, {
    input: minus(inclusiveInput, cacheRead, cacheWrite) ?? null,
    output: output ?? null,
    cache_read: cacheRead,
    cache_write: cacheWrite,
  });
  return { tokens, raw, unreadable };
}
