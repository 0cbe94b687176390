// auggie needs the Augment backend: the fixtures are BUILT FROM THE DOCUMENTED SHAPE of its final JSON object
// (read in the augment.mjs bundle), not recorded. Best-effort: the object itself is `unknown`; the hook reads it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import auggieAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('auggie').manifest;
const adapter = auggieAdapter(manifest);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('auggie adapter: documented final object (built from documented shapes, not recorded)', () => {
  it('surfaces the object as unknown, stamped with the session id it reports, and reads a USD billing', () => {
    const { events, summary } = translateFixture(adapter, fixture('auggie-documented-result.jsonl'));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'unknown', session_id: '7f3c2a9e-1b4d-4e8f-9a2b-3c4d5e6f7a8b' });
    expect(summary.result).toEqual({
      session_id: '7f3c2a9e-1b4d-4e8f-9a2b-3c4d5e6f7a8b',
      is_error: false,
      final_text: 'Updated hello.py to print a greeting.',
      tokens: null,
      raw_usage: { usage_unit: 'usd', total_cost: 0.042, parent_cost: 0.03, sub_agent_cost: 0.012 },
      reported_cost_usd: 0.042,
    });
  });

  it('a credits billing is kept as raw usage but is not a USD cost; the error verdict is read', () => {
    const { summary } = translateFixture(adapter, fixture('auggie-documented-credits.jsonl'), { exitCode: 1 });
    expect(summary.result).toMatchObject({ is_error: true, reported_cost_usd: null, raw_usage: { usage_unit: 'credits', total_cost: 120 } });
  });

  it('text lines and other JSON stay unknown and set nothing', () => {
    const text = ["❌ No auth provided. Please log in with 'auggie login' or set the AUGMENT_SESSION_AUTH environment variable.", '{"type":"progress","x":1}'].join('\n');
    const { events, summary } = translateText(adapter, text, { exitCode: 1 });
    expect(strip(events).slice(0, 2)).toEqual([
      { type: 'unknown', raw: "❌ No auth provided. Please log in with 'auggie login' or set the AUGMENT_SESSION_AUTH environment variable." },
      { type: 'unknown', raw: { type: 'progress', x: 1 } },
    ]);
    expect(summary.result).toEqual({ tokens: null, raw_usage: null, reported_cost_usd: null });
  });
});

describe('auggie invocation', () => {
  it('runs print mode with the final JSON object, cost summary, model and workspace', () => {
    const inv = adapter.invocation({ model: 'sonnet4.5', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['auggie', '--print', '--output-format', 'json', '--show-cost', '--model', 'sonnet4.5', '--workspace-root', '/w', 'fix it']);
    expect(inv.env).toEqual({ AUGMENT_DISABLE_AUTO_UPDATE: '1' });
    expect(inv.stdin).toBe('close');
    expect(adapter.invocation({ model: 'm', prompt: 'p', workdir: '/w', home: '/h', resumeSessionId: 's1' }).argv.slice(-3)).toEqual(['--resume', 's1', 'p']);
  });

  it('declares both auth modes, no token classes and no stub wire', () => {
    expect(manifest.auth.modes).toEqual(['subscription', 'api-key']);
    expect(manifest.auth.subscription?.files).toEqual(['.augment/session.json']);
    expect(adapter.usageShape.classes).toEqual([]);
    expect(manifest.stub_wire).toBeUndefined();
  });
});
