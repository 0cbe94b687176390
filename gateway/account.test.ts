import { describe, expect, it } from 'vitest';
import type { GatewayRunUsage, RunBudget, WireSample } from '../shared/gateway.ts';
import { GatewayRunUsage as GatewayRunUsageSchema } from '../shared/gateway.ts';
import type { TokenUsage } from '../shared/usage.ts';
import { loadCatalog } from '../shared/catalog/load.ts';
import { addRefusal, addSample, budgetDecision, emptyAccount, MAX_DISTINCT, OTHER_MODEL, priceSample, retryAfterSeconds } from './account.ts';
import type { Measured } from './account.ts';
import { gatewayError } from './errors.ts';

const catalog = loadCatalog();
const ANTHROPIC = { name: 'anthropic', idFamily: 'anthropic' as const };
const tokens = (t: Partial<TokenUsage>): TokenUsage => ({ input: null, output: null, cache_read: null, cache_write: null, reasoning: null, ...t });
const sample = (s: Partial<WireSample>): WireSample => ({ protocol: 'anthropic', model: 'claude-sonnet-4-5', status: 200, streamed: true, tokens: null, ...s });
const measured = (s: Partial<WireSample>, m: Partial<Measured> = {}): Measured => ({ provider: ANTHROPIC, sample: sample(s), metered: true, overloaded: false, retryAfterS: null, ...m });
const fresh = () => emptyAccount('run', 'uid', catalog.version);

describe('addSample', () => {
  it('adds tokens by class (null stays null until reported), prices them, counts statuses', () => {
    let a = fresh();
    a = addSample(a, measured({ tokens: tokens({ input: 900, output: 80, cache_read: 300, cache_write: 50 }) }), catalog);
    a = addSample(a, measured({ tokens: tokens({ input: 100, output: 20, cache_read: 0, cache_write: 0 }) }), catalog);
    expect(a.tokens).toEqual({ input: 1000, output: 100, cache_read: 300, cache_write: 50, reasoning: null });
    expect(a.requests).toBe(2);
    expect(a.statuses).toEqual({ '200': 2 });
    expect(a.cost_usd).toBeCloseTo((1000 * 3 + 100 * 15 + 300 * 0.3 + 50 * 3.75) / 1e6, 12);
    expect(GatewayRunUsageSchema.parse(a)).toEqual(a);
  });

  it.each<[string, Measured, Partial<GatewayRunUsage>]>([
    ['a 2xx without usage is unmetered', measured({ tokens: null }), { unmetered: 1, statuses: { '200': 1 } }],
    ['an error without usage is not', measured({ status: 400, tokens: null }), { unmetered: 0, statuses: { '400': 1 } }],
    ['an unmetered route counts as a request only', measured({ tokens: null }, { metered: false }), { unmetered: 0, requests: 1 }],
    ['a 429 is a throttle with its retry-after', measured({ status: 429, model: 'm' }, { retryAfterS: 7 }), { throttles: [{ provider: 'anthropic', model: 'm', status: 429, count: 1, retry_after_s: 7 }] }],
    ['a 529 is a throttle', measured({ status: 529, model: null }), { throttles: [{ provider: 'anthropic', model: null, status: 529, count: 1, retry_after_s: null }] }],
    ['an overloaded error in a 200 stream counts as a 529', measured({ tokens: tokens({ input: 1 }) }, { overloaded: true }), { statuses: { '200': 1 }, throttles: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', status: 529, count: 1, retry_after_s: null }] }],
    ['a model the catalogue lacks is unpriced', measured({ model: 'made-up', tokens: tokens({ input: 5 }) }), { unpriced_models: ['made-up'], cost_usd: 0 }],
    ['zero tokens of an unknown model cost nothing', measured({ model: 'made-up', tokens: tokens({ input: 0 }) }), { unpriced_models: [], cost_usd: 0 }],
  ])('%s', (_name, m, want) => {
    expect(addSample(fresh(), m, catalog)).toMatchObject(want);
  });

  it('repeated throttles add up, keeping the latest retry-after; client-named models are bounded', () => {
    let a = fresh();
    a = addSample(a, measured({ status: 429, model: 'm' }, { retryAfterS: 7 }), catalog);
    a = addSample(a, measured({ status: 429, model: 'm' }, { retryAfterS: null }), catalog);
    a = addSample(a, measured({ status: 429, model: 'm' }, { retryAfterS: 2 }), catalog);
    expect(a.throttles).toEqual([{ provider: 'anthropic', model: 'm', status: 429, count: 3, retry_after_s: 2 }]);
    for (let i = 0; i < MAX_DISTINCT + 10; i++) a = addSample(a, measured({ status: 429, model: `x${i}`, tokens: null }), catalog);
    for (let i = 0; i < MAX_DISTINCT + 10; i++) a = addSample(a, measured({ model: `u${i}`, tokens: tokens({ input: 1 }) }), catalog);
    expect(a.throttles.length).toBe(MAX_DISTINCT + 1);
    expect(a.throttles.at(-1)).toMatchObject({ model: OTHER_MODEL, count: 11 });
    expect(a.unpriced_models.length).toBe(MAX_DISTINCT + 1);
    expect(a.unpriced_models.at(-1)).toBe(OTHER_MODEL);
  });

  it('prices by the id family of the provider', () => {
    expect(priceSample('anthropic/claude-sonnet-4.5', 'openrouter', tokens({ input: 1_000_000 }), catalog)).toBe(3);
    expect(priceSample('claude-sonnet-4-5', 'anthropic', tokens({ output: 1_000_000 }), catalog)).toBe(15);
    expect(priceSample(null, 'anthropic', tokens({ output: 1 }), catalog)).toBeNull();
  });
});

describe('budgetDecision', () => {
  const used = (t: Partial<TokenUsage>, extra: Partial<GatewayRunUsage> = {}): GatewayRunUsage => ({ ...fresh(), tokens: tokens(t), ...extra });
  it.each<[string, RunBudget | undefined, GatewayRunUsage, string | null]>([
    ['no budget', undefined, used({ input: 1e9 }), null],
    ['an empty budget', {}, used({ input: 1e9 }), null],
    ['total below', { maxTokens: { total: 100 } }, used({ input: 50, output: 49 }), null],
    ['total reached', { maxTokens: { total: 100 } }, used({ input: 50, output: 40, cache_read: 5, cache_write: 5 }), 'maxTokens.total'],
    ['total ignores reasoning (inside output)', { maxTokens: { total: 100 } }, used({ output: 99, reasoning: 99 }), null],
    ['input reached', { maxTokens: { input: 10 } }, used({ input: 10 }), 'maxTokens.input'],
    ['output reached', { maxTokens: { output: 10, total: 1000 } }, used({ output: 11 }), 'maxTokens.output'],
    ['cache read reached', { maxTokens: { cacheRead: 10 } }, used({ cache_read: 10 }), 'maxTokens.cacheRead'],
    ['cache write reached', { maxTokens: { cacheWrite: 10 } }, used({ cache_write: 12 }), 'maxTokens.cacheWrite'],
    ['a class never reported counts 0', { maxTokens: { cacheWrite: 1 } }, used({ input: 1e6 }), null],
    ['cost below', { maxCostUsd: 1 }, used({}, { cost_usd: 0.99 }), null],
    ['cost reached', { maxCostUsd: 1 }, used({}, { cost_usd: 1 }), 'maxCostUsd'],
    ['cost unknown fails closed', { maxCostUsd: 1000 }, used({}, { cost_usd: 0, unpriced_models: ['x'] }), 'maxCostUsd'],
    ['unpriced models do not matter without a cost limit', { maxTokens: { total: 1000 } }, used({}, { unpriced_models: ['x'] }), null],
  ])('%s', (_name, budget, account, limit) => {
    const decision = budgetDecision(budget, account);
    expect(decision?.limit ?? null).toBe(limit);
    if (decision) expect(decision.message).toMatch(/^tcab budget exceeded: /);
  });

  it('the first refusal reason is kept; refusals are counted', () => {
    const first = budgetDecision({ maxTokens: { total: 1 } }, used({ input: 1 }))!;
    const a = addRefusal(addRefusal(fresh(), first), { ...first, limit: 'maxCostUsd' });
    expect(a).toMatchObject({ refused: 2, budget_exceeded: { limit: 'maxTokens.total' } });
  });
});

describe('retryAfterSeconds', () => {
  const now = Date.parse('2026-12-06T10:00:00Z');
  it.each([
    [{}, null],
    [{ 'retry-after': '7' }, 7],
    [{ 'retry-after': '1.5' }, 1.5],
    [{ 'retry-after-ms': '250', 'retry-after': '7' }, 0.25],
    [{ 'retry-after': 'Sun, 06 Dec 2026 10:00:30 GMT' }, 30],
    [{ 'retry-after': 'Sun, 06 Dec 2026 09:00:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, null],
    [{ 'retry-after': ['3', '4'] }, 3],
  ] as const)('%j -> %s', (headers, want) => {
    expect(retryAfterSeconds(headers, now)).toBe(want);
  });
});

describe('gatewayError', () => {
  it.each([
    ['anthropic', 'unauthorized', 401, { type: 'error', error: { type: 'authentication_error', message: 'm' } }],
    ['anthropic', 'budget_exceeded', 400, { type: 'error', error: { type: 'invalid_request_error', message: 'm' } }],
    ['anthropic', 'not_found', 404, { type: 'error', error: { type: 'not_found_error', message: 'm' } }],
    ['anthropic', 'upstream_unreachable', 502, { type: 'error', error: { type: 'api_error', message: 'm' } }],
    ['openai-chat', 'unauthorized', 401, { error: { message: 'm', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }],
    ['openai-responses', 'budget_exceeded', 403, { error: { message: 'm', type: 'insufficient_quota', param: null, code: 'tcab_budget_exceeded' } }],
    ['openai-chat', 'upstream_unreachable', 502, { error: { message: 'm', type: 'server_error', param: null, code: 'tcab_upstream_unreachable' } }],
    ['gemini', 'unauthorized', 401, { error: { code: 401, message: 'm', status: 'UNAUTHENTICATED' } }],
    ['gemini', 'budget_exceeded', 403, { error: { code: 403, message: 'm', status: 'PERMISSION_DENIED' } }],
    ['gemini', 'bad_request', 400, { error: { code: 400, message: 'm', status: 'INVALID_ARGUMENT' } }],
    ['gemini', 'internal_error', 500, { error: { code: 500, message: 'm', status: 'INTERNAL' } }],
    [null, 'not_found', 404, { error: { type: 'not_found', message: 'm' } }],
    [null, 'internal_error', 500, { error: { type: 'internal_error', message: 'm' } }],
  ] as const)('%s %s -> %i', (protocol, kind, status, body) => {
    const answer = gatewayError(protocol, kind, 'm');
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual(body);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json', 'x-tcab-gateway': kind });
    expect(answer.headers['x-should-retry']).toBe(kind === 'unauthorized' || kind === 'budget_exceeded' ? 'false' : undefined);
  });
});
