import { describe, expect, it } from 'vitest';
import { HarnessRow } from '../../shared/console.ts';
import type { RunRow } from '../../shared/console.ts';
import { HarnessTally, harnessRow } from './harness-rows.ts';
import { registryCatalog } from './harness-catalog.ts';
import { getHarness } from '../../harnesses/registry.ts';

const row = (name: string, harness: string, phase: RunRow['phase'], extra: Partial<RunRow> = {}): RunRow => ({
  key: `n/${name}`, namespace: 'n', name, uid: name, harness, model: 'm', phase, createdAt: '2026-12-05T04:00:00Z', ...extra,
});
const catalog = { list: () => [{ slug: 'claude', displayName: 'Claude Code' }, { slug: 'gg' }], readiness: (slug: string) => ({ ready: slug === 'gg', missing: slug === 'gg' ? [] : ['ANTHROPIC_API_KEY'] }) };

describe('HarnessTally', () => {
  it('counts slots (Dispatched, Starting, Running) and queue (Pending) through every change of a row', () => {
    const tally = new HarnessTally();
    const a0 = row('a', 'claude', 'Pending');
    const b0 = row('b', 'claude', 'Pending');
    expect(tally.change(undefined, a0)).toEqual(['claude']);
    tally.change(undefined, b0);
    expect(tally.get('claude')).toMatchObject({ occupied: 0, queued: 2 });
    const a1 = row('a', 'claude', 'Dispatched');
    tally.change(a0, a1);
    const a2 = row('a', 'claude', 'Running', { startedAt: '2026-12-05T04:00:10Z', harnessVersion: '2.0.1' });
    tally.change(a1, a2);
    expect(tally.get('claude')).toMatchObject({ occupied: 1, queued: 1, lastVersion: '2.0.1' });
    tally.change(a2, row('a', 'claude', 'Succeeded', { startedAt: '2026-12-05T04:00:10Z', harnessVersion: '2.0.1' }));
    expect(tally.get('claude')).toMatchObject({ occupied: 0, queued: 1 });
    tally.change(b0, undefined);
    expect(tally.get('claude')).toMatchObject({ occupied: 0, queued: 0, lastVersion: '2.0.1' });
  });

  it('the last installed version is the latest started run\'s, not the latest changed', () => {
    const tally = new HarnessTally();
    tally.change(undefined, row('new', 'gg', 'Running', { startedAt: '2026-12-05T05:00:00Z', harnessVersion: '3' }));
    tally.change(undefined, row('old', 'gg', 'Succeeded', { startedAt: '2026-12-05T04:00:00Z', harnessVersion: '2' }));
    expect(tally.get('gg').lastVersion).toBe('3');
  });

  it('a row moving to another harness moves its count and touches both', () => {
    const tally = new HarnessTally();
    const before = row('a', 'claude', 'Running');
    tally.change(undefined, before);
    expect(tally.change(before, row('a', 'gg', 'Running')).sort()).toEqual(['claude', 'gg']);
    expect(tally.get('claude').occupied).toBe(0);
    expect(tally.get('gg').occupied).toBe(1);
  });
});

describe('harnessRow', () => {
  it('carries the holds of the providers its key goes to through the gateway, none of others', () => {
    const hold = (provider: string, model: string | null) => ({ provider, model, heldUntil: '2026-12-05T04:00:30.000Z', level: 1, status: 429, retryAfterS: null, count: 1 });
    const holds = [hold('anthropic', 'claude-x'), hold('openai', null), hold('google', 'gemini-x')];
    const tally = new HarnessTally();
    const row = harnessRow({ slug: 'gg', key: { gateway: ['anthropic', 'openai'] } }, new Map(), tally.get('gg'), catalog, holds);
    expect(HarnessRow.parse(row).holds).toEqual([holds[0], holds[1]]);
    expect(harnessRow({ slug: 'gg', key: { keyInHarness: 'x' } }, new Map(), tally.get('gg'), catalog, holds).holds).toBeUndefined();
    expect(harnessRow({ slug: 'gg', key: { gateway: ['dashscope'] } }, new Map(), tally.get('gg'), catalog, holds).holds).toBeUndefined();
  });

  it('joins the cap (default when no HarnessConfig), the counts and the readiness', () => {
    const tally = new HarnessTally();
    tally.change(undefined, row('a', 'gg', 'Running', { startedAt: '2026-12-05T04:00:00Z', harnessVersion: '1.0.0' }));
    const configs = new Map([['gg', { maxParallelism: 2 }]]);
    expect(HarnessRow.parse(harnessRow(catalog.list()[1]!, configs, tally.get('gg'), catalog))).toEqual({
      slug: 'gg', maxParallelism: 2, default: false, occupied: 1, queued: 0, readiness: { ready: true, missing: [] }, lastInstalledVersion: '1.0.0',
    });
    expect(HarnessRow.parse(harnessRow(catalog.list()[0]!, configs, tally.get('claude'), catalog))).toEqual({
      slug: 'claude', displayName: 'Claude Code', maxParallelism: null, default: true, occupied: 0, queued: 0, readiness: { ready: false, missing: ['ANTHROPIC_API_KEY'] },
    });
  });

  it('carries where the API key goes, from the catalogue entry', () => {
    const tally = new HarnessTally();
    const entry = { slug: 'amp', key: { keyInHarness: 'the Amp service makes every model call' } };
    expect(HarnessRow.parse(harnessRow(entry, new Map(), tally.get('amp'), catalog))).toMatchObject({ slug: 'amp', key: { keyInHarness: 'the Amp service makes every model call' } });
    expect(HarnessRow.parse(harnessRow({ slug: 'gg', key: { gateway: ['anthropic', 'openai', 'openrouter'] } }, new Map(), tally.get('gg'), catalog)).key).toEqual({ gateway: ['anthropic', 'openai', 'openrouter'] });
  });

  it('the registry catalogue gives each harness its manifest\'s key route: gateway providers, or key in harness with the reason', () => {
    const registry = registryCatalog(() => ({ ready: true, missing: [] }));
    const rows = new Map(registry.list().map((e) => [e.slug, HarnessRow.parse(harnessRow(e, new Map(), new HarnessTally().get(e.slug), registry))]));
    expect(rows.get('claude')!.key).toEqual({ gateway: ['anthropic'] });
    expect(rows.get('qwen')!.key).toEqual({ gateway: ['dashscope', 'openai'] });
    expect(rows.get('gg')!.key).toEqual({ gateway: ['anthropic', 'openai', 'openrouter'] });
    expect(rows.get('amp')!.key).toEqual({ keyInHarness: (getHarness('amp').manifest.gateway as { key_in_harness: string }).key_in_harness });
    expect([...rows.values()].every((r) => r.key !== undefined)).toBe(true);
  });
});
