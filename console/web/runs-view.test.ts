import { describe, expect, it } from 'vitest';
import type { RunRow } from '../../shared/console.ts';
import { DEFAULT_SORT, EMPTY_FILTER, facets, idleSeconds, isStalled, matchesFilter, phaseCounts, sortRows, viewFromQuery, viewToQuery, visibleRows } from './runs-view.ts';

const NOW = Date.parse('2026-12-05T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const clock = { nowMs: NOW, stalledAfterSeconds: 300 };

function row(name: string, patch: Partial<RunRow> = {}): RunRow {
  return { key: `ns/${name}`, namespace: 'ns', name, uid: name, harness: 'claude', model: 'sonnet', phase: 'Running', createdAt: ago(3600), startedAt: ago(3000), ...patch };
}

describe('idle and stalled', () => {
  it('idle counts from the last event, else from the start; queued and finished runs have none', () => {
    expect(idleSeconds(row('a', { lastEventAt: ago(42) }), NOW)).toBe(42);
    expect(idleSeconds(row('b', { lastEventAt: undefined }), NOW)).toBe(3000);
    expect(idleSeconds(row('c', { phase: 'Pending', startedAt: undefined }), NOW)).toBeUndefined();
    expect(idleSeconds(row('d', { phase: 'Succeeded', lastEventAt: ago(9000) }), NOW)).toBeUndefined();
  });

  it('a live run is stalled once idle reaches the threshold, a finished one never', () => {
    expect(isStalled(row('a', { lastEventAt: ago(299) }), clock)).toBe(false);
    expect(isStalled(row('a', { lastEventAt: ago(300) }), clock)).toBe(true);
    expect(isStalled(row('a', { phase: 'Failed', lastEventAt: ago(3000) }), clock)).toBe(false);
    // A check prints no events: its silence is no stall (the idle time still shows).
    expect(isStalled(row('a', { phase: 'Checking', lastEventAt: ago(3000) }), clock)).toBe(false);
    expect(idleSeconds(row('a', { phase: 'Checking', lastEventAt: ago(3000) }), NOW)).toBe(3000);
  });
});

describe('filters', () => {
  const rows = [
    row('alpha', { harness: 'codex', model: 'gpt-5', lastEventAt: ago(5), activity: { text: 'command: npm test', type: 'command', at: ago(5) } }),
    row('beta', { phase: 'Succeeded', outcome: 'succeeded', finishedAt: ago(10), activity: { text: 'teardown started', type: 'system', stage: 'teardown', at: ago(10) } }),
    row('gamma', { phase: 'Failed', outcome: 'harness_failed', message: 'session 1 exited with 2' }),
    row('delta', { lastEventAt: ago(600) }),
    row('eps', { phase: 'Pending', startedAt: undefined }),
  ];
  const names = (filter: Partial<typeof EMPTY_FILTER>) => rows.filter((r) => matchesFilter(r, { ...EMPTY_FILTER, ...filter }, clock)).map((r) => r.name);

  it("by an Evaluation (namespace and its label) and by one of its cells: the links of the Evaluation's page", () => {
    const slots = [
      row('s1', { evaluation: 'nightly', cell: 'c1' }),
      row('s2', { evaluation: 'nightly', cell: 'c2' }),
      row('s3', { namespace: 'other', key: 'other/s3', evaluation: 'nightly', cell: 'c1' }),
      row('s4', { evaluation: 'weekly', cell: 'c1' }),
      row('plain'),
    ];
    const kept = (filter: Partial<typeof EMPTY_FILTER>) => slots.filter((r) => matchesFilter(r, { ...EMPTY_FILTER, ...filter }, clock)).map((r) => r.name);
    expect(kept({ evaluation: 'ns/nightly' })).toEqual(['s1', 's2']);
    expect(kept({ evaluation: 'ns/nightly', cell: 'c1' })).toEqual(['s1']);
    expect(kept({ evaluation: 'other/nightly' })).toEqual(['s3']);
    const view = { filter: { ...EMPTY_FILTER, evaluation: 'ns/nightly', cell: 'c1' }, sort: DEFAULT_SORT };
    expect(viewToQuery(view.filter, view.sort)).toBe('evaluation=ns%2Fnightly&cell=c1');
    expect(viewFromQuery(viewToQuery(view.filter, view.sort))).toEqual(view);
  });

  it('by phase, "not finished", harness, model and outcome (including "none yet")', () => {
    expect(names({ phase: 'Failed' })).toEqual(['gamma']);
    expect(names({ phase: 'active' })).toEqual(['alpha', 'delta', 'eps']);
    expect(names({ harness: 'codex' })).toEqual(['alpha']);
    expect(names({ model: 'gpt-5' })).toEqual(['alpha']);
    expect(names({ outcome: 'succeeded' })).toEqual(['beta']);
    expect(names({ outcome: 'none' })).toEqual(['alpha', 'delta', 'eps']);
  });

  it('text matches every word anywhere in name, harness, model, activity or message', () => {
    expect(names({ text: 'npm' })).toEqual(['alpha']);
    expect(names({ text: 'EXITED 2' })).toEqual(['gamma']);
    expect(names({ text: 'ns/be' })).toEqual(['beta']);
    expect(names({ text: 'codex nothing' })).toEqual([]);
  });

  it('text matches what the Activity column shows: how a finished run ended, not its last event', () => {
    expect(names({ text: 'succeeded' })).toEqual(['beta']);
    expect(names({ text: 'teardown' })).toEqual([]);
    expect(names({ text: 'failed: session' })).toEqual(['gamma']);
  });

  it('stalled only', () => expect(names({ stalledOnly: true })).toEqual(['delta']));

  it('facets and counts', () => {
    expect(facets(rows)).toEqual({ harnesses: ['claude', 'codex'], models: ['gpt-5', 'sonnet'], checks: false });
    expect(facets([...rows, row('zeta', { check: { passed: false, exitCode: 1, reward: null, durationMs: 10 } })]).checks).toBe(true);
    expect(phaseCounts(rows, clock)).toEqual({ byPhase: { Running: 2, Succeeded: 1, Failed: 1, Pending: 1 }, stalled: 1, total: 5 });
  });
});

describe('sorting', () => {
  const rows = [
    row('b', { tokens: { input: 10, output: 5, cache_read: null, cache_write: null, reasoning: null }, actualCostUsd: 0.5 }),
    row('a', { tokens: { input: 100, output: 5, cache_read: null, cache_write: null, reasoning: null }, actualCostUsd: null }),
    row('c', { startedAt: ago(10) }),
  ];
  const order = (key: (typeof DEFAULT_SORT)['key'], dir: 'asc' | 'desc') => sortRows(rows, { key, dir }, NOW).map((r) => r.name);

  it('sorts both ways, rows without a value last either way', () => {
    expect(order('name', 'asc')).toEqual(['a', 'b', 'c']);
    expect(order('name', 'desc')).toEqual(['c', 'b', 'a']);
    expect(order('tokens', 'desc')).toEqual(['a', 'b', 'c']);
    expect(order('tokens', 'asc')).toEqual(['b', 'a', 'c']);
    expect(order('actualCost', 'asc')).toEqual(['b', 'a', 'c']);
    expect(order('started', 'desc')).toEqual(['c', 'a', 'b']);
  });

  it('phase sorts in lifecycle order, not alphabetically', () => {
    const mixed = [row('x', { phase: 'Succeeded' }), row('y', { phase: 'Pending' }), row('z', { phase: 'Running' })];
    expect(sortRows(mixed, { key: 'phase', dir: 'asc' }, NOW).map((r) => r.phase)).toEqual(['Pending', 'Running', 'Succeeded']);
  });

  it('check sorts passed above failed (by reward within each), runs without one last either way', () => {
    const check = (passed: boolean, reward: number | null) => ({ passed, exitCode: passed ? 0 : 1, reward, durationMs: 100 });
    const checked = [
      row('none'),
      row('fail-1', { check: check(false, 1) }),
      row('pass', { check: check(true, null) }),
      row('pass-half', { check: check(true, 0.5) }),
      row('fail', { check: check(false, null) }),
    ];
    const by = (dir: 'asc' | 'desc') => sortRows(checked, { key: 'check', dir }, NOW).map((r) => r.name);
    expect(by('desc')).toEqual(['pass-half', 'pass', 'fail-1', 'fail', 'none']);
    expect(by('asc')).toEqual(['fail', 'fail-1', 'pass', 'pass-half', 'none']);
    expect(viewFromQuery('sort=check:desc').sort).toEqual({ key: 'check', dir: 'desc' });
  });

  it('visibleRows filters then sorts 10,000 rows without losing any', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => row(`r${i}`, { phase: i % 2 ? 'Running' : 'Succeeded', startedAt: ago(i) }));
    const shown = visibleRows(many, { ...EMPTY_FILTER, phase: 'Running' }, DEFAULT_SORT, clock);
    expect(shown).toHaveLength(5000);
    expect(shown[0]!.name).toBe('r1');
    expect(shown.at(-1)!.name).toBe('r9999');
  });
});

describe('view in the URL', () => {
  it('round-trips the filter and sort, and drops unknown values', () => {
    const view = { filter: { ...EMPTY_FILTER, phase: 'active' as const, harness: 'codex', text: 'npm test', stalledOnly: true }, sort: { key: 'idle' as const, dir: 'desc' as const } };
    expect(viewFromQuery(viewToQuery(view.filter, view.sort))).toEqual(view);
    expect(viewToQuery(EMPTY_FILTER, DEFAULT_SORT)).toBe('');
    expect(viewFromQuery('?phase=Bogus&outcome=nope&sort=evil:up')).toEqual({ filter: EMPTY_FILTER, sort: DEFAULT_SORT });
  });
});
