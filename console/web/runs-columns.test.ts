import { describe, expect, it } from 'vitest';
import { MIN_FREE_COLUMN_PX, RUNS_COLUMNS, RUNS_TABLE_CHROME_PX, RUNS_TABLE_MIN_WIDTH, runsColumns, runsTableFits } from './runs-columns.ts';
import { SORT_KEYS } from './runs-view.ts';

describe('runs table columns', () => {
  it('every column fits without sideways scrolling from a 1280 px window up, not below the table minimum', () => {
    expect(runsTableFits(1280)).toBe(true);
    expect(runsTableFits(1440)).toBe(true);
    expect(runsTableFits(1024)).toBe(false);
    expect(RUNS_TABLE_MIN_WIDTH + RUNS_TABLE_CHROME_PX).toBeLessThanOrEqual(1280);
  });

  it('the free-text columns (Run, Model, Activity) share the rest and get at least their minimum at 1280 px', () => {
    const free = runsColumns(false).filter((c) => c.width === undefined).map((c) => c.label);
    expect(free).toEqual(['Run', 'Model', 'Activity']);
    const fixed = runsColumns(false).reduce((sum, c) => sum + (c.width ?? 0), 0);
    expect((1280 - RUNS_TABLE_CHROME_PX - fixed) / free.length).toBeGreaterThanOrEqual(MIN_FREE_COLUMN_PX);
  });

  it('the Check column shows only where some run has a check: the table then fits from a 1440 px window up', () => {
    expect(runsColumns(false).map((c) => c.label)).not.toContain('Check');
    expect(runsColumns(true).map((c) => c.label)).toEqual(RUNS_COLUMNS.map((c) => c.label));
    expect(runsColumns(true).map((c) => c.label)).toContain('Check');
    expect(runsTableFits(1280, true)).toBe(false);
    expect(runsTableFits(1440, true)).toBe(true);
  });

  it('a header word fits its column (12 px bold: up to ~8.1 px a character in Chromium, plus 16 px of padding)', () => {
    for (const c of RUNS_COLUMNS.filter((col) => col.width !== undefined)) {
      const longestWord = Math.max(...c.label.split(' ').map((w) => w.length));
      expect(longestWord * 8.2 + 16, c.label).toBeLessThanOrEqual(c.width!);
    }
  });

  it('every sort key but the default order of rows has its column, each once', () => {
    const sorts = RUNS_COLUMNS.flatMap((c) => (c.sort ? [c.sort] : []));
    expect(new Set(sorts).size).toBe(sorts.length);
    expect([...sorts].sort()).toEqual([...SORT_KEYS].sort());
  });
});
