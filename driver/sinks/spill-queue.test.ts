import { mkdtempSync, existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SpillQueue } from './spill-queue.ts';

const dirs: string[] = [];
const spillParent = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tcab-spill-test-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('SpillQueue', () => {
  it('keeps order across the memory part and the spill file, and spills once memory is full', () => {
    const q = new SpillQueue(spillParent(), 50);
    const items = Array.from({ length: 40 }, (_, i) => `{"i":${i},"pad":"€€"}`);
    for (const item of items) q.push(item);
    const path = q.spillPath!;
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
    const q = new SpillQueue(spillParent(), 10);
    ['a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'g7'].forEach((x) => q.push(x));
    expect(q.peek(2)).toEqual(['a1', 'b2']);
    expect(q.peek(2)).toEqual(['a1', 'b2']);
    q.drop(1);
    expect(q.drain()).toEqual(['b2', 'c3', 'd4', 'e5', 'f6', 'g7']);
    expect(q.length).toBe(0);
    q.dispose();
  });

  it('rejects multi-line items (the file format is one item per line)', () => {
    const q = new SpillQueue(spillParent());
    expect(() => q.push('a\nb')).toThrow(/single-line/);
    q.dispose();
  });

  it('spills into a fresh private directory: links planted under guessable names in the parent are never followed', () => {
    const parent = spillParent();
    const victim = join(parent, 'victim');
    writeFileSync(victim, 'precious\n');
    // Every name the old code could have used (pid + ms) and a few plausible others, all pointing at the victim.
    const planted = ['spill.ndjson', `tcab-nats-spill-${process.pid}-${Date.now()}.ndjson`, 'tcab-nats-spill-'];
    for (const name of planted) symlinkSync(victim, join(parent, name));
    const q = new SpillQueue(parent, 5);
    for (let i = 0; i < 20; i++) q.push(`{"i":${i}}`);
    const dir = join(q.spillPath!, '..');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(q.drain()).toHaveLength(20);
    q.dispose();
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(parent).sort()).toEqual([...planted, 'victim'].sort());
  });
});
