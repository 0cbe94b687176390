// The work queue's contract with a manual clock: dedupe, one reconcile per key at a time, bounded concurrency,
// requeue-after as a timer (earliest wins), backoff on errors and 409-style requeues, reset on success.
import { describe, expect, it } from 'vitest';
import { WorkQueue } from './work-queue.ts';
import type { Clock, ReconcileResult } from './work-queue.ts';

class ManualClock implements Clock {
  time = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  private next = 0;
  now = () => this.time;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.next;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  };
  clearTimeout = (handle: unknown) => void this.timers.delete(handle as number);
  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
    }
    this.time = until;
  }
  get pending(): number[] {
    return [...this.timers.values()].map((t) => t.at - this.time).sort((a, b) => a - b);
  }
}

/** A reconcile whose calls stay open until released, recording the order of keys. */
function gated() {
  const calls: string[] = [];
  const open = new Map<string, (r: ReconcileResult | Error) => void>();
  const reconcile = (key: string) => {
    calls.push(key);
    return new Promise<ReconcileResult>((resolve, reject) => open.set(key, (r) => (r instanceof Error ? reject(r) : resolve(r))));
  };
  const finish = async (key: string, r: ReconcileResult | Error = undefined) => {
    const release = open.get(key);
    if (!release) throw new Error(`${key} is not in flight`);
    open.delete(key);
    release(r);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { calls, open, reconcile, finish };
}

describe('WorkQueue', () => {
  it('dedupes a waiting key and runs a key added while in flight once more, never twice at once', async () => {
    const g = gated();
    const q = new WorkQueue(g.reconcile, { name: 't', concurrency: 1, clock: new ManualClock() });
    q.add('a');
    q.add('b');
    q.add('b'); // waiting already: one entry
    expect(g.calls).toEqual(['a']);
    q.add('a'); // in flight: marked, not run in parallel
    q.add('a');
    expect(q.stats).toMatchObject({ waiting: 1, inFlight: 1 });
    await g.finish('a');
    expect(g.calls).toEqual(['a', 'b']);
    await g.finish('b');
    expect(g.calls).toEqual(['a', 'b', 'a']); // the second and third add of 'a' collapsed into one rerun
    await g.finish('a');
    await q.idle();
    expect(q.stats).toEqual({ waiting: 0, inFlight: 0, timers: 0, failing: 0 });
  });

  it('keeps at most `concurrency` keys in flight', async () => {
    const g = gated();
    const q = new WorkQueue(g.reconcile, { name: 't', concurrency: 2, clock: new ManualClock() });
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    expect(g.calls).toEqual(['a', 'b']);
    await g.finish('b');
    expect(g.calls).toEqual(['a', 'b', 'c']);
    expect(q.stats.inFlight).toBe(2);
  });

  it('requeueAfter is a timer per key: the earliest wins, nothing runs before it is due', async () => {
    const clock = new ManualClock();
    const g = gated();
    const q = new WorkQueue(g.reconcile, { name: 't', concurrency: 4, clock });
    q.add('a');
    await g.finish('a', { requeueAfterMs: 1000 });
    q.addAfter('a', 5000); // later than the pending timer: ignored
    q.addAfter('a', 300); // earlier: replaces it
    expect(clock.pending).toEqual([300]);
    clock.advance(299);
    expect(g.calls).toEqual(['a']);
    clock.advance(1);
    expect(g.calls).toEqual(['a', 'a']);
    expect(q.stats.timers).toBe(0);
  });

  it('backs a failing key off exponentially (errors and `requeue`), and a success resets the streak', async () => {
    const clock = new ManualClock();
    const g = gated();
    const errors: string[] = [];
    const q = new WorkQueue(g.reconcile, { name: 't', concurrency: 1, clock, baseDelayMs: 10, maxDelayMs: 35, onError: (k, e) => errors.push(`${k}: ${(e as Error).message}`) });
    q.add('a');
    await g.finish('a', new Error('apiserver 500'));
    expect(errors).toEqual(['a: apiserver 500']);
    expect(clock.pending).toEqual([10]);
    clock.advance(10);
    await g.finish('a', { requeue: true }); // a 409: backoff, no error logged
    expect(clock.pending).toEqual([20]);
    clock.advance(20);
    await g.finish('a', new Error('again'));
    expect(clock.pending).toEqual([35]); // 40 capped at maxDelayMs
    clock.advance(35);
    await g.finish('a');
    expect(q.stats.failing).toBe(0);
    q.add('a');
    await g.finish('a', new Error('fresh streak'));
    expect(clock.pending).toEqual([10]);
    expect(errors).toHaveLength(3);
  });

  it('shutDown drops timers and waiting keys and waits for the reconcile in flight', async () => {
    const clock = new ManualClock();
    const g = gated();
    const q = new WorkQueue(g.reconcile, { name: 't', concurrency: 1, clock });
    q.add('a');
    q.add('b');
    q.addAfter('c', 100);
    let down = false;
    const stopping = q.shutDown().then(() => (down = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(down).toBe(false);
    await g.finish('a', { requeueAfterMs: 10 });
    await stopping;
    clock.advance(1000);
    q.add('d');
    expect(g.calls).toEqual(['a']);
    expect(q.stats).toEqual({ waiting: 0, inFlight: 0, timers: 0, failing: 0 });
  });
});
