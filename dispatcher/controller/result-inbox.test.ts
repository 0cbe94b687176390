// The result inbox keeps a run id's results in arrival order (first result wins: a second result arriving before the
// first is written must not replace it) and acks each exactly once.
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/run.ts';
import { ResultInbox, UNKNOWN_RESULT_HOLD_MS } from './run-memory.ts';
import type { Clock } from './work-queue.ts';

/** A clock whose one timer fires when told. */
function manualClock() {
  let time = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let next = 0;
  const clock: Clock = {
    now: () => time,
    setTimeout: (fn, ms) => (timers.set(++next, { at: time + ms, fn }), next),
    clearTimeout: (handle) => void timers.delete(handle as number),
  };
  const advance = (ms: number) => {
    time += ms;
    for (const [id, t] of [...timers]) {
      if (t.at > time) continue;
      timers.delete(id);
      t.fn();
    }
  };
  return { clock, advance };
}

const result = (message: string) => ({ message }) as RunResult;

describe('ResultInbox', () => {
  it('hands out a run id\'s results first come first, acking each once as it is settled', () => {
    const inbox = new ResultInbox(manualClock().clock);
    const acked: string[] = [];
    inbox.put('ns_a', result('first'), () => acked.push('first'), false);
    inbox.put('ns_a', result('second'), () => acked.push('second'), false);
    inbox.put('ns_b', result('other'), () => acked.push('other'), false);
    expect(inbox.size).toBe(3);
    expect(inbox.get('ns_a')?.result.message).toBe('first');
    inbox.settle('ns_a');
    expect(acked).toEqual(['first']);
    expect(inbox.get('ns_a')?.result.message).toBe('second');
    inbox.settle('ns_a');
    inbox.settle('ns_a'); // nothing left: no second ack
    expect(acked).toEqual(['first', 'second']);
    expect(inbox.get('ns_a')).toBeUndefined();
    expect(inbox.runIds()).toEqual(['ns_b']);
    expect(inbox.size).toBe(1);
  });

  it('lets every result of a run id with no Run go after the hold', () => {
    const { clock, advance } = manualClock();
    const inbox = new ResultInbox(clock);
    const acked: string[] = [];
    inbox.put('elsewhere_x', result('one'), () => acked.push('one'), true);
    advance(1000);
    inbox.put('elsewhere_x', result('two'), () => acked.push('two'), true);
    expect(inbox.holdLeft('elsewhere_x')).toBe(UNKNOWN_RESULT_HOLD_MS - 1000);
    advance(UNKNOWN_RESULT_HOLD_MS - 1001);
    expect(acked).toEqual([]);
    advance(1);
    expect(acked).toEqual(['one', 'two']);
    expect(inbox.size).toBe(0);
  });
});
