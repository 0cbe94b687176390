// Grok usage -> normalized classes, from stdout's `end` (or an `error` that carries spend fields). The headless-mode
// guide's token policy (~/.grok/docs/user-guide/14-headless-mode.md, "Usage notes"): `usage.input_tokens` is
// uncached only, `cache_read_input_tokens` the cache hits, `total_tokens = input + cache_read + output`; the stub
// run shows `output_tokens` includes `reasoning_tokens`. So input -> input, cache_read_input_tokens -> cache_read,
// output_tokens -> output, reasoning_tokens -> reasoning (a breakdown inside output); Grok reports no cache writes.
// `usage` covers the prompt and the subagents that finished before the turn ended; compaction and other side-model
// calls (the session title) are excluded, and `usage_is_incomplete: true` says subagent usage is missing: then the
// session's total is unknown (null), the figures kept in raw usage. `total_cost_usd` appears only when the server
// reported a complete cost (an exact charge; absent means unreported, never free).
// A count that is not a non-negative integer makes its class null for the session (never 0), named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';

export const GROK_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'stdout end.usage: input_tokens (uncached) -> input, cache_read_input_tokens -> cache_read, output_tokens -> output, ' +
    'reasoning_tokens -> reasoning (inside output); no cache writes. end.total_cost_usd, when present, is the reported cost.',
};

const EndUsage = z.object({ input_tokens: TokenCount, cache_read_input_tokens: TokenCount, output_tokens: TokenCount, reasoning_tokens: TokenCount });
const Cost = z.number().nonnegative();

export interface GrokUsage {
  /** Null when Grok said its figures are incomplete. */
  tokens: TokenUsage | null;
  /** The spend fields as printed. */
  raw: { usage: unknown; modelUsage?: unknown; num_turns?: unknown; usage_is_incomplete?: unknown };
  /** Fields that failed their schema. */
  unreadable: string[];
  incomplete: boolean;
}

/** The spend fields of an `end` or `error` record; undefined when it carries no `usage` (the prompt never reached the model). */
export function grokUsage(record: { usage?: unknown; modelUsage?: unknown; num_turns?: unknown; usage_is_incomplete?: unknown }): GrokUsage | undefined {
  if (record.usage === undefined) return undefined;
  const { fields, unreadable } = readUsage(EndUsage, record.usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const incomplete = record.usage_is_incomplete === true;
  const tokens = shapeReadTokens(GROK_USAGE_SHAPE, { input: field('input_tokens'), cache_read: field('cache_read_input_tokens'), output: field('output_tokens'), reasoning: field('reasoning_tokens') });
  const raw = { usage: record.usage, modelUsage: record.modelUsage, num_turns: record.num_turns, usage_is_incomplete: record.usage_is_incomplete };
  return { tokens: incomplete ? null : tokens, raw, unreadable, incomplete };
}

/** `total_cost_usd` when it is a readable charge, else null (absent: unreported, never $0). */
export function grokCost(value: unknown): number | null {
  const cost = Cost.safeParse(value);
  return cost.success ? cost.data : null;
}
