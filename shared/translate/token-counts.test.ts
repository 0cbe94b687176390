import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TokenCount, addClassValues, minus, readUsage, shapeReadTokens } from './token-counts.ts';
import type { UsageShape } from '../usage.ts';

const Usage = z.object({ input: TokenCount, output: TokenCount, cached: TokenCount.optional() });
const SHAPE: UsageShape = { classes: ['input', 'output', 'cache_read'], doc: 'test' };

describe('readUsage', () => {
  it('reads a whole valid object, absent optional fields absent', () => {
    expect(readUsage(Usage, { input: 5, output: 2, extra: 'x' })).toEqual({ fields: { input: 5, output: 2 }, unreadable: [] });
  });
  it.each([
    ['a string', '5'],
    ['a fraction', 1.5],
    ['a negative number', -1],
    ['null', null],
    ['nothing', undefined],
  ])('a required count that is %s is unreadable; the other fields are still read', (_, value) => {
    expect(readUsage(Usage, { input: value, output: 2, cached: 3 })).toEqual({ fields: { output: 2, cached: 3 }, unreadable: ['input'] });
  });
  it('a value that is no object leaves every required field unreadable', () => {
    expect(readUsage(Usage, 'lots').unreadable).toEqual(['input', 'output']);
  });
});

describe('class values', () => {
  it('shapeReadTokens keeps an unreadable class null and an absent declared class 0; undeclared classes stay null', () => {
    expect(shapeReadTokens(SHAPE, { input: null, output: 4 })).toEqual({ input: null, output: 4, cache_read: 0, cache_write: null, reasoning: null });
  });
  it('minus: unknown operands make the result unknown, never below 0', () => {
    expect(minus(10, 3, undefined)).toBe(7);
    expect(minus(10, null)).toBeNull();
    expect(minus(null, 3)).toBeNull();
    expect(minus(2, 5)).toBe(0);
    expect(minus(undefined, 1)).toBeUndefined();
  });
  it('addClassValues: an unknown class stays unknown for the session', () => {
    const one = addClassValues({ input: 1, output: null }, { input: 2, output: 3, cache_read: 4 });
    expect(one).toEqual({ input: 3, output: null, cache_read: 4 });
    expect(addClassValues(one, { input: 1, output: 1 })).toEqual({ input: 4, output: null, cache_read: 4 });
  });
});
