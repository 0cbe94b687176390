// Claude Code usage -> normalized classes (shared/reference/harnesses.md, table A).
// `result.usage` covers only the main agent; `result.modelUsage.<model>` covers every model call including
// subagents, so it is the whole-session figure. Anthropic's `input_tokens` already excludes cached tokens, and
// thinking is inside `output_tokens` with no separate count, so reasoning is not a class Claude reports.
// Per-assistant-line `message.usage` is a message_start copy (output_tokens: 1) repeated per block: never summed.
// Each count is read through its schema: an unreadable one makes its class null and is named in `unreadable`
// (the translator warns), never 0 (issue 19, finding 7).
import { z } from 'zod';
import type { TokenClass, TokenUsage, UsageShape } from '../../shared/usage.ts';
import { readUsage, shapeReadTokens, TokenCount } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';
import { compileSchema } from '../../shared/translate/compiled-schema.ts';

export const CLAUDE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc:
    'result.modelUsage summed over models (falls back to result.usage): inputTokens/input_tokens -> input (already ' +
    'uncached), cacheReadInputTokens/cache_read_input_tokens -> cache_read, cacheCreationInputTokens/' +
    'cache_creation_input_tokens -> cache_write, outputTokens/output_tokens -> output (thinking included; no ' +
    'reasoning count). total_cost_usd -> reported cost (the CLI prices it from its own table). An unreadable count ' +
    'leaves its class null, with a warning.',
};

const ModelUsageEntry = z.object({
  inputTokens: TokenCount.optional(),
  outputTokens: TokenCount.optional(),
  cacheReadInputTokens: TokenCount.optional(),
  cacheCreationInputTokens: TokenCount.optional(),
});
const ResultUsage = z.object({
  input_tokens: TokenCount.optional(),
  output_tokens: TokenCount.optional(),
  cache_read_input_tokens: TokenCount.optional(),
  cache_creation_input_tokens: TokenCount.optional(),
});
const Cost = z.number().nonnegative();
// Read once per result record, through the schema's compiled guard (zod's verdict; a number passes as it is).
const isCost = compileSchema(Cost);
// Whole usage objects, checked once: a readable one (the usual case) is summed straight from its fields.
const isModelUsageEntry = compileSchema(ModelUsageEntry);
const isResultUsage = compileSchema(ResultUsage);

// [field, class] pairs, listed once (not an entries array per usage object).
const MODEL_USAGE_CLASSES: readonly (readonly [keyof z.infer<typeof ModelUsageEntry> & string, TokenClass])[] = [
  ['inputTokens', 'input'],
  ['outputTokens', 'output'],
  ['cacheReadInputTokens', 'cache_read'],
  ['cacheCreationInputTokens', 'cache_write'],
];
const RESULT_USAGE_CLASSES: readonly (readonly [keyof z.infer<typeof ResultUsage> & string, TokenClass])[] = [
  ['input_tokens', 'input'],
  ['output_tokens', 'output'],
  ['cache_read_input_tokens', 'cache_read'],
  ['cache_creation_input_tokens', 'cache_write'],
];

export interface ClaudeUsage {
  tokens: TokenUsage | null;
  raw: unknown;
  cost: number | null;
  /** Fields (dotted, under the result record) that failed their schema. */
  unreadable: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const allUnknown = (): ClassValues => Object.fromEntries(CLAUDE_USAGE_SHAPE.classes.map((c) => [c, null]));

/** Adds one usage object's fields into per-class sums; a class with an unreadable field becomes null for good. */
function addReading(sums: ClassValues, classes: readonly (readonly [string, TokenClass])[], schema: typeof ModelUsageEntry | typeof ResultUsage, value: unknown, prefix: string, model: string | undefined, unreadable: string[]): void {
  // The dotted name is built only for a field that is reported, not per model on the hot path.
  if (!isObject(value)) {
    unreadable.push(model === undefined ? prefix : `${prefix}.${model}`);
    Object.assign(sums, allUnknown());
    return;
  }
  if (schema === ModelUsageEntry ? isModelUsageEntry(value) : isResultUsage(value)) {
    // Every field passed its schema: what readUsage would return is the defined fields, nothing unreadable.
    for (let i = 0; i < classes.length; i++) {
      const [field, cls] = classes[i]!;
      if (sums[cls] === null) continue;
      sums[cls] = (sums[cls] ?? 0) + ((value[field] as number | undefined) ?? 0);
    }
    return;
  }
  const reading = readUsage(schema as z.ZodObject<z.ZodRawShape>, value);
  const where = model === undefined ? prefix : `${prefix}.${model}`;
  for (const field of reading.unreadable) unreadable.push(`${where}.${field}`);
  for (let i = 0; i < classes.length; i++) {
    const [field, cls] = classes[i]!;
    if (sums[cls] === null) continue;
    if (reading.unreadable.includes(field)) sums[cls] = null;
    else sums[cls] = (sums[cls] ?? 0) + ((reading.fields as Record<string, number | undefined>)[field] ?? 0);
  }
}

export function claudeUsage(result: { modelUsage?: unknown; usage?: unknown; total_cost_usd?: unknown }): ClaudeUsage {
  const { modelUsage, usage } = result;
  const unreadable: string[] = [];
  const costValue = result.total_cost_usd;
  const costReadable = costValue !== undefined && isCost(costValue);
  if (costValue !== undefined && !costReadable) unreadable.push('total_cost_usd');
  const cost = costReadable ? costValue : null;
  const raw = { usage: usage ?? null, modelUsage: modelUsage ?? null };
  const sums: ClassValues = {};
  const models = isObject(modelUsage) ? Object.keys(modelUsage) : undefined;
  if (modelUsage !== undefined && !(models !== undefined && models.length === 0)) {
    if (models === undefined) addReading(sums, MODEL_USAGE_CLASSES, ModelUsageEntry, modelUsage, 'modelUsage', undefined, unreadable);
    else for (let i = 0; i < models.length; i++) addReading(sums, MODEL_USAGE_CLASSES, ModelUsageEntry, (modelUsage as Record<string, unknown>)[models[i]!], 'modelUsage', models[i], unreadable);
  } else if (usage !== undefined) {
    addReading(sums, RESULT_USAGE_CLASSES, ResultUsage, usage, 'usage', undefined, unreadable);
  } else {
    return { tokens: null, raw: null, cost, unreadable };
  }
  return { tokens: shapeReadTokens(CLAUDE_USAGE_SHAPE, sums), raw, cost, unreadable };
}
