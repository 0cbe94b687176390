// Mistral Vibe usage, cost and verdict -> our classes. Not on stdout: Vibe writes `export.json` into --output-dir on
// every exit (vibe/app_server/run_export.py RunResult), counting this session only (a resumed session does not
// count the earlier ones): `usage {input_tokens, output_tokens, cached_input_tokens, total_tokens}`, `cost_usd`,
// `outcome`, `error`, `session_id`, `steps`, the redacted `config` it ran with, and `subagents` (each with its own
// usage and cost, which the root's do not count: the session's figures are the sum).
// `input_tokens` includes the cached ones (total_tokens = input_tokens + output_tokens), so input (uncached) =
// input_tokens - cached_input_tokens, cache_read = cached_input_tokens, output = output_tokens (no reasoning
// breakdown). Vibe reports no cache writes: cache_write stays unknown (null).
// `cost_usd` is Vibe's own product of those tokens and the prices of the active model in its config
// (vibe/utils/pricing.py). The adapter's config writes no prices, which Vibe reads as 0: a cost from prices nobody
// set is no charge. So it is the reported cost only when the export's config prices the active model (a price
// above 0); otherwise it is kept in raw usage and the reported cost is null.
// A count that is not a non-negative integer (or a cached count above the input) makes its class null, named in a
// warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';
import { obj } from '../../shared/translate/json.ts';

export const VIBE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read'],
  doc:
    "export.json usage (the side file Vibe writes into --output-dir): input_tokens - cached_input_tokens -> input, " +
    'cached_input_tokens -> cache_read, output_tokens -> output (no cache writes, no reasoning breakdown). cost_usd is ' +
    "the reported cost only when the config Vibe ran with prices the active model; else kept in raw usage.",
};

const RunUsage = z.object({ input_tokens: TokenCount, output_tokens: TokenCount, cached_input_tokens: TokenCount });
const Price = z.number().nonnegative();
const ModelEntry = z.object({ name: z.string().min(1).optional(), input_price: Price.optional(), output_price: Price.optional(), cached_input_price: Price.nullable().optional() });

/** The outcomes of 3.0.3's RunOutcome, by the exit code Vibe gives each. */
export const OUTCOME_EXIT: Readonly<Record<string, number>> = {
  finished: 0,
  usage_error: 1,
  config_error: 1,
  infrastructure_failure: 2,
  turn_limit: 3,
  token_limit: 3,
  price_limit: 3,
  deadline: 3,
  terminated: 3,
  length: 3,
  refusal: 3,
  aborted: 4,
};

export const ExportDocument = z.object({
  outcome: z.string().min(1),
  stop_reason: z.string().nullable().optional(),
  error: z.object({ message: z.string(), code: z.string().nullable().optional() }).nullable().optional(),
  session_id: z.string().min(1).nullable().optional(),
  usage: z.unknown().optional(),
  cost_usd: z.number().nonnegative().nullable().optional(),
  steps: z.int().nonnegative().nullable().optional(),
  config: z.unknown().optional(),
  /** The subagents the session spawned, with their own usage (left out when none). */
  subagents: z.array(z.unknown()).nullable().optional(),
});
export type ExportDocument = z.infer<typeof ExportDocument>;

export interface VibeUsage {
  /** Null when the export has no usage (a run that never reached the model). */
  tokens: TokenUsage | null;
  raw: { usage: unknown; cost_usd: number | null; steps: number | null; subagents?: unknown[] } | null;
  /** Vibe's cost when the active model is priced in its config; else null. */
  reportedCost: number | null;
  /** The API name of the active model, from the config it ran with. */
  model: string | undefined;
  /** Fields that failed their schema (`usage.<field>`). */
  unreadable: string[];
}

/** The export's active model entry (config.models keyed by alias, config.active_model the alias). */
function activeModel(config: unknown): z.infer<typeof ModelEntry> | undefined {
  const c = obj(config);
  const alias = c?.active_model;
  const models = obj(c?.models);
  if (typeof alias !== 'string' || !models || !Object.hasOwn(models, alias)) return undefined;
  const entry = ModelEntry.safeParse(models[alias]);
  return entry.success ? entry.data : undefined;
}

/** One usage object's classes; the fields that failed their schema are named with `where`. */
function classesOf(usage: unknown, where: string, unreadable: string[]): ClassValues {
  const { fields, unreadable: bad } = readUsage(RunUsage, usage);
  const named = (key: string) => unreadable.push(`${where}.${key}`);
  bad.forEach(named);
  const isBad = (key: keyof typeof fields) => bad.includes(key);
  let input: number | null = isBad('input_tokens') || isBad('cached_input_tokens') ? null : fields.input_tokens! - fields.cached_input_tokens!;
  let cached: number | null = isBad('cached_input_tokens') ? null : fields.cached_input_tokens!;
  if (input !== null && input < 0) {
    // More cached than input: the two do not fit Vibe's own definition, so neither says what was uncached.
    named('cached_input_tokens');
    input = null;
    cached = null;
  }
  return { input, output: isBad('output_tokens') ? null : fields.output_tokens!, cache_read: cached };
}

const Subagent = z.object({ session_id: z.string().optional(), usage: z.unknown().optional(), cost_usd: z.number().nonnegative().nullable().optional(), steps: z.int().nonnegative().nullable().optional() });

/**
 * The session's usage: the root agent's `usage` plus each spawned subagent's (`subagents[].usage`, which the root's
 * does not count). A subagent's figures cover its whole life, so a session that resumes one whose subagents ran
 * before counts their earlier calls again: Vibe gives no per-run split for them.
 */
export function vibeUsage(doc: ExportDocument): VibeUsage {
  const model = activeModel(doc.config);
  const priced = model !== undefined && ((model.input_price ?? 0) > 0 || (model.output_price ?? 0) > 0);
  const unreadable: string[] = [];
  const subagents = doc.subagents ?? [];
  if (doc.usage === undefined || doc.usage === null) {
    const cost = doc.cost_usd ?? null;
    return { tokens: null, raw: cost === null ? null : { usage: null, cost_usd: cost, steps: doc.steps ?? null }, reportedCost: null, model: model?.name, unreadable };
  }
  let classes = classesOf(doc.usage, 'usage', unreadable);
  let cost: number | null = doc.cost_usd ?? null;
  const subRaw: unknown[] = [];
  subagents.forEach((value, i) => {
    const sub = Subagent.safeParse(value);
    // A spawn that failed before its first model call (no steps) reports no usage and spent none.
    if (sub.success && (sub.data.usage === undefined || sub.data.usage === null) && !sub.data.steps) {
      subRaw.push(value);
      return;
    }
    if (!sub.success || sub.data.usage === undefined || sub.data.usage === null) {
      // A subagent that made model calls but whose usage is missing or unreadable: the session's total is unknown.
      unreadable.push(`subagents[${i}].usage`);
      classes = { input: null, output: null, cache_read: null };
      cost = null;
      subRaw.push(value);
      return;
    }
    classes = addClassValues(classes, classesOf(sub.data.usage, `subagents[${i}].usage`, unreadable));
    cost = cost === null || sub.data.cost_usd === undefined || sub.data.cost_usd === null ? null : cost + sub.data.cost_usd;
    subRaw.push({ session_id: sub.data.session_id, usage: sub.data.usage, cost_usd: sub.data.cost_usd ?? null });
  });
  return {
    tokens: shapeReadTokens(VIBE_USAGE_SHAPE, classes),
    raw: { usage: doc.usage, cost_usd: doc.cost_usd ?? null, steps: doc.steps ?? null, ...(subRaw.length > 0 ? { subagents: subRaw } : {}) },
    reportedCost: priced ? cost : null,
    model: model?.name,
    unreadable,
  };
}
