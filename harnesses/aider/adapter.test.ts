// Aider against the stub model (fixtures/aider-<version>-<scenario>.jsonl, recorded by `tcab harnesses verify aider
// --record`: its plain-text stdout, named like every recording) and one transcript BUILT FROM THE DOCUMENTED OUTPUT
// FORMAT (aider/coders/base_coder.py), for the cache write/hit figures the stub's OpenAI-convention usage never makes
// aider print. Best-effort: every line is `unknown`; only the usage hook reads anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import aiderAdapter, { OPENROUTER_BASE_VAR } from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { parseUsageLine } from './usage.ts';

const manifest = getHarness('aider').manifest;
const adapter = aiderAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('aider adapter: recorded against the stub (0.86.2)', () => {
  it.each([
    ['aider-0.86.2-whole-edit.jsonl', 'Model: openrouter/mock-model with whole edit format', 'Applied edit to hello.txt', 19],
    ['aider-0.86.2-diff-edit.jsonl', 'Model: openrouter/mock-model with diff edit format', 'Applied edit to hello.py', 21],
  ])('%s: every line unknown, the edit applied, usage from the Tokens/Cost line', (file, model, applied, lines) => {
    const { events, summary } = translateFixture(adapter, fixture(file));
    expect(events.every((e) => e.type === 'unknown')).toBe(true);
    expect(events).toHaveLength(lines); // every non-empty stdout line, nothing dropped
    const raws = strip(events).map((e) => (e as { raw: unknown }).raw);
    expect(raws).toContain('Aider v0.86.2');
    expect(raws).toContain(model);
    expect(raws.at(-1)).toBe(applied);
    expect(summary.result).toEqual({
      // The stub's usage (prompt 1200 = 900 uncached + 300 cached, 80 out) as aider prints it: "1.2k sent, 80
      // received", no cache figure (litellm's OpenRouter usage carries none aider reads), so all 1200 count as input.
      tokens: { input: 1200, output: 80, cache_read: 0, cache_write: 0, reasoning: null },
      // The scenario's metadata prices the mock model ($3/M in, $15/M out): litellm's estimate, kept in raw usage.
      raw_usage: [{ sent: 1200, cache_write: 0, cache_hit: 0, received: 80, session_cost_usd: 0.0048 }],
      reported_cost_usd: null,
    });
  });
});

describe('aider adapter: documented output (built from the documented format, not recorded)', () => {
  it('surfaces every line as unknown and reads the Tokens/Cost lines into usage and cost', () => {
    const { events, summary } = translateFixture(adapter, fixture('aider-documented-session.txt'));
    expect(events.every((e) => e.type === 'unknown')).toBe(true);
    expect(events).toHaveLength(14); // every non-empty stdout line, nothing dropped
    expect(strip(events)[0]).toEqual({ type: 'unknown', raw: 'Aider v0.86.3' });
    expect(summary.result).toEqual({
      // (2300 - 120 - 1100) + 12000 uncached; 150 + 950 out.
      tokens: { input: 13080, output: 1100, cache_read: 1100, cache_write: 120, reasoning: null },
      raw_usage: [
        { sent: 2300, cache_write: 120, cache_hit: 1100, received: 150, session_cost_usd: 0.01 },
        { sent: 12000, cache_write: 0, cache_hit: 0, received: 950, session_cost_usd: 0.05 },
      ],
      // The last cumulative session figure (a litellm estimate aider reports as its cost), never a sum.
      reported_cost_usd: null, // an estimate is not surfaced as a charge (raw usage keeps it)
    });
  });
});

describe('aider usage line', () => {
  it.each([
    ['Tokens: 950 sent, 40 received.', { sent: 950, cache_write: 0, cache_hit: 0, received: 40 }],
    ['Tokens: 2.3k sent, 120 cache write, 1.1k cache hit, 150 received. Cost: $0.01 message, $0.05 session.', { sent: 2300, cache_write: 120, cache_hit: 1100, received: 150, session_cost_usd: 0.05 }],
    ['Tokens: 15k sent, 1.2k cache hit, 2.0k received. Cost: $0.0012 message, $0.0030 session.', { sent: 15000, cache_write: 0, cache_hit: 1200, received: 2000, session_cost_usd: 0.003 }],
  ])('%s', (line, parsed) => {
    expect(parseUsageLine(line)).toEqual(parsed);
  });

  it.each(['Tokens: lots sent', 'The Tokens: 1 sent, 2 received. line quoted', 'Cost: $0.01 message, $0.05 session.'])('%s is not a usage line', (line) => {
    expect(parseUsageLine(line)).toBeUndefined();
  });

  it('a priceless model prints no cost: tokens are read, cost stays null', () => {
    const { summary } = translateText(adapter, 'Tokens: 1.5k sent, 200 received.');
    expect(summary.result.tokens).toEqual({ input: 1500, output: 200, cache_read: 0, cache_write: 0, reasoning: null });
    expect(summary.result.reported_cost_usd).toBeNull();
  });

  it('no usage line leaves usage null; garbage and JSON lines stay unknown', () => {
    const { events, summary } = translateText(adapter, '\u0000garbage\n{"Tokens":"1 sent"}');
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: '\u0000garbage' },
      { type: 'unknown', raw: { Tokens: '1 sent' } },
    ]);
    expect(summary.result).toEqual({ tokens: null, raw_usage: null, reported_cost_usd: null });
  });
});

describe('aider invocation', () => {
  it('sends one message with the model, auto-yes, whole responses and the offline switches', () => {
    const inv = adapter.invocation({ model: 'openrouter/anthropic/claude-sonnet-4.5', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual([
      'aider', '--message', 'fix it', '--model', 'openrouter/anthropic/claude-sonnet-4.5', '--yes-always', '--no-auto-commits', '--no-pretty', '--no-stream',
      '--analytics-disable', '--no-check-update', '--no-show-release-notes', '--no-show-model-warnings',
    ]);
    expect(inv.stdin).toBe('close');
    // OpenRouter itself: litellm's default base URL; its price map is the one it ships; no 80-column wrapping.
    expect(inv.env).toEqual({ LITELLM_LOCAL_MODEL_COST_MAP: 'True', COLUMNS: '10000' });
    expect(inv.files).toEqual([]);
  });

  it('points litellm\'s OpenRouter provider at another endpoint (the stub, the gateway), same model id and key', () => {
    const inv = adapter.invocation({ model: 'openrouter/mock-model', prompt: 'p', workdir: '/w', home: '/h', baseUrl: 'http://127.0.0.1:4000/p/openrouter/' });
    expect(inv.env[OPENROUTER_BASE_VAR]).toBe('http://127.0.0.1:4000/p/openrouter/v1');
    expect(inv.argv.slice(3, 5)).toEqual(['--model', 'openrouter/mock-model']);
    expect(manifest.auth.api_key?.inject_as).toBe('OPENROUTER_API_KEY');
    expect(manifest.gateway).toEqual({ providers: { OPENROUTER_API_KEY: 'openrouter' } });
  });

  it('is best-effort and verified against the stub on the OpenAI chat wire', () => {
    expect(manifest.strategy).toBe('best-effort');
    expect(manifest.stub_wire).toBe('openai-chat');
    expect(manifest.offline_note).toBeUndefined();
  });

  it('installs the newest aider-chat with uv, every uv directory inside the run prefix, no Python download', () => {
    const script = manifest.install!.command.join(' ');
    expect(script).toContain('aider-chat@latest');
    for (const dir of ['UV_TOOL_DIR', 'UV_TOOL_BIN_DIR', 'UV_CACHE_DIR', 'UV_PYTHON_INSTALL_DIR']) expect(script).toMatch(new RegExp(`${dir}='\\{prefix\\}/`));
    expect(script).toContain('UV_PYTHON_DOWNLOADS=never');
  });
});
