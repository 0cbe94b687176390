import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, importPrices } from './import.ts';
import { loadCatalog, parseCatalog } from './load.ts';

const catalog = loadCatalog();
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')) as unknown;

describe('importPrices', () => {
  it('OpenRouter /models: updates a changed price (per-token strings -> per million), leaves equal ones, lists unknown models', () => {
    const result = importPrices(catalog, fixture('openrouter-models.json'), '2026-12-03', '2026-12-03.import');
    expect(result.format).toBe('openrouter');
    expect(result.changes).toEqual([
      { id: 'anthropic/claude-sonnet-4.5', from: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, to: { input: 3.5, output: 15, cache_read: 0.3, cache_write: 3.75 }, source_key: 'anthropic/claude-sonnet-4.5' },
    ]);
    expect(result.unchanged).toBe(1); // openai/gpt-5 is the same price
    expect(result.unmatched).toEqual(['mistralai/devstral-medium']);
    const entry = result.catalog.entries.find((e) => e.id === 'anthropic/claude-sonnet-4.5')!;
    expect(entry.source).toMatchObject({ name: 'openrouter', retrieved: '2026-12-03' });
    expect(result.catalog.version).toBe('2026-12-03.import');
    expect(parseCatalog(result.catalog)).toEqual(result.catalog); // valid as it is: parsing changes nothing
  });

  it('LiteLLM price file: matches entries by alias and provider/alias keys', () => {
    const result = importPrices(catalog, fixture('litellm-prices.json'), '2026-12-03', 'v2');
    expect(result.format).toBe('litellm');
    expect(result.changes.map((c) => [c.id, c.to])).toEqual([['anthropic/claude-haiku-4.5', { input: 1.2, output: 6, cache_read: 0.12, cache_write: 1.5 }]]);
    expect(result.unchanged).toBe(1); // gemini/gemini-2.5-pro
    expect(result.unmatched).toEqual(['some-new-model']);
  });

  it('refuses a document of another kind, saying what it expected', () => {
    expect(() => detectFormat({ models: [] })).toThrow(/not an OpenRouter \/models document/);
  });
});
