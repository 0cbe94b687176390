import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPlan, planArb } from './mutations.ts';
import type { Mutation } from './mutations.ts';

const line = (value: unknown) => Buffer.from(JSON.stringify(value));
const deepLine = (depth: number) => Buffer.from('{"type":"x","v":' + '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) + '}');

/** applyPlan, with a throw reported by name only (a stack overflow's own error is slow for the runner to print). */
function applied(lines: Buffer[], plan: Mutation[]): Buffer[] {
  try {
    return applyPlan(lines, plan);
  } catch (error) {
    throw new Error(`applyPlan threw ${(error as Error).name}: ${(error as Error).message}`, { cause: error });
  }
}

describe('the fuzz generator holds against the values it makes (issue 19)', () => {
  it.each<[string, Mutation]>([
    // node 0 is the record's "type": a mutation there keeps the deep value, so rewriting the record must stringify it.
    ['huge', { kind: 'huge', line: 0, node: 0, size: 1 }],
    ['wrong-type', { kind: 'wrong-type', line: 0, node: 0, value: 2 }],
    ['remove', { kind: 'remove', line: 0, node: 0 }],
    ['deep', { kind: 'deep', line: 0, node: 0, depth: 3, shape: 0 }],
  ])('finding 3: a %s mutation after a 100,000-deep value leaves that record as it is instead of overflowing the stack', (_, mutation) => {
    const deep = deepLine(100_000);
    const out = applied([deep, line({ type: 'y', n: 1 })], [mutation]);
    expect(out[0] === deep).toBe(true); // (a Buffer diff of 200 kB would take the runner minutes to print)
    // The mutation lands on the one record it can rewrite.
    expect(out[1]!.equals(line({ type: 'y', n: 1 }))).toBe(false);
  });

  it('finding 3: any plan over a stream with shallow, deep and text lines is applied without throwing', () => {
    const stream = [line({ type: 'a', m: { c: [1, 'x', null] } }), deepLine(2000), Buffer.from('plain text'), line([{ k: true }])];
    fc.assert(
      fc.property(fc.array(planArb, { minLength: 1, maxLength: 3 }), (plans) => {
        let lines: Buffer[] = stream;
        for (const plan of plans) lines = applied(lines, plan);
        expect(lines.every((l) => Buffer.isBuffer(l))).toBe(true);
      }),
      { seed: 31337, numRuns: 300 },
    );
  });

  it('a recorded 0 gets no fraction (a cost of nothing spent is 0 too; fuzz seeds 5, 11, 77), a recorded count still does', () => {
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), (value) => {
        const [zero] = applied([line({ total_cost_usd: 0 })], [{ kind: 'wrong-type', line: 0, node: 0, value }]);
        const got = (JSON.parse(zero!.toString('utf8')) as { total_cost_usd: unknown }).total_cost_usd;
        expect(typeof got === 'number' && !Number.isInteger(got)).toBe(false);
      }),
      { seed: 5, numRuns: 200 },
    );
    const fractions = new Set<unknown>();
    for (let value = 0; value < 50; value++) {
      const [count] = applied([line({ input_tokens: 7 })], [{ kind: 'wrong-type', line: 0, node: 0, value }]);
      fractions.add((JSON.parse(count!.toString('utf8')) as { input_tokens: unknown }).input_tokens);
    }
    expect(fractions).toContain(1.5);
  });
});
