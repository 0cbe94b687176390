// Pi usage -> normalized classes: the sum of every assistant `message_end.message.usage` (one per model call).
// Classes are disjoint there (totalTokens = input + output + cacheRead + cacheWrite): `input` is already uncached,
// `output` is every generated token (Pi reports no reasoning breakdown: reasoning stays null). `cost` is Pi's own
// estimate from its price table (USD): kept in raw usage (estimated_cost_usd), never the reported cost (for a model
// id Pi does not know, it prices another model's rates).
// A count that is not a non-negative integer makes its class null for the session (never 0), named in a warning;
// an unreadable cost makes the session's estimate null.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const PI_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'sum of assistant message_end.message.usage: input -> input, output -> output, cacheRead -> cache_read, ' +
    'cacheWrite -> cache_write (no reasoning breakdown). Sum of usage.cost.total (Pi\'s price table estimate) kept in raw usage.',
};

export const MessageUsage = z.object({ input: TokenCount, output: TokenCount, cacheRead: TokenCount, cacheWrite: TokenCount });
const Cost = z.object({ total: z.number().nonnegative() });

export interface UsageTotals {
  classes: ClassValues;
  /** Sum of the messages' cost.total; null once one was unreadable. */
  cost: number | null;
  messages: number;
}

export const emptyTotals = (): UsageTotals => ({ classes: {}, cost: 0, messages: 0 });

/** Adds one assistant message's `usage`; returns the names of the fields that failed their schema. */
export function addMessageUsage(totals: UsageTotals, usage: unknown): string[] {
  const { fields, unreadable } = readUsage(MessageUsage, usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  totals.classes = addClassValues(totals.classes, { input: field('input'), output: field('output'), cache_read: field('cacheRead'), cache_write: field('cacheWrite') });
  const cost = Cost.safeParse((usage as { cost?: unknown } | null | undefined)?.cost);
  if (!cost.success) unreadable.push('cost.total');
  totals.cost = totals.cost === null || !cost.success ? null : totals.cost + cost.data.total;
  totals.messages += 1;
  return unreadable;
}

export function piTokens(totals: UsageTotals): TokenUsage {
  return shapeReadTokens(PI_USAGE_SHAPE, totals.classes);
}
