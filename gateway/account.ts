// A run attempt's account, pure: each measured response added to it, and the budget decision made from it before a
// request is forwarded. Accounts are immutable values (each function returns a new one), so a snapshot handed to
// the host never changes under it.
import type { BudgetExceeded, GatewayRunUsage, GatewayThrottle, RunBudget, WireSample } from '../shared/gateway.ts';
import { addTokens, EMPTY_TOKENS } from '../shared/usage.ts';
import type { TokenUsage } from '../shared/usage.ts';
import { canonicalModelId, comparableCost } from '../shared/cost.ts';
import type { ModelIdFamily } from '../shared/cost.ts';
import type { Catalog, CatalogEntry } from '../shared/catalog/schema.ts';

/** Distinct throttle rows and unpriced model names kept per account: models are the client's word, so bounded. */
export const MAX_DISTINCT = 64;
export const OTHER_MODEL = '(other)';

export function emptyAccount(run: string, attempt: string, catalogVersion: string): GatewayRunUsage {
  return { run, attempt, requests: 0, refused: 0, tokens: { ...EMPTY_TOKENS }, cost_usd: 0, unpriced_models: [], catalog_version: catalogVersion, unmetered: 0, statuses: {}, throttles: [], budget_exceeded: null };
}

/** A measured response and what the gateway knows around it. */
export interface Measured {
  provider: { name: string; idFamily: ModelIdFamily };
  sample: WireSample;
  /** Whether the route is metered (a model list or a token count is not: it reports no usage and costs nothing). */
  metered: boolean;
  /** An `overloaded` error seen inside a 2xx stream (Anthropic's overloaded_error event). */
  overloaded: boolean;
  /** The provider's retry-after in seconds, when it gave one. */
  retryAfterS: number | null;
}

/** 429 (rate limited), 529 (Anthropic overloaded) or an overloaded error in the stream. */
export function isThrottle(status: number, overloaded: boolean): boolean {
  return status === 429 || status === 529 || overloaded;
}

function hasTokens(tokens: TokenUsage): boolean {
  return Object.values(tokens).some((n) => n !== null && n > 0);
}

// canonicalModelId scans the catalogue; a run names few models, so each (family, model) is looked up once.
const entries = new WeakMap<Catalog, Map<string, CatalogEntry | null>>();
function entryOf(model: string, family: ModelIdFamily, catalog: Catalog): CatalogEntry | null {
  let known = entries.get(catalog);
  if (!known) entries.set(catalog, (known = new Map()));
  const key = `${family}\u0000${model}`;
  let entry = known.get(key);
  if (entry === undefined) {
    entry = canonicalModelId(model, family, catalog).entry ?? null;
    if (known.size < 10_000) known.set(key, entry);
  }
  return entry;
}

/** The list-price cost of one response's tokens, or null when the catalogue cannot price them. */
export function priceSample(model: string | null, family: ModelIdFamily, tokens: TokenUsage, catalog: Catalog): number | null {
  if (!hasTokens(tokens)) return 0;
  if (model === null) return null;
  const entry = entryOf(model, family, catalog);
  return entry ? comparableCost(tokens, entry.prices).usd : null;
}

function withThrottle(throttles: readonly GatewayThrottle[], row: Omit<GatewayThrottle, 'count'>): GatewayThrottle[] {
  const model = throttles.some((t) => t.provider === row.provider && t.model === row.model) || throttles.length < MAX_DISTINCT ? row.model : OTHER_MODEL;
  const i = throttles.findIndex((t) => t.provider === row.provider && t.model === model && t.status === row.status);
  if (i < 0) return [...throttles, { ...row, model, count: 1 }];
  const before = throttles[i]!;
  const next = [...throttles];
  next[i] = { ...before, count: before.count + 1, retry_after_s: row.retry_after_s ?? before.retry_after_s };
  return next;
}

/** The account with one more forwarded request's response in it. */
export function addSample(account: GatewayRunUsage, measured: Measured, catalog: Catalog): GatewayRunUsage {
  const { sample } = measured;
  const status = String(sample.status);
  const next: GatewayRunUsage = { ...account, requests: account.requests + 1, statuses: { ...account.statuses, [status]: (account.statuses[status] ?? 0) + 1 } };
  if (isThrottle(sample.status, measured.overloaded)) {
    next.throttles = withThrottle(account.throttles, { provider: measured.provider.name, model: sample.model, status: measured.overloaded && sample.status < 300 ? 529 : sample.status, retry_after_s: measured.retryAfterS });
  }
  if (!measured.metered) return next;
  if (sample.tokens === null) {
    if (sample.status >= 200 && sample.status < 300) next.unmetered = account.unmetered + 1;
    return next;
  }
  next.tokens = addTokens(account.tokens, sample.tokens);
  const usd = priceSample(sample.model, measured.provider.idFamily, sample.tokens, catalog);
  if (usd !== null) next.cost_usd = account.cost_usd + usd;
  else {
    const name = account.unpriced_models.length < MAX_DISTINCT ? (sample.model ?? '(unnamed)') : OTHER_MODEL;
    if (!account.unpriced_models.includes(name)) next.unpriced_models = [...account.unpriced_models, name];
  }
  return next;
}

/** The account after a request was refused for its budget (the first refusal's reason is kept). */
export function addRefusal(account: GatewayRunUsage, exceeded: BudgetExceeded): GatewayRunUsage {
  return { ...account, refused: account.refused + 1, budget_exceeded: account.budget_exceeded ?? exceeded };
}

const TOKEN_LIMITS = [
  ['total', 'maxTokens.total', (t: TokenUsage) => (t.input ?? 0) + (t.output ?? 0) + (t.cache_read ?? 0) + (t.cache_write ?? 0)],
  ['input', 'maxTokens.input', (t: TokenUsage) => t.input ?? 0],
  ['output', 'maxTokens.output', (t: TokenUsage) => t.output ?? 0],
  ['cacheRead', 'maxTokens.cacheRead', (t: TokenUsage) => t.cache_read ?? 0],
  ['cacheWrite', 'maxTokens.cacheWrite', (t: TokenUsage) => t.cache_write ?? 0],
] as const;

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 4 });

/**
 * Whether a run may send another request: null when it may, else the limit it has reached (used >= max). A cost
 * limit fails closed: once a response could not be priced (a model the catalogue lacks), the run's cost is unknown
 * and the next request is refused, or a client could spend unmeasured by naming an uncatalogued model.
 */
export function budgetDecision(budget: RunBudget | undefined, account: GatewayRunUsage): BudgetExceeded | null {
  if (!budget) return null;
  const end = 'the model gateway refuses further model requests of this run';
  for (const [field, limit, used] of TOKEN_LIMITS) {
    const max = budget.maxTokens?.[field];
    if (max === undefined) continue;
    const n = used(account.tokens);
    if (n >= max) return { limit, max, used: n, message: `tcab budget exceeded: ${fmt(n)} of ${fmt(max)} tokens used (${limit}); ${end}` };
  }
  const maxCost = budget.maxCostUsd;
  if (maxCost !== undefined) {
    if (account.unpriced_models.length > 0) {
      return { limit: 'maxCostUsd', max: maxCost, used: null, message: `tcab budget exceeded: the run's cost is unknown (no list price for ${account.unpriced_models.join(', ')} in model catalogue ${account.catalog_version}) and it has a cost limit of $${fmt(maxCost)}; ${end}` };
    }
    if (account.cost_usd >= maxCost) return { limit: 'maxCostUsd', max: maxCost, used: account.cost_usd, message: `tcab budget exceeded: $${fmt(account.cost_usd)} of $${fmt(maxCost)} used (maxCostUsd); ${end}` };
  }
  return null;
}

/** Response headers as undici gives them: any header may repeat. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' ? v : v?.[0];
}

/** The provider's retry-after, in seconds: `retry-after-ms` (OpenAI), else `retry-after` (seconds or an HTTP date). */
export function retryAfterSeconds(headers: ResponseHeaders, nowMs: number): number | null {
  const ms = headerValue(headers, 'retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms) / 1000;
  const raw = headerValue(headers, 'retry-after')?.trim();
  if (!raw) return null;
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, (at - nowMs) / 1000);
}
