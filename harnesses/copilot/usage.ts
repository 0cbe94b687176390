// Copilot usage -> normalized classes. The JSONL stream has no token counts (result.usage holds premium requests
// and durations only); tokens come from the `--usage-output-file` report: modelMetrics.<model>.usage, whose
// inputTokens INCLUDE cacheReadTokens (subtract) and whose outputTokens include reasoningTokens (a breakdown, not
// an addition). modelMetrics already sums the main agent and every subagent (agentMetrics splits them).
// requests.cost is in premium requests, not USD: raw only. Each count is read through its schema: an unreadable
// one makes what is computed from it null, never 0.
import { z } from 'zod';
import type { TokenClass, TokenUsage, UsageShape } from '../../shared/usage.ts';
import { addClassValues, minus, readUsage, shapeReadTokens, TokenCount } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const COPILOT_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc: 'usage report (--usage-output-file) modelMetrics.*.usage summed over models: inputTokens - cacheReadTokens -> input, cacheReadTokens -> cache_read, cacheWriteTokens -> cache_write, outputTokens -> output (reasoningTokens is part of it), reasoningTokens -> reasoning. No USD cost reported. An unreadable count leaves what it feeds null, with a warning.',
};

const ModelUsage = z.object({
  inputTokens: TokenCount,
  cacheReadTokens: TokenCount.optional(),
  cacheWriteTokens: TokenCount.optional(),
  outputTokens: TokenCount.optional(),
  reasoningTokens: TokenCount.optional(),
});
const Report = z.object({ modelMetrics: z.record(z.string(), z.unknown()) });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ALL_UNKNOWN: ClassValues = Object.fromEntries(COPILOT_USAGE_SHAPE.classes.map((c: TokenClass) => [c, null]));

/**
 * Tokens from the parsed usage report, and the fields that failed their schema; undefined when the report has no
 * model metrics at all (not the known shape).
 */
export function copilotTokens(report: unknown): { tokens: TokenUsage; unreadable: string[] } | undefined {
  const parsed = Report.safeParse(report);
  if (!parsed.success) return undefined;
  let sum: ClassValues = {};
  const unreadable: string[] = [];
  for (const [model, entry] of Object.entries(parsed.data.modelMetrics)) {
    const usage = isObject(entry) ? entry.usage : undefined;
    if (!isObject(usage)) {
      unreadable.push(`modelMetrics.${model}.usage`);
      sum = addClassValues(sum, ALL_UNKNOWN);
      continue;
    }
    const reading = readUsage(ModelUsage, usage);
    for (const field of reading.unreadable) unreadable.push(`modelMetrics.${model}.usage.${field}`);
    const known = (key: keyof typeof reading.fields) => (reading.unreadable.includes(key) ? null : reading.fields[key]);
    const cacheRead = known('cacheReadTokens');
    sum = addClassValues(sum, {
      input: minus(known('inputTokens'), cacheRead),
      cache_read: cacheRead,
      cache_write: known('cacheWriteTokens'),
      output: known('outputTokens'),
      reasoning: known('reasoningTokens'),
    });
  }
  // No model answered (e.g. the first request failed): a report of zero usage, which is the truth.
  return { tokens: shapeReadTokens(COPILOT_USAGE_SHAPE, sum), unreadable };
}
