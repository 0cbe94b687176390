import { describe, expect, it } from 'vitest';
import { PendingCalls } from './pending-calls.ts';

describe('PendingCalls', () => {
  it('pairs a call with its result and forgets both', () => {
    const calls = new PendingCalls<string, string>();
    expect(calls.open('a', 'call a')).toEqual({});
    expect(calls.close('a', 'result a')).toEqual({ call: 'call a' });
    expect(calls.drain()).toEqual({ calls: [], results: [] });
  });

  it('a call under a pending id displaces the pending one, which is handed back', () => {
    const calls = new PendingCalls<string, string>();
    calls.open('T1', 'rm -rf /important');
    expect(calls.open('T1', 'echo harmless')).toEqual({ displaced: 'rm -rf /important' });
    expect(calls.close('T1', 'ok')).toEqual({ call: 'echo harmless' });
  });

  it('a result before its call is held and paired once: a later call with the id is a new call', () => {
    const calls = new PendingCalls<string, string>();
    expect(calls.close('a', 'early')).toEqual({});
    expect(calls.open('a', 'call a')).toEqual({ result: 'early' });
    expect(calls.open('a', 'again')).toEqual({});
    expect(calls.drain()).toEqual({ calls: ['again'], results: [] });
  });

  it('a second early result displaces the first; drain hands back what was never paired, in arrival order', () => {
    const calls = new PendingCalls<string, string>();
    calls.open('x', 'call x');
    calls.close('r', 'first');
    expect(calls.close('r', 'second')).toEqual({ displaced: 'first' });
    calls.open('y', 'call y');
    expect(calls.drain()).toEqual({ calls: ['call x', 'call y'], results: ['second'] });
    expect(calls.drain()).toEqual({ calls: [], results: [] });
  });

  it('update replaces only a pending call', () => {
    const calls = new PendingCalls<string, string>();
    expect(calls.update('a', 'progress')).toBe(false);
    calls.open('a', 'started');
    expect(calls.update('a', 'progress')).toBe(true);
    expect(calls.pending('a')).toBe('progress');
  });

  it('remembers answered calls, the most recent 1024, so a repeat after the result can be recognised', () => {
    const calls = new PendingCalls<string, string>();
    calls.open('a', 'call a');
    calls.close('a', 'ok');
    calls.close('b', 'early');
    calls.open('b', 'call b');
    expect([calls.answeredCall('a'), calls.answeredCall('b'), calls.answeredCall('c')]).toEqual(['call a', 'call b', undefined]);
    for (let i = 0; i < 1024; i++) {
      calls.open(`x${i}`, 'x');
      calls.close(`x${i}`, 'ok');
    }
    expect([calls.answeredCall('a'), calls.answeredCall('b'), calls.answeredCall('x1023')]).toEqual([undefined, undefined, 'x']);
  });

  it('remembers a re-answered id by its latest answer, and nothing when told to remember no answers', () => {
    const calls = new PendingCalls<string, string>({ rememberAnswers: 2 });
    for (const [id, call] of [['a', 'first a'], ['b', 'b'], ['a', 'second a'], ['c', 'c']]) {
      calls.open(id!, call!);
      calls.close(id!, 'ok');
    }
    // The ring holds [a (second), c]: b fell out; a's first slot was reused without forgetting its second answer.
    expect([calls.answeredCall('a'), calls.answeredCall('b'), calls.answeredCall('c')]).toEqual(['second a', undefined, 'c']);
    const none = new PendingCalls<string, string>({ rememberAnswers: 0 });
    none.open('a', 'call a');
    expect(none.close('a', 'ok')).toEqual({ call: 'call a' });
    expect(none.answeredCall('a')).toBeUndefined();
  });

  it('flush: unanswered calls through the adapter (which may report nothing), then unclaimed results as unknown, in arrival order; then empty', () => {
    const calls = new PendingCalls<{ name: string }, { block: Record<string, unknown> }>();
    calls.open('1', { name: 'Bash' });
    calls.open('2', { name: 'Task' });
    calls.open('3', { name: 'Read' });
    calls.close('9', { block: { type: 'tool_result', tool_use_id: '9' } });
    const out = calls.flush(
      [{ type: 'agent', message: 'before' }],
      (call, events) => {
        if (call.name !== 'Task') events.push({ type: 'warning', message: `${call.name} never finished` });
      },
      (result) => result.block,
    );
    expect(out).toEqual([
      { type: 'agent', message: 'before' },
      { type: 'warning', message: 'Bash never finished' },
      { type: 'warning', message: 'Read never finished' },
      { type: 'unknown', raw: { type: 'tool_result', tool_use_id: '9' } },
    ]);
    expect(calls.flush([], () => expect.unreachable(), () => expect.unreachable())).toEqual([]);
  });
});
