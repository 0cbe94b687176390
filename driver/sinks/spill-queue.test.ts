import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SpillQueue } from './spill-queue.ts';

const dirs: string[] = [];
const spillPath = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tcab-spill-test-'));
  dirs.push(dir);
  return join(dir, 'spill.ndjson');
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('SpillQueue', () => {
  it('keeps order across the memory part and the spill file, and spills once memory is full', () => {
    const path = spillPath();
    const q = new SpillQueue(path, 50);
    const items = Array.from({ length: 40 }, (_, i) => `{"i":${i},"pad":"€€"}`);
    for (const item of items) q.push(item);
    expect(existsSync(path)).toBe(true);
    expect(q.length).toBe(40);
    const out: string[] = [];
    while (q.length > 0) {
      const batch = q.peek(7);
      out.push(...batch);
      q.drop(batch.length);
    }
    expect(out).toEqual(items);
    q.dispose();
    expect(existsSync(path)).toBe(false);
  });

  it('peek does not consume; drain returns the rest in order', () => {
    const q = new SpillQueue(spillPath(), 10);
    ['a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'g7'].forEach((x) => q.push(x));
    expect(q.peek(2)).toEqual(['a1', 'b2']);
    expect(q.peek(2)).toEqual(['a1', 'b2']);
    q.drop(1);
    expect(q.drain()).toEqual(['b2', 'c3', 'd4', 'e5', 'f6', 'g7']);
    expect(q.length).toBe(0);
    q.dispose();
  });

  it('rejects multi-line items (the file format is one item per line)', () => {
    const q = new SpillQueue(spillPath());
    expect(() => q.push('a\nb')).toThrow(/single-line/);
    q.dispose();
  });
});
