import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan, parseJsonLine } from './json-line.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parseJsonLine', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  [1,2]', [1, 2]],
    ['{"a":', undefined],
    ['plain text', undefined],
    ['42', undefined],
    ['', undefined],
  ])('%j -> %j', (text, expected) => {
    expect(parseJsonLine(text)).toEqual(expected);
  });

  it(`keeps a line nested exactly ${MAX_JSON_DEPTH} deep and hands one level deeper on as text`, () => {
    expect(parseJsonLine(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(parseJsonLine(nested(MAX_JSON_DEPTH + 1))).toBeUndefined();
    // Objects count like arrays: {"a":{"a":...}}.
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(parseJsonLine(objects)).toBeUndefined();
  });

  it('the bracket count before the walk only skips lines that cannot be too deep (brackets in strings, many shallow ones)', () => {
    const deepValue = (depth: number): unknown => (depth === 0 ? '[{[' : { a: [deepValue(depth - 1)] });
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 140 }), fc.jsonValue({ maxDepth: 4 }), fc.nat(600), (halfDepth, sibling, strings) => {
        const value = [deepValue(halfDepth), sibling, '{['.repeat(strings)];
        const text = JSON.stringify(value);
        expect(parseJsonLine(text) === undefined).toBe(nestedDeeperThan(value, MAX_JSON_DEPTH));
      }),
      { seed: 19, numRuns: 200 },
    );
    // Hundreds of brackets, all shallow: parsed.
    expect(parseJsonLine(JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ i, s: '[[{{' }))))).toHaveLength(400);
  });

  it('finding 3: a line nested 100,000 deep is not JSON to the engine (no throw, no recursion)', () => {
    expect(parseJsonLine(nested(100_000))).toBeUndefined();
  });
});

describe('nestedDeeperThan', () => {
  it('measures depth over objects and arrays, wherever the deepest branch is', () => {
    const value = { a: [1, { b: 'x' }], c: { d: { e: [[]] } } };
    // value(1) > c(2) > d(3) > e(4) > [](5)
    expect(nestedDeeperThan(value, 5)).toBe(false);
    expect(nestedDeeperThan(value, 4)).toBe(true);
    expect(nestedDeeperThan('text', 0)).toBe(false);
  });

  it('walks a million levels with an explicit stack', () => {
    let deep: unknown = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(nestedDeeperThan(deep, 999_999)).toBe(true);
    expect(nestedDeeperThan(deep, 1_000_001)).toBe(false);
  });
});
