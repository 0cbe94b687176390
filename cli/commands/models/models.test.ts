import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-models-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tcab = (args: string[], env: Record<string, string> = {}) => exec(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env: { ...process.env, ...env } });

describe('tcab models', () => {
  it('show finds an entry by any alias', async () => {
    const { stdout } = await tcab(['models', 'show', 'gpt-5-codex', '--json']);
    expect(JSON.parse(stdout)).toMatchObject({ id: 'openai/gpt-5-codex', prices: { input: 1.25, output: 10, cache_read: 0.125 } });
  });

  it('import writes a user copy and reprice uses it: the comparable cost of a stored result follows the new price', async () => {
    const out = join(dir, 'catalog.json');
    await tcab(['models', 'import', join(ROOT, 'shared/catalog/fixtures/openrouter-models.json'), '--out', out]);
    const stored = {
      run_id: 'r1', harness_slug: 'claude', harness_version: '2.1.332', model: 'claude-sonnet-4-5', canonical_model: 'anthropic/claude-sonnet-4.5', outcome: 'succeeded', message: '', auth_mode: 'subscription',
      sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: { input: 1000, output: 100, cache_read: 0, cache_write: 0, reasoning: null }, raw_usage: null, reported_cost_usd: null,
      actual_cost_usd: 0.0045, comparable_cost_usd: 0.0045, catalog_version: '2026-12-02.1', cost_warnings: [], started_at: '2026-12-02T12:00:00.000Z', finished_at: '2026-12-02T12:00:01.000Z', event_count: 0,
    };
    writeFileSync(join(dir, 'results.jsonl'), `${JSON.stringify(stored)}\n`);
    const { stdout } = await tcab(['models', 'reprice', join(dir, 'results.jsonl')], { TCAB_MODEL_CATALOG: out });
    const repriced = JSON.parse(stdout.trim());
    // 1000 x $3.50 + 100 x $15 per million; subscription with no reported charge -> actual = comparable.
    expect(repriced.comparable_cost_usd).toBeCloseTo((1000 * 3.5 + 100 * 15) / 1e6, 12);
    expect(repriced.actual_cost_usd).toBeCloseTo(repriced.comparable_cost_usd, 12);
    expect(repriced.catalog_version).toMatch(/\.import$/);
    expect(JSON.parse(readFileSync(out, 'utf8')).entries.length).toBeGreaterThan(20);
  });

  it('finding 11: a malformed input file is a usage error naming the file (and the line of an NDJSON file)', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{bad');
    await expect(tcab(['models', 'import', bad, '--out', join(dir, 'never.json')])).rejects.toMatchObject({ code: 2, stderr: `tcab: ${bad}: not valid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)\n` });
    const results = join(dir, 'bad-results.jsonl');
    writeFileSync(results, '{"run_id":"r1"}\n{bad\n');
    await expect(tcab(['models', 'reprice', results])).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(new RegExp(`^tcab: ${results}:1: not a run result: harness_slug: Invalid input`)) });
    writeFileSync(results, '\n{bad\n');
    await expect(tcab(['models', 'reprice', results])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining(`tcab: ${results}:2: not valid JSON`) });
  });

  it('import refuses to overwrite the bundled catalogue implicitly', async () => {
    await expect(tcab(['models', 'import', join(ROOT, 'shared/catalog/fixtures/litellm-prices.json')], { TCAB_MODEL_CATALOG: '' })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--out') });
  });
});
