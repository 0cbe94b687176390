// pollUntil (poll.ts): the first value that is not "not yet", a deadline that holds even against a probe that hangs,
// and a failure that names what it waited for with the last error or value.
import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll.ts';

describe('pollUntil', () => {
  it('resolves with the first value that is not undefined, null or false (0 counts), after errors that count as not yet', async () => {
    const answers = [undefined, null, false, new Error('not up'), 0];
    let calls = 0;
    const value = await pollUntil('zero', () => {
      const a = answers[calls++];
      if (a instanceof Error) throw a;
      return a;
    }, { timeoutMs: 5000, intervalMs: 1 });
    expect(value).toBe(0);
    expect(calls).toBe(5);
  });

  it('times out naming what it waited for and the last error (as the cause)', async () => {
    const failure = await pollUntil('the server', () => Promise.reject(new Error('connection refused')), { timeoutMs: 50, intervalMs: 5 }).catch((e: Error) => e);
    expect((failure as Error).message).toBe('timed out after 50 ms waiting for the server; last error: connection refused');
    expect(((failure as Error).cause as Error).message).toBe('connection refused');
  });

  it('names the last value, and the detail', async () => {
    await expect(pollUntil('3 items', () => (['a'].length === 3 ? true : null), { timeoutMs: 20, intervalMs: 5, detail: () => 'see x.log' })).rejects.toThrow(/^timed out after 20 ms waiting for 3 items; last value: null; see x\.log$/);
  });

  it('holds its deadline against a probe that never settles, and aborts the probe\'s signal', async () => {
    let signal: AbortSignal | undefined;
    const began = Date.now();
    await expect(pollUntil('a hang', (poll) => ((signal = poll.signal), new Promise<boolean>(() => undefined)), { timeoutMs: 50 })).rejects.toThrow('timed out after 50 ms waiting for a hang; the last probe was still running');
    expect(Date.now() - began).toBeLessThan(1000);
    expect(signal?.aborted).toBe(true);
  });

  it('ends at once on an error retryIf refuses, or when giveUp names a reason', async () => {
    let calls = 0;
    await expect(pollUntil('x', () => (calls++, Promise.reject(new Error('forbidden'))), { timeoutMs: 5000, retryIf: () => false })).rejects.toThrow(/^forbidden$/);
    expect(calls).toBe(1);
    await expect(pollUntil('x to listen', () => false, { timeoutMs: 5000, giveUp: () => 'x exited (1)', detail: () => 'see x.log' })).rejects.toThrow(/^x exited \(1\) before x to listen; see x\.log$/);
  });
});
