// The live board of `tcab eval run` on a terminal: the whole evaluation and each cell, from the same summary the
// table and the status are made of; the time left at the pace so far, unknown before a run ended.
import { describe, expect, it } from 'vitest';
import { summarizeEvaluation } from '../../../shared/evaluation/summary.ts';
import { InlineEvaluationSpec } from '../../../shared/evaluation/schema.ts';
import { finishedSlot, pendingSlot } from '../../../shared/evaluation/slot-states.test-support.ts';
import { etaMs, formatBoard, formatEta } from './live-board.ts';

const spec = InlineEvaluationSpec.parse({ matrix: [{ harness: 'claude', models: ['sonnet'] }, { harness: 'codex', models: ['gpt-5'] }], testCases: [{ name: 'a', prompt: 'a' }, { name: 'b', prompt: 'b' }], repeats: 1 });

describe('live board', () => {
  it('the pace so far gives the time left; nothing done, no estimate; nothing left, zero', () => {
    expect(etaMs(60_000, 3, 6)).toBe(120_000);
    expect(etaMs(60_000, 0, 6)).toBeUndefined();
    expect(etaMs(60_000, 6, 0)).toBe(0);
    expect([formatEta(42_000), formatEta(187_000), formatEta(3_900_000), formatEta(-5)]).toEqual(['42s', '3m07s', '1h05m', '0s']);
  });

  it('a line for the whole evaluation, then one per cell: done/total, passed/scored, cost so far, ETA or done', () => {
    const status = summarizeEvaluation(spec, [
      finishedSlot('claude', 'sonnet', 'a', 'succeeded', { passed: true }, { cost: 0.25 }),
      finishedSlot('claude', 'sonnet', 'b', 'succeeded', { passed: false }, { cost: 0.5 }),
      finishedSlot('codex', 'gpt-5', 'a', 'succeeded', { passed: true }, { cost: null }),
      pendingSlot('codex', 'gpt-5', 'b'),
    ]);
    const lines = formatBoard(status, 90_000, { color: false });
    expect(lines).toEqual([
      'all                    3/4      2/3 passed          $–  ETA 30s  (1m30s so far)', // a run without a cost: the sum is unknown
      'claude × sonnet        2/2      1/2 passed     $0.7500  done',
      'codex × gpt-5          1/2      1/1 passed          $–  ETA 30s',
    ]);
  });

  it('before any run ended: every count 0, no estimate', () => {
    const status = summarizeEvaluation(spec, ['a', 'b'].flatMap((t) => [pendingSlot('claude', 'sonnet', t), pendingSlot('codex', 'gpt-5', t)]));
    const lines = formatBoard(status, 5_000, { color: false });
    expect(lines[0]).toBe('all                    0/4      0/0 passed          $–  ETA –  (5s so far)');
    expect(lines.slice(1).every((l) => l.endsWith('ETA –'))).toBe(true);
  });
});
