import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TailBuffer } from './tail.ts';

/** What the failure message should show: whole lines from the end while they fit, else the end of the last one. */
function expectedTail(lines: string[], limit: number): string {
  const kept: string[] = [];
  let length = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (length + 1 + lines[i]!.length > limit) break;
    kept.unshift(lines[i]!);
    length += 1 + lines[i]!.length;
  }
  if (kept.length === 0 && lines.length > 0) return lines.at(-1)!.slice(-limit);
  return kept.join('\n');
}

describe('TailBuffer', () => {
  it('shows the whole lines that fit from the end, or the end of a line longer than the limit, and never holds more', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.string({ maxLength: 12 }), { maxLength: 300 }), (limit, lines) => {
        const tail = new TailBuffer(limit);
        for (const line of lines) {
          tail.add(line);
          expect(tail.size).toBeLessThanOrEqual(limit);
        }
        expect(tail.text()).toBe(expectedTail(lines, limit));
      }),
      { seed: 19, numRuns: 300 },
    );
  });

  it('rejects a nonsensical limit', () => {
    expect(() => new TailBuffer(0)).toThrow(RangeError);
  });
});
