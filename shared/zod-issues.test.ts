import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues } from './zod-issues.ts';

describe('formatIssues', () => {
  it('finding 11: names each field as the file spells it, and stays bounded however many fields fail', () => {
    const Shape = z.strictObject({ a: z.strictObject({ b: z.array(z.int()) }) });
    expect(formatIssues(Shape.safeParse({ a: { b: [1, 'x'] } }).error!)).toBe('a.b[1]: Invalid input: expected number, received string');
    const many = z.array(z.string()).safeParse(Array.from({ length: 1000 }, (_, i) => i)).error!;
    const text = formatIssues(many);
    expect(text.split('; ')).toHaveLength(11);
    expect(text.endsWith('; and 990 more')).toBe(true);
    const keys = z.strictObject({}).safeParse(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key-${i}`, i]))).error!;
    expect(formatIssues(keys).length).toBeLessThanOrEqual(301);
  });
});
