import { describe, expect, it } from 'vitest';
import type { HarnessRow } from '../../shared/console.ts';
import { atCap, harnessRowData, holdLabel, keyLabel, readinessLabel } from './harness-view.ts';

const row = (patch: Partial<HarnessRow>): HarnessRow => ({ slug: 'gg', maxParallelism: 2, occupied: 0, queued: 0, default: false, readiness: { ready: true, missing: [] }, ...patch });

describe('harness rows', () => {
  it('show the holds of provider back-pressure: a data-held hook, and a line per hold', () => {
    const hold = { provider: 'anthropic', model: 'claude-x', heldUntil: '2026-12-05T04:00:30.000Z', level: 2, status: 429, retryAfterS: 30, count: 4 };
    expect(harnessRowData(row({ holds: [hold, { ...hold, provider: 'openai', model: null }] }))['data-held']).toBe('anthropic/claude-x openai/*');
    expect(harnessRowData(row({}))['data-held']).toBeUndefined();
    const now = Date.parse('2026-12-05T04:00:05.000Z');
    expect(holdLabel(hold, now).text).toMatch(/^anthropic claude-x: held until \d\d:\d\d:\d\d \(in 25 s\), level 2, 429, retry-after 30 s$/);
    expect(holdLabel({ ...hold, model: null, retryAfterS: null }, now).text).toMatch(/^anthropic \(every model\): held until .*, no retry-after$/);
    expect(holdLabel(hold, Date.parse('2026-12-05T04:00:31.000Z')).text).toBe('anthropic claude-x: resuming, level 2, 429, retry-after 30 s');
    expect(holdLabel(hold, now).title).toMatch(/4 throttled answer/);
  });

  it('carry their slug, cap, occupied and queued counts as data attributes', () => {
    expect(harnessRowData(row({ maxParallelism: 2, occupied: 1, queued: 3 }))).toEqual({
      'data-slug': 'gg',
      'data-cap': '2',
      'data-occupied': '1',
      'data-queued': '3',
      'data-at-cap': 'false',
      'data-key': 'none',
    });
    expect(harnessRowData(row({ maxParallelism: null, occupied: 40 }))).toMatchObject({ 'data-cap': 'unlimited', 'data-occupied': '40', 'data-at-cap': 'false' });
  });

  it('is at cap when every slot is taken; paused (cap 0) always; unlimited never', () => {
    expect(atCap(row({ maxParallelism: 2, occupied: 2 }))).toBe(true);
    expect(atCap(row({ maxParallelism: 2, occupied: 1 }))).toBe(false);
    expect(atCap(row({ maxParallelism: 0, occupied: 0 }))).toBe(true);
    expect(atCap(row({ maxParallelism: null, occupied: 1000 }))).toBe(false);
  });

  it('reads readiness as ready (with the mode), not ready (with what is missing) or unknown where it cannot be known', () => {
    expect(readinessLabel({ ready: true, mode: 'api-key', missing: [] })).toEqual({ tone: 'ok', text: '✓ ready (api-key)' });
    expect(readinessLabel({ ready: false, missing: ['ANTHROPIC_API_KEY'] })).toEqual({ tone: 'fail', text: '✗ not ready: missing ANTHROPIC_API_KEY' });
    expect(readinessLabel({ ready: false, missing: [], unknown: 'known to the dispatcher only' })).toEqual({ tone: 'unknown', text: '? unknown here: known to the dispatcher only' });
  });

  it('reads the key cell as gateway (<provider>), or key in harness with the reason in its tooltip', () => {
    expect(keyLabel({ gateway: ['anthropic'] })).toEqual({
      route: 'gateway',
      text: 'gateway (anthropic)',
      title: "API-key mode: the harness gets the model gateway's URL (/p/anthropic) and a per-run token; the key stays in the driver",
    });
    expect(keyLabel({ gateway: ['dashscope', 'openai'] })).toMatchObject({ route: 'gateway', text: 'gateway (dashscope, openai)' });
    expect(keyLabel({ keyInHarness: 'AMP_API_KEY is for the Amp service, which takes no model base URL' })).toEqual({
      route: 'key-in-harness',
      text: 'key in harness',
      title: "API-key mode: the key is in the harness's environment, not behind the model gateway: AMP_API_KEY is for the Amp service, which takes no model base URL",
    });
    expect(keyLabel(undefined)).toEqual({ route: 'none', text: '—', title: 'no API-key mode' });
    expect(harnessRowData(row({ key: { gateway: ['openai'] } }))['data-key']).toBe('gateway');
    expect(harnessRowData(row({ key: { keyInHarness: 'a vendor backend' } }))['data-key']).toBe('key-in-harness');
  });
});
