// Aider's per-message usage line -> normalized classes. Format (aider/coders/base_coder.py,
// `calculate_and_show_tokens_and_cost`):
//   Tokens: <sent> sent[, <w> cache write][, <h> cache hit], <received> received.[ Cost: $<m> message, $<s> session.]
// Counts go through `format_tokens` (950, 2.3k, 12k): parsed values are rounded to that precision.
// "sent" is litellm's prompt_tokens (cache reads included) plus cache_creation_input_tokens, so both cache classes
// are subtracted for uncached input. Each line is one model call's message totals and is summed; the "session"
// cost is cumulative, so the last one is the session's cost: litellm's list-price estimate, which aider reports as
// its own cost figure (not a provider invoice).
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';

export const AIDER_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'Sum of stdout "Tokens: … sent, … cache write, … cache hit, … received." lines (rounded like 2.3k): sent - ' +
    'cache write - cache hit -> input, cache hit -> cache_read, cache write -> cache_write, received -> output. ' +
    'The last "Cost: $… session." -> reported cost (litellm list-price estimate).',
};

export interface AiderUsageLine {
  sent: number;
  cache_write: number;
  cache_hit: number;
  received: number;
  /** The cumulative session cost, when the model has a price. */
  session_cost_usd?: number;
}

const COUNT = String.raw`(\d+(?:\.\d+)?k?)`;
const TOKENS_LINE = new RegExp(
  String.raw`^Tokens: ${COUNT} sent(?:, ${COUNT} cache write)?(?:, ${COUNT} cache hit)?, ${COUNT} received\.` +
    String.raw`(?: Cost: \$(\d+(?:\.\d+)?) message, \$(\d+(?:\.\d+)?) session\.)?\s*$`,
);

function tokens(text: string | undefined): number {
  if (text === undefined) return 0;
  return text.endsWith('k') ? Math.round(Number(text.slice(0, -1)) * 1000) : Number(text);
}

/** Parses the documented line; anything else (including near misses) is not a usage line. */
export function parseUsageLine(line: string): AiderUsageLine | undefined {
  const m = TOKENS_LINE.exec(line.trim());
  if (!m) return undefined;
  const parsed: AiderUsageLine = { sent: tokens(m[1]), cache_write: tokens(m[2]), cache_hit: tokens(m[3]), received: tokens(m[4]) };
  if (m[6] !== undefined) parsed.session_cost_usd = Number(m[6]);
  return parsed;
}

export function aiderTokens(lines: readonly AiderUsageLine[]): TokenUsage | null {
  if (lines.length === 0) return null;
  const sum = (pick: (l: AiderUsageLine) => number) => lines.reduce((acc, l) => acc + pick(l), 0);
  return shapeTokens(AIDER_USAGE_SHAPE, {
    input: sum((l) => Math.max(0, l.sent - l.cache_write - l.cache_hit)),
    output: sum((l) => l.received),
    cache_read: sum((l) => l.cache_hit),
    cache_write: sum((l) => l.cache_write),
  });
}
