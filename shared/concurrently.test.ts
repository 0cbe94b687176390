import { describe, expect, it } from 'vitest';
import { concurrently } from './concurrently.ts';

describe('concurrently', () => {
  it('handles every item, never more than the limit at once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    await concurrently([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await Promise.resolve();
      seen.push(n);
      inFlight--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('rejects with the first failure', async () => {
    await expect(concurrently([1, 2], 2, async (n) => { if (n === 2) throw new Error('boom 2'); })).rejects.toThrow('boom 2');
  });
});
