// Crush cannot be installed here (postinstall downloads from GitHub): the fixture is BUILT FROM THE DOCUMENTED
// OUTPUT (plain answer text from `crush run`), not recorded.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../registry.ts';
import crushAdapter from './adapter.ts';
import { strip, translateFixture, translateText } from '../../test/support/translate-fixture.ts';

const manifest = getHarness('crush').manifest;
const adapter = crushAdapter(manifest);

describe('crush adapter: documented plain-text output (built from documented shapes, not recorded)', () => {
  it('surfaces every non-empty line as unknown and reports no usage', () => {
    const { events, summary } = translateFixture(adapter, join(import.meta.dirname, 'fixtures', 'crush-documented-run.txt'));
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: 'I updated `hello.py` so it prints a greeting:' },
      { type: 'unknown', raw: '    print("hello world")' },
      { type: 'unknown', raw: 'Run `python3 hello.py` to check.' },
    ]);
    expect(summary.result).toEqual({ tokens: null, raw_usage: null, reported_cost_usd: null });
    expect(adapter.usageShape.classes).toEqual([]);
  });

  it('keeps JSON-looking lines as parsed values and reports a failed run with its own output', () => {
    const { events } = translateText(adapter, '{"a":1}', { stderr: "no providers configured - please run 'crush' to set up a provider", exitCode: 1 });
    expect(strip(events)).toEqual([
      { type: 'unknown', raw: { a: 1 } },
      { type: 'warning', message: "no providers configured - please run 'crush' to set up a provider" },
      { type: 'error', message: "crush exited with code 1:\nno providers configured - please run 'crush' to set up a provider" },
    ]);
  });
});

describe('crush invocation', () => {
  it('runs the prompt non-interactively with the model and the metrics switches off', () => {
    const inv = adapter.invocation({ model: 'openrouter/anthropic/claude-sonnet-4.5', prompt: 'fix it', workdir: '/w', home: '/h' });
    expect(inv.argv).toEqual(['crush', 'run', '--quiet', '--model', 'openrouter/anthropic/claude-sonnet-4.5', 'fix it']);
    expect(inv.env).toEqual({ CRUSH_DISABLE_METRICS: '1', DO_NOT_TRACK: '1', CRUSH_DISABLE_PROVIDER_AUTO_UPDATE: '1' });
    expect(inv.stdin).toBe('close');
  });

  it('is best-effort, installs from npm and says why it cannot run here', () => {
    expect(manifest.strategy).toBe('best-effort');
    expect(manifest.install?.npm_package).toBe('@charmland/crush');
    expect(manifest.stub_wire).toBeUndefined();
    expect(manifest.offline_note).toMatch(/downloads the real binary from GitHub/);
  });
});
