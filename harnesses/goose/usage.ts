// goose usage -> normalized classes. The terminal `complete` record carries the session's accumulated totals
// (`get_session_usage_totals`, crates/goose-cli/src/session/mod.rs), read once, never summed.
// goose's `Usage` doc comment (crates/goose/src/providers/base.rs): "`input_tokens` is the total input including
// cache read/write tokens; the cache fields are breakdown subsets of it" -> both are subtracted for `input`.
// `cost_usd` is goose's own figure priced from its model catalogue (an estimate, not a provider invoice).
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { count, num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const GOOSE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'complete record (session totals): input_tokens - cache_read_input_tokens - cache_write_input_tokens -> input ' +
    '(goose counts cached prompt tokens inside input_tokens), cache_read_input_tokens -> cache_read, ' +
    'cache_write_input_tokens -> cache_write, output_tokens -> output (reasoning not broken out). cost_usd -> ' +
    "reported cost (goose's own estimate from its pricing catalogue).",
};

const USAGE_KEYS = ['total_tokens', 'input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_write_input_tokens'] as const;

export function gooseUsage(complete: JsonObject): { tokens: TokenUsage | null; raw: JsonObject | null; cost: number | null } {
  const raw: JsonObject = {};
  for (const key of [...USAGE_KEYS, 'cost_usd']) if (complete[key] !== undefined) raw[key] = complete[key];
  const cost = num(complete.cost_usd) ?? null;
  const inclusiveInput = count(complete.input_tokens);
  const output = count(complete.output_tokens);
  if (inclusiveInput === undefined && output === undefined) return { tokens: null, raw: Object.keys(raw).length > 0 ? raw : null, cost };
  const cache_read = count(complete.cache_read_input_tokens) ?? 0;
  const cache_write = count(complete.cache_write_input_tokens) ?? 0;
  const tokens = shapeTokens(GOOSE_USAGE_SHAPE, {
    input: Math.max(0, (inclusiveInput ?? 0) - cache_read - cache_write),
    output,
    cache_read,
    cache_write,
  });
  return { tokens, raw, cost };
}
