import { describe, expect, it } from 'vitest';
import type { HarnessRow } from '../../shared/console.ts';
import { atCap, harnessRowData } from './harness-view.ts';

const row = (patch: Partial<HarnessRow>): HarnessRow => ({ slug: 'gg', maxParallelism: 2, occupied: 0, queued: 0, default: false, readiness: { ready: true, missing: [] }, ...patch });

describe('harness rows', () => {
  it('carry their slug, cap, occupied and queued counts as data attributes', () => {
    expect(harnessRowData(row({ maxParallelism: 2, occupied: 1, queued: 3 }))).toEqual({
      'data-slug': 'gg',
      'data-cap': '2',
      'data-occupied': '1',
      'data-queued': '3',
      'data-at-cap': 'false',
    });
    expect(harnessRowData(row({ maxParallelism: null, occupied: 40 }))).toMatchObject({ 'data-cap': 'unlimited', 'data-occupied': '40', 'data-at-cap': 'false' });
  });

  it('is at cap when every slot is taken; paused (cap 0) always; unlimited never', () => {
    expect(atCap(row({ maxParallelism: 2, occupied: 2 }))).toBe(true);
    expect(atCap(row({ maxParallelism: 2, occupied: 1 }))).toBe(false);
    expect(atCap(row({ maxParallelism: 0, occupied: 0 }))).toBe(true);
    expect(atCap(row({ maxParallelism: null, occupied: 1000 }))).toBe(false);
  });
});
