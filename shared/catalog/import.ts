// Refreshes catalogue prices from a price list the user saved: OpenRouter's `/models` JSON (per-token USD strings)
// or LiteLLM's model_prices_and_context_window.json (per-token USD numbers). Pure: catalogue + document in, new
// catalogue + a change list out. Only existing entries are updated (matched by id or alias); new models are listed
// as unmatched rather than invented.
import type { Catalog, CatalogEntry, ModelPrices } from './schema.ts';

export type PriceListFormat = 'openrouter' | 'litellm';

export interface PriceChange {
  id: string;
  from: ModelPrices;
  to: ModelPrices;
  source_key: string;
}

export interface ImportResult {
  format: PriceListFormat;
  catalog: Catalog;
  changes: PriceChange[];
  unchanged: number;
  /** Price-list models with no catalogue entry (not added: an entry needs a canonical id and aliases). */
  unmatched: string[];
}

const perMillion = (perToken: unknown): number | undefined => {
  const n = typeof perToken === 'string' ? Number(perToken) : typeof perToken === 'number' ? perToken : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1e6 * 1e6) / 1e6 : undefined;
};

type Row = { key: string; prices: Partial<ModelPrices> };

export function detectFormat(doc: unknown): PriceListFormat {
  if (doc && typeof doc === 'object' && Array.isArray((doc as { data?: unknown }).data)) return 'openrouter';
  if (doc && typeof doc === 'object' && Object.values(doc).some((v) => v && typeof v === 'object' && 'input_cost_per_token' in v)) return 'litellm';
  throw new Error('not an OpenRouter /models document ({data:[...]}) nor a LiteLLM price file ({model: {input_cost_per_token...}})');
}

function rows(doc: unknown, format: PriceListFormat): Row[] {
  if (format === 'openrouter') {
    return ((doc as { data: { id?: unknown; pricing?: Record<string, unknown> }[] }).data ?? [])
      .filter((m) => typeof m.id === 'string' && m.pricing)
      .map((m) => ({
        key: m.id as string,
        prices: { input: perMillion(m.pricing!.prompt), output: perMillion(m.pricing!.completion), cache_read: perMillion(m.pricing!.input_cache_read), cache_write: perMillion(m.pricing!.input_cache_write) },
      }));
  }
  return Object.entries(doc as Record<string, Record<string, unknown>>)
    .filter(([key, v]) => key !== 'sample_spec' && v && typeof v === 'object' && 'input_cost_per_token' in v)
    .map(([key, v]) => ({
      key,
      prices: { input: perMillion(v.input_cost_per_token), output: perMillion(v.output_cost_per_token), cache_read: perMillion(v.cache_read_input_token_cost), cache_write: perMillion(v.cache_creation_input_token_cost) },
    }));
}

/** Keys a price-list row may use for an entry: its id, its aliases, and LiteLLM's `provider/alias` forms. */
function keysOf(entry: CatalogEntry): Set<string> {
  const keys = new Set([entry.id]);
  for (const alias of entry.aliases) {
    keys.add(alias.id);
    keys.add(`${alias.family}/${alias.id}`);
    if (alias.family === 'google') keys.add(`gemini/${alias.id}`);
  }
  return keys;
}

export function importPrices(catalog: Catalog, doc: unknown, today: string, version: string): ImportResult {
  const format = detectFormat(doc);
  const byKey = new Map(rows(doc, format).map((r) => [r.key, r]));
  const changes: PriceChange[] = [];
  const matchedKeys = new Set<string>();
  let unchanged = 0;
  const entries = catalog.entries.map((entry) => {
    const row = [...keysOf(entry)].map((k) => byKey.get(k)).find((r) => r !== undefined);
    if (!row || row.prices.input === undefined || row.prices.output === undefined) return entry;
    matchedKeys.add(row.key);
    const to: ModelPrices = { input: row.prices.input, output: row.prices.output };
    // A missing cache price in the list keeps ours: absence in one list is not evidence the price is gone.
    const cacheRead = row.prices.cache_read ?? entry.prices.cache_read;
    const cacheWrite = row.prices.cache_write ?? entry.prices.cache_write;
    if (cacheRead !== undefined) to.cache_read = cacheRead;
    if (cacheWrite !== undefined) to.cache_write = cacheWrite;
    if (JSON.stringify(to) === JSON.stringify(entry.prices)) {
      unchanged += 1;
      return entry;
    }
    changes.push({ id: entry.id, from: entry.prices, to, source_key: row.key });
    return { ...entry, prices: to, source: { name: format, url: entry.source.url, retrieved: today } };
  });
  const unmatched = [...byKey.keys()].filter((k) => !matchedKeys.has(k));
  return { format, catalog: { ...catalog, version, generated_at: today, entries }, changes, unchanged, unmatched };
}
