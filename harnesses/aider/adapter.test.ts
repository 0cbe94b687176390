// Aider cannot run here (PyPI): the fixture is BUILT FROM THE DOCUMENTED OUTPUT FORMAT (aider/coders/base_coder.py
// and aider's docs), not recorded. Best-effort: every line is `unknown`; only the usage hook reads anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import aiderAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';
import { parseUsageLine } from './usage.ts';

const manifest = getHarness('aider').manifest;
const adapter = aiderAdapter(manifest);

describe('aider adapter: documented output (built from the documented format, not recorded)', () => {
  it('surfaces every line as unknown and reads the Tokens/Cost lines into usage and cost', () => {
    const { events, summary } = translateFixture(adapter, join(import.meta.dirname, 'fixtures', 'aider-documented-session.txt'));
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
  it('sends one message with the model, auto-yes and the offline switches', () => {
    const inv = adapter.invocation({ model: 'openrouter/anthropic/claude-sonnet-4.5', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual([
      'aider', '--message', 'fix it', '--model', 'openrouter/anthropic/claude-sonnet-4.5', '--yes-always', '--no-auto-commits', '--no-pretty',
      '--analytics-disable', '--no-check-update', '--no-show-release-notes', '--no-show-model-warnings',
    ]);
    expect(inv.stdin).toBe('close');
  });

  it('is best-effort with no stub wire and says why it cannot run here', () => {
    expect(manifest.strategy).toBe('best-effort');
    expect(manifest.stub_wire).toBeUndefined();
    expect(manifest.offline_note).toMatch(/cannot be installed or run in this sandbox/);
  });
});
