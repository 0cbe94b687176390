import { describe, expect, it } from 'vitest';
import { actualCost, canonicalModelId, comparableCost, priceRun } from './cost.ts';
import { loadCatalog, parseCatalog } from './catalog/load.ts';
import type { TokenUsage } from './usage.ts';
import { InvalidInputError } from './errors.ts';

const catalog = loadCatalog();
const tokens = (t: Partial<TokenUsage>): TokenUsage => ({ input: null, output: null, cache_read: null, cache_write: null, reasoning: null, ...t });

describe('canonicalModelId', () => {
  it.each([
    ['claude-sonnet-4-5', 'anthropic', 'anthropic/claude-sonnet-4.5'],
    ['claude-sonnet-4-5-20250929', 'anthropic', 'anthropic/claude-sonnet-4.5'],
    ['claude-opus-4-8[1m]', 'anthropic', 'anthropic/claude-opus-4.8'],
    ['anthropic/claude-sonnet-4.5', 'anthropic', 'anthropic/claude-sonnet-4.5'],
    ['gpt-5-codex', 'openai', 'openai/gpt-5-codex'],
    ['gpt-5.1-codex-mini', 'openai', 'openai/gpt-5.1-codex-mini'],
    ['gemini-2.5-pro', 'google', 'google/gemini-2.5-pro'],
    ['qwen3-coder-plus', 'qwen', 'qwen/qwen3-coder-plus'],
    ['openrouter/anthropic/claude-sonnet-4.5', 'openrouter', 'anthropic/claude-sonnet-4.5'],
    ['qwen/qwen3-coder:free', 'openrouter', 'qwen/qwen3-coder'],
    ['openrouter/deepseek/deepseek-chat:nitro', 'openrouter', 'deepseek/deepseek-chat'],
    ['anthropic/claude-haiku-4-5', 'mixed', 'anthropic/claude-haiku-4.5'],
    ['openrouter/moonshotai/kimi-k2', 'mixed', 'moonshotai/kimi-k2'],
    ['openai/gpt-5', 'mixed', 'openai/gpt-5'],
    ['grok-code-fast-1', 'vendor', 'x-ai/grok-code-fast-1'],
  ] as const)('%s (%s) -> %s', (model, family, canonical) => {
    expect(canonicalModelId(model, family, catalog).canonical).toBe(canonical);
  });

  it.each([
    ['gpt-5', 'anthropic'], // a native id only matches its own family
    ['claude-sonnet-9', 'anthropic'],
    ['mock-model', 'openai'],
    ['openrouter/unknown/model', 'openrouter'],
  ] as const)('%s (%s) is not in the catalogue', (model, family) => {
    expect(canonicalModelId(model, family, catalog).canonical).toBeNull();
  });
});

describe('comparableCost', () => {
  const sonnet = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };
  it('sums each class at its list price per million', () => {
    expect(comparableCost(tokens({ input: 2700, output: 240, cache_read: 900, cache_write: 150 }), sonnet).usd).toBeCloseTo((2700 * 3 + 240 * 15 + 900 * 0.3 + 150 * 3.75) / 1e6, 12);
  });
  it('never adds reasoning on top of output (it is inside output)', () => {
    const withReasoning = comparableCost(tokens({ input: 1000, output: 500, reasoning: 400 }), sonnet).usd;
    expect(withReasoning).toBeCloseTo((1000 * 3 + 500 * 15) / 1e6, 12);
  });
  it('counts cached tokens once: input is uncached, cache_read is priced separately', () => {
    // OpenAI-style 1200 input incl. 300 cached is normalized by adapters to input 900 + cache_read 300.
    expect(comparableCost(tokens({ input: 900, cache_read: 300, output: 80 }), { input: 1.25, output: 10, cache_read: 0.125 }).usd).toBeCloseTo((900 * 1.25 + 300 * 0.125 + 80 * 10) / 1e6, 12);
  });
  it('null classes contribute nothing; a class with tokens but no price makes the cost unpriced, never $0', () => {
    expect(comparableCost(tokens({ input: 10, output: 10 }), { input: 1, output: 2 }).usd).toBeCloseTo(30 / 1e6, 12);
    expect(comparableCost(tokens({ input: 10, cache_write: 5 }), { input: 1, output: 2 })).toEqual({ usd: null, unpricedClasses: ['cache_write'] });
    expect(comparableCost(tokens({ input: 10, cache_write: 0 }), { input: 1, output: 2 }).usd).toBeCloseTo(10 / 1e6, 12);
  });
});

describe('actualCost (spec rules)', () => {
  it.each([
    ['api-key', 0.5, 0.2, 0.5],
    ['api-key', null, 0.2, null],
    ['subscription', 0.5, 0.2, 0.5],
    ['subscription', null, 0.2, 0.2],
    ['subscription', null, null, null],
  ] as const)('%s, reported %s, comparable %s -> %s', (mode, reported, comparable, expected) => {
    expect(actualCost({ mode, reported, comparable })).toBe(expected);
  });
});

describe('priceRun', () => {
  it('an unknown model is unpriced with a warning, never $0', () => {
    const cost = priceRun({ model: 'mock-model', idFamily: 'openai', tokens: tokens({ input: 5, output: 5 }), reportedCostUsd: null, authMode: 'subscription', catalog });
    expect(cost).toMatchObject({ canonical_model: null, comparable_cost_usd: null, actual_cost_usd: null, catalog_version: catalog.version });
    expect(cost.warnings[0]).toMatch(/"mock-model" is not in the model catalogue/);
  });
});

describe('catalogue validation', () => {
  it('the bundled catalogue is valid and covers every family the issue names', () => {
    const ids = catalog.entries.map((e) => e.id);
    for (const prefix of ['anthropic/claude-opus-4', 'anthropic/claude-sonnet-4', 'anthropic/claude-haiku-4', 'openai/gpt-5', 'openai/gpt-5-codex', 'google/gemini-2.5', 'google/gemini-3', 'qwen/qwen3-coder', 'deepseek/', 'moonshotai/kimi-k2', 'z-ai/glm', 'x-ai/grok']) {
      expect(ids.some((id) => id.startsWith(prefix))).toBe(true);
    }
  });
  it('rejects a duplicate alias, naming the entry', () => {
    const entry = (id: string, alias: string) => ({ id, name: id, aliases: [{ id: alias, family: 'openai' }], prices: { input: 1, output: 1 }, source: { name: 'x', url: 'https://example.com', retrieved: '2026-12-02' } });
    expect(() => parseCatalog({ version: '1', generated_at: '2026-12-02', entries: [entry('a/b', 'same'), entry('a/c', 'same')] })).toThrow(InvalidInputError);
    expect(() => parseCatalog({ version: '1', generated_at: '2026-12-02', entries: [entry('a/b', 'same'), entry('a/c', 'same')] })).toThrow(/entries\[1\]\.aliases\[0\]: alias "same" of family openai also belongs to entries\[0\]/);
  });
});
