// Codex usage -> normalized classes (shared/reference/harnesses.md table A).
// turn.completed.usage is built from the thread's running TOTAL (event_processor_with_jsonl_output.rs uses
// ThreadTokenUsage.total, not last): cumulative across turns and across resumed sessions. So the session's usage
// is the last report, never a sum, and the driver takes the last session's figure for a resumed chain
// (usageScope: 'thread'). OpenAI semantics: input_tokens INCLUDES cached_input_tokens (subtract);
// output_tokens INCLUDES reasoning_output_tokens (a breakdown). No cost is reported.
// A count that is not a non-negative integer leaves its classes null (never 0) and is named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, minus, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';

export const CODEX_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    'last turn.completed.usage (cumulative for the thread): input_tokens - cached_input_tokens -> input, ' +
    'cached_input_tokens -> cache_read, cache_write_input_tokens -> cache_write, output_tokens -> output ' +
    '(reasoning included), reasoning_output_tokens -> reasoning (breakdown). No cost reported.',
};

/** `cache_write_input_tokens` is newer than exec_events.rs: older releases omit it (no cache writes reported). */
export const CodexUsage = z.object({
  input_tokens: TokenCount,
  cached_input_tokens: TokenCount,
  cache_write_input_tokens: TokenCount.optional(),
  output_tokens: TokenCount,
  reasoning_output_tokens: TokenCount,
});

export function readCodexUsage(usage: unknown): { tokens: TokenUsage; unreadable: string[] } {
  const { fields, unreadable } = readUsage(CodexUsage, usage);
  const field = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const cached = field('cached_input_tokens');
  const tokens = shapeReadTokens(CODEX_USAGE_SHAPE, {
    input: minus(field('input_tokens'), cached),
    cache_read: cached,
    cache_write: field('cache_write_input_tokens'),
    output: field('output_tokens'),
    reasoning: field('reasoning_output_tokens'),
  });
  return { tokens, unreadable };
}

export const codexTokens = (usage: unknown): TokenUsage => readCodexUsage(usage).tokens;
