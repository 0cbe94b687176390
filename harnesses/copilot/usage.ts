// Copilot usage -> normalized classes. The JSONL stream has no token counts (result.usage holds premium requests
// and durations only); tokens come from the `--usage-output-file` report: modelMetrics.<model>.usage, whose
// inputTokens INCLUDE cacheReadTokens (subtract) and whose outputTokens include reasoningTokens (a breakdown, not
// an addition). modelMetrics already sums the main agent and every subagent (agentMetrics splits them).
// requests.cost is in premium requests, not USD: raw only.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num, obj } from '../../shared/translate/json.ts';

export const COPILOT_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc: 'usage report (--usage-output-file) modelMetrics.*.usage summed over models: inputTokens - cacheReadTokens -> input, cacheReadTokens -> cache_read, cacheWriteTokens -> cache_write, outputTokens -> output (reasoningTokens is part of it), reasoningTokens -> reasoning. No USD cost reported.',
};

/** Tokens from the parsed usage report; undefined when its model metrics are not in the known shape. */
export function copilotTokens(report: unknown): TokenUsage | undefined {
  const metrics = obj(obj(report)?.modelMetrics);
  if (!metrics) return undefined;
  const sum = { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  for (const entry of Object.values(metrics)) {
    const usage = obj(obj(entry)?.usage);
    const input = num(usage?.inputTokens);
    if (!usage || input === undefined) return undefined;
    const cacheRead = num(usage.cacheReadTokens) ?? 0;
    sum.input += input - cacheRead;
    sum.cache_read += cacheRead;
    sum.cache_write += num(usage.cacheWriteTokens) ?? 0;
    sum.output += num(usage.outputTokens) ?? 0;
    sum.reasoning += num(usage.reasoningTokens) ?? 0;
  }
  // No model answered (e.g. the first request failed): a report of zero usage, which is the truth.
  return shapeTokens(COPILOT_USAGE_SHAPE, sum);
}
