import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideClaims } from './decide.ts';
import type { QueuedRun, RunPhase } from './decide.ts';

let clock = 0;
const run = (key: string, harness: string, phase: RunPhase = 'Pending', createdAt = ++clock): QueuedRun => ({ key, harness, phase, createdAt });

describe('decideClaims', () => {
  it.each([
    {
      name: 'claims everything when nothing is capped',
      runs: [run('a1', 'a'), run('b1', 'b'), run('a2', 'a')],
      limits: {},
      maxInFlight: null,
      claim: ['a1', 'b1', 'a2'],
      waiting: {},
    },
    {
      name: 'a harness cap counts Dispatched, Starting and Running runs, not finished ones',
      runs: [run('a0', 'a', 'Running'), run('a9', 'a', 'Succeeded'), run('a8', 'a', 'Failed'), run('a1', 'a'), run('a2', 'a')],
      limits: { a: 2 },
      maxInFlight: null,
      claim: ['a1'],
      waiting: { a2: 'harness-cap' },
    },
    {
      name: 'a Run whose check runs (Checking) still holds its slot: its Pod is there until the result',
      runs: [run('a0', 'a', 'Checking'), run('b0', 'b', 'Checking'), run('a1', 'a'), run('b1', 'b')],
      limits: { a: 1 },
      maxInFlight: 2,
      claim: [],
      waiting: { a1: 'harness-cap', b1: 'global-cap' },
    },
    {
      name: 'a capped harness never holds back another harness (no head-of-line blocking)',
      runs: [run('a0', 'a', 'Starting'), run('a1', 'a'), run('a2', 'a'), run('b1', 'b')],
      limits: { a: 1 },
      maxInFlight: null,
      claim: ['b1'],
      waiting: { a1: 'harness-cap', a2: 'harness-cap' },
    },
    {
      name: 'the global in-flight cap counts every harness; its room goes to the harness holding fewest slots, then the oldest',
      runs: [run('x', 'a', 'Dispatched'), run('b1', 'b'), run('a1', 'a'), run('c1', 'c')],
      limits: {},
      maxInFlight: 3,
      claim: ['b1', 'c1'],
      waiting: { a1: 'global-cap' },
    },
    {
      name: 'a long, older queue of one harness does not starve a newer harness under the global cap',
      runs: [run('g0', 'g', 'Running'), run('g00', 'g', 'Running'), run('g1', 'g'), run('g2', 'g'), run('g3', 'g'), run('c1', 'c')],
      limits: {},
      maxInFlight: 3,
      claim: ['c1'],
      waiting: { g1: 'global-cap', g2: 'global-cap', g3: 'global-cap' },
    },
    {
      name: 'both caps compose: a run must clear both',
      runs: [run('a1', 'a'), run('a2', 'a'), run('b1', 'b'), run('b2', 'b')],
      limits: { a: 1 },
      maxInFlight: 2,
      claim: ['a1', 'b1'],
      waiting: { a2: 'harness-cap', b2: 'global-cap' },
    },
    {
      name: 'a cap of 0 pauses a harness; null is unlimited',
      runs: [run('a1', 'a'), run('gg1', 'gg'), run('gg2', 'gg')],
      limits: { a: 0, gg: null },
      maxInFlight: null,
      claim: ['gg1', 'gg2'],
      waiting: { a1: 'harness-cap' },
    },
    {
      name: 'over-occupied (cap lowered at run time): nothing new is claimed, nothing is preempted',
      runs: [run('a0', 'a', 'Running'), run('a00', 'a', 'Running'), run('a1', 'a')],
      limits: { a: 1 },
      maxInFlight: null,
      claim: [],
      waiting: { a1: 'harness-cap' },
    },
  ])('$name', ({ runs, limits, maxInFlight, claim, waiting }) => {
    const decision = decideClaims({ runs, limits, maxInFlight });
    expect(decision.claim).toEqual(claim);
    expect(decision.waiting).toEqual(waiting);
  });

  it('shares global room evenly among harnesses with queued runs', () => {
    const runs = ['a', 'b', 'c'].flatMap((h) => Array.from({ length: 10 }, (_, i) => run(`${h}${i}`, h)));
    const { claim } = decideClaims({ runs, limits: { a: 2 }, maxInFlight: 8 });
    const per = (h: string) => claim.filter((k) => k.startsWith(h)).length;
    expect([per('a'), per('b'), per('c')]).toEqual([2, 3, 3]);
    expect(claim.filter((k) => k.startsWith('b'))).toEqual(['b0', 'b1', 'b2']); // oldest first within a harness
  });

  it('orders by creation time, not by input order, with the key as a stable tie-break', () => {
    const runs = [run('late', 'a', 'Pending', 30), run('early', 'a', 'Pending', 10), run('b-tie', 'a', 'Pending', 20), run('a-tie', 'a', 'Pending', 20)];
    expect(decideClaims({ runs, limits: { a: 3 }, maxInFlight: null }).claim).toEqual(['early', 'a-tie', 'b-tie']);
  });

  it('finding 9: a harness slug named like an Object property ("constructor") is counted and capped like any other', () => {
    const runs = [run('c0', 'constructor', 'Running'), run('c1', 'constructor'), run('c2', 'constructor')];
    expect(decideClaims({ runs, limits: {}, maxInFlight: null })).toMatchObject({ claim: ['c1', 'c2'], occupied: { constructor: 1 } });
    expect(decideClaims({ runs, limits: { constructor: 2 }, maxInFlight: null })).toMatchObject({ claim: ['c1'], waiting: { c2: 'harness-cap' } });
  });

  describe('runs held for provider back-pressure (throttle.ts)', () => {
    const held = (key: string, harness: string, createdAt?: number): QueuedRun => ({ ...run(key, harness, 'Pending', createdAt), held: true });

    it('a held run waits "throttled" and the runs behind it, same harness, other models, are claimed', () => {
      const runs = [held('m1', 'a', 1), held('m2', 'a', 2), run('o1', 'a', 'Pending', 3), run('o2', 'a', 'Pending', 4)];
      const d = decideClaims({ runs, limits: { a: 2 }, maxInFlight: null });
      expect(d.claim).toEqual(['o1', 'o2']);
      expect(d.waiting).toEqual({ m1: 'throttled', m2: 'throttled' });
    });

    it('held runs take no global room: the room goes to runs that can start', () => {
      const runs = [held('h1', 'a', 1), held('h2', 'a', 2), run('a3', 'a', 'Pending', 3), run('b1', 'b', 'Pending', 4)];
      const d = decideClaims({ runs, limits: {}, maxInFlight: 2 });
      expect(d.claim).toEqual(['a3', 'b1']);
      expect(d.inFlight).toBe(0);
    });

    it('a released run keeps its age: with the hold over it goes before the newer runs it let pass', () => {
      const runs = [held('old', 'a', 1), run('new1', 'a', 'Pending', 2), run('new2', 'a', 'Pending', 3)];
      expect(decideClaims({ runs, limits: { a: 1 }, maxInFlight: null })).toMatchObject({ claim: ['new1'], waiting: { old: 'throttled', new2: 'harness-cap' } });
      const released = runs.map((r) => ({ ...r, held: false }));
      expect(decideClaims({ runs: released, limits: { a: 1 }, maxInFlight: null })).toMatchObject({ claim: ['old'], waiting: { new1: 'harness-cap', new2: 'harness-cap' } });
    });

    it('held only matters while Pending: a held flag on a Running run still counts its slot', () => {
      const runs = [{ ...run('r', 'a', 'Running'), held: true }, run('p', 'a')];
      expect(decideClaims({ runs, limits: { a: 1 }, maxInFlight: null })).toMatchObject({ claim: [], waiting: { p: 'harness-cap' }, inFlight: 1 });
    });

    it('never claims a held run, and claims exactly what the same snapshot without the held runs claims (property)', () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ harness: fc.constantFrom('a', 'b', 'c'), phase: fc.constantFrom<RunPhase>('Pending', 'Pending', 'Running', 'Succeeded'), createdAt: fc.nat(100), held: fc.boolean() }), { maxLength: 30 }),
          fc.option(fc.nat(8), { nil: null }),
          fc.record({ a: fc.option(fc.nat(4), { nil: null }), b: fc.nat(3) }),
          (specs, maxInFlight, limits) => {
            const runs: QueuedRun[] = specs.map((s, i) => ({ key: `r${i}`, ...s }));
            const d = decideClaims({ runs, limits, maxInFlight });
            const heldKeys = new Set(runs.filter((r) => r.held && r.phase === 'Pending').map((r) => r.key));
            expect(d.claim.filter((k) => heldKeys.has(k))).toEqual([]);
            for (const k of heldKeys) expect(d.waiting[k]).toBe('throttled');
            const without = decideClaims({ runs: runs.filter((r) => !heldKeys.has(r.key)), limits, maxInFlight });
            expect(d.claim).toEqual(without.claim);
          },
        ),
      );
    });
  });

  it('never exceeds a cap over many random snapshots (property)', () => {
    let seed = 42;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const phases: RunPhase[] = ['Pending', 'Pending', 'Pending', 'Dispatched', 'Running', 'Succeeded'];
    for (let trial = 0; trial < 500; trial++) {
      const runs = Array.from({ length: rand(40) }, (_, i) => run(`r${i}`, ['a', 'b', 'c'][rand(3)]!, phases[rand(phases.length)]!, rand(1000)));
      const limits = { a: rand(4), b: rand(2) === 0 ? null : rand(6) };
      const maxInFlight = rand(3) === 0 ? null : rand(12);
      const d = decideClaims({ runs, limits, maxInFlight });
      const claimed = new Set(d.claim);
      for (const h of ['a', 'b', 'c'] as const) {
        const cap = (limits as Record<string, number | null>)[h] ?? Infinity;
        const after = runs.filter((r) => r.harness === h && (claimed.has(r.key) || ['Dispatched', 'Starting', 'Running'].includes(r.phase))).length;
        const before = d.occupied[h] ?? 0;
        expect(after <= Math.max(cap, before)).toBe(true);
      }
      if (maxInFlight !== null) expect(d.inFlight + d.claim.length <= Math.max(maxInFlight, d.inFlight)).toBe(true);
    }
  });
});
