// Codex usage -> normalized classes (shared/reference/harnesses.md table A).
// turn.completed.usage is built from the thread's running TOTAL (event_processor_with_jsonl_output.rs uses
// ThreadTokenUsage.total, not last): cumulative across turns and across resumed sessions. So the session's usage
// is the last report, never a sum, and the driver takes the last session's figure for a resumed chain
// (usageScope: 'thread'). OpenAI semantics: input_tokens INCLUDES cached_input_tokens (subtract);
// output_tokens INCLUDES reasoning_output_tokens (a breakdown). No cost is reported.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const CODEX_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    'last turn.completed.usage (cumulative for the thread): input_tokens - cached_input_tokens -> input, ' +
    'cached_input_tokens -> cache_read, cache_write_input_tokens -> cache_write, output_tokens -> output ' +
    '(reasoning included), reasoning_output_tokens -> reasoning (breakdown). No cost reported.',
};

export function codexTokens(usage: JsonObject): TokenUsage {
  const input = num(usage.input_tokens) ?? 0;
  const cached = num(usage.cached_input_tokens) ?? 0;
  return shapeTokens(CODEX_USAGE_SHAPE, {
    input: input - cached,
    cache_read: cached,
    cache_write: num(usage.cache_write_input_tokens) ?? 0,
    output: num(usage.output_tokens),
    reasoning: num(usage.reasoning_output_tokens),
  });
}
