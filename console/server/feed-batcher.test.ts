import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RUN_MESSAGES } from '../../shared/console.ts';
import type { RunResult } from '../../shared/run.ts';
import { FLUSH_MS, FeedBatcher, MAX_BATCH } from './feed-batcher.ts';
import type { StreamedEvent } from './sources.ts';

const ev = (seq: number, runSeq = seq): StreamedEvent => ({ runId: 'n_r', seq, runSeq, at: '2026-12-05T04:00:00.000Z', event: { type: 'agent', timestamp: '2026-12-05T04:00:00.000Z', message: `m${seq}` } });
type Sent = { message: string; data: unknown; id?: number };

let sent: Sent[];
const batcher = (after = 0) => new FeedBatcher((message, data, id) => sent.push({ message, data, id }), after);
beforeEach(() => {
  sent = [];
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe('FeedBatcher', () => {
  it('sends what arrived within FLUSH_MS as one `events` message with the last sequence as its id', () => {
    const b = batcher();
    b.add([ev(1)]);
    b.add([ev(2), ev(3)]);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.message).toBe('events');
    expect(sent[0]!.id).toBe(3);
    expect(RUN_MESSAGES.events.parse(sent[0]!.data).items.map((i) => i.seq)).toEqual([1, 2, 3]);
  });

  it('one event alone goes as `event`; a lifecycle event (Tcab-Seq 0) has no runSeq', () => {
    const b = batcher();
    b.add([ev(4, 0)]);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(sent[0]).toMatchObject({ message: 'event', id: 4 });
    expect(RUN_MESSAGES.event.parse(sent[0]!.data)).not.toHaveProperty('runSeq');
  });

  it('never sends a sequence at or below the resume point or one already sent (a redelivery)', () => {
    const b = batcher(10);
    b.add([ev(9), ev(10), ev(11)]);
    vi.advanceTimersByTime(FLUSH_MS);
    b.add([ev(11), ev(12)]);
    vi.advanceTimersByTime(FLUSH_MS);
    const seqs = sent.flatMap((s) => (s.message === 'events' ? (s.data as { items: { seq: number }[] }).items.map((i) => i.seq) : [(s.data as { seq: number }).seq]));
    expect(seqs).toEqual([11, 12]);
  });

  it('flushes at MAX_BATCH without waiting', () => {
    const b = batcher();
    b.add(Array.from({ length: MAX_BATCH + 1 }, (_, i) => ev(i + 1)));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.id).toBe(MAX_BATCH);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(sent[1]).toMatchObject({ message: 'event', id: MAX_BATCH + 1 });
  });

  it('a result and caught-up flush the buffered events first, so the page sees stream order', () => {
    const b = batcher();
    b.add([ev(1), ev(2)]);
    b.result(3, { run_id: 'n_r' } as RunResult);
    b.caughtUp();
    expect(sent.map((s) => [s.message, s.id])).toEqual([['events', 2], ['result', 3], ['caught-up', undefined]]);
  });
});
