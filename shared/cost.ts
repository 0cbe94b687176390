// Canonical model ids and costs (spec: "Usage reporting", "Harness-reported cost"). Pure.
// - Canonical id: OpenRouter-style `vendor/model`. OpenRouter harnesses: strip an `openrouter/` routing prefix and
//   `:free`-style variant tags. Provider-native ids match an alias of their own harness family unchanged.
// - Comparable cost = usage x list price, per class. Reasoning is inside output and never added again. A class
//   with tokens but no price makes the cost unpriced (null + warning); an unknown model is unpriced, never $0.
// - Actual cost: API key + reported exact charge -> that figure; API key, none -> unset; subscription +
//   reported -> that figure; subscription, none -> the comparable cost.
import { z } from 'zod';
import type { HarnessManifest } from './manifest.ts';
import type { TokenClass, TokenUsage } from './usage.ts';
import type { Catalog, CatalogEntry, IdFamily, ModelPrices } from './catalog/schema.ts';
import { ID_FAMILIES } from './catalog/schema.ts';

export type ModelIdFamily = HarnessManifest['model_ids'];

export interface CanonicalMatch {
  canonical: string | null;
  entry?: CatalogEntry;
  /** How the id was read, for warnings and `tcab models show`. */
  note: string;
}

/** `:free`, `:nitro`, `:beta`... OpenRouter variant tags, and Claude Code's `[1m]` context-window tag. */
function stripTags(model: string): string {
  return model.replace(/\[[^\]]*\]$/, '').replace(/:[a-z0-9-]+$/i, '');
}

function byId(catalog: Catalog, id: string): CatalogEntry | undefined {
  return catalog.entries.find((e) => e.id === id);
}

function byAlias(catalog: Catalog, family: IdFamily, id: string): CatalogEntry | undefined {
  return catalog.entries.find((e) => e.aliases.some((a) => a.family === family && a.id === id));
}

function openRouterMatch(catalog: Catalog, model: string): CatalogEntry | undefined {
  const bare = stripTags(model.replace(/^openrouter\//, ''));
  return byId(catalog, bare) ?? byAlias(catalog, 'openrouter', bare);
}

export function canonicalModelId(model: string, family: ModelIdFamily, catalog: Catalog): CanonicalMatch {
  const found = (entry: CatalogEntry | undefined, note: string): CanonicalMatch => (entry ? { canonical: entry.id, entry, note } : { canonical: null, note });
  switch (family) {
    case 'openrouter':
      return found(openRouterMatch(catalog, model), 'OpenRouter id (routing prefix and variant tag stripped)');
    case 'mixed': {
      // `provider/model` (OpenCode, Kilo): the provider names the family the rest is written in.
      const slash = model.indexOf('/');
      if (slash > 0) {
        const provider = model.slice(0, slash);
        const rest = model.slice(slash + 1);
        if (provider === 'openrouter') return found(openRouterMatch(catalog, rest), 'provider openrouter');
        if ((ID_FAMILIES as readonly string[]).includes(provider)) {
          const entry = byAlias(catalog, provider as IdFamily, stripTags(rest)) ?? byId(catalog, model);
          if (entry) return found(entry, `provider ${provider}`);
        }
      }
      return found(openRouterMatch(catalog, model), 'provider/model id');
    }
    case 'vendor': {
      const bare = stripTags(model);
      return found(catalog.entries.find((e) => e.aliases.some((a) => a.id === bare)) ?? openRouterMatch(catalog, model), 'vendor model name');
    }
    default: {
      // Provider-native: an alias of the harness's own family, unchanged (bar a context-window tag). Harnesses of
      // this family pointed at OpenRouter write OpenRouter ids, which contain a '/'.
      const native = byAlias(catalog, family, model.replace(/\[[^\]]*\]$/, ''));
      if (native) return found(native, `${family} model id`);
      return model.includes('/') ? found(openRouterMatch(catalog, model), 'OpenRouter id') : { canonical: null, note: `${family} model id` };
    }
  }
}

const PRICE_OF: Record<Exclude<TokenClass, 'reasoning'>, keyof ModelPrices> = { input: 'input', output: 'output', cache_read: 'cache_read', cache_write: 'cache_write' };

export function comparableCost(tokens: TokenUsage, prices: ModelPrices): { usd: number | null; unpricedClasses: TokenClass[] } {
  let total = 0;
  const unpricedClasses: TokenClass[] = [];
  for (const cls of Object.keys(PRICE_OF) as (keyof typeof PRICE_OF)[]) {
    const count = tokens[cls];
    if (count === null || count === 0) continue;
    const price = prices[PRICE_OF[cls]];
    if (price === undefined) unpricedClasses.push(cls);
    else total += count * price;
  }
  // reasoning is a breakdown of output: already paid for at the output rate.
  return { usd: unpricedClasses.length > 0 ? null : total / 1_000_000, unpricedClasses };
}

export function actualCost(input: { mode: 'api-key' | 'subscription'; reported: number | null; comparable: number | null }): number | null {
  if (input.reported !== null) return input.reported;
  return input.mode === 'subscription' ? input.comparable : null;
}

export const RunCost = z.strictObject({
  canonical_model: z.string().nullable(),
  comparable_cost_usd: z.number().nonnegative().nullable(),
  actual_cost_usd: z.number().nonnegative().nullable(),
  catalog_version: z.string(),
  warnings: z.array(z.string()),
});
export type RunCost = z.infer<typeof RunCost>;

export function priceRun(input: {
  model: string;
  idFamily: ModelIdFamily;
  tokens: TokenUsage | null;
  reportedCostUsd: number | null;
  authMode: 'api-key' | 'subscription';
  catalog: Catalog;
}): RunCost {
  const warnings: string[] = [];
  const match = canonicalModelId(input.model, input.idFamily, input.catalog);
  let comparable: number | null = null;
  if (!match.entry) {
    warnings.push(`model "${input.model}" is not in the model catalogue (version ${input.catalog.version}): comparable cost unpriced`);
  } else if (input.tokens === null) {
    warnings.push('the harness reported no usage: comparable cost unpriced');
  } else {
    const cost = comparableCost(input.tokens, match.entry.prices);
    comparable = cost.usd;
    if (cost.usd === null) warnings.push(`${match.entry.id} has no list price for ${cost.unpricedClasses.join(', ')} tokens: comparable cost unpriced`);
  }
  return {
    canonical_model: match.canonical,
    comparable_cost_usd: comparable,
    actual_cost_usd: actualCost({ mode: input.authMode, reported: input.reportedCostUsd, comparable }),
    catalog_version: input.catalog.version,
    warnings,
  };
}
