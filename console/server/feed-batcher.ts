// Batches one run's feed into SSE messages: events that arrive within FLUSH_MS (or MAX_BATCH of them) go out as
// one `events` message whose id is the last sequence in it; one alone goes as `event`. A result or caught-up first
// flushes what is buffered, so the page sees everything in stream order. Sequences at or below the last one sent
// are dropped: a feed source that redelivers (an ordered consumer's reset) never shows an event twice.
import type { FeedItem } from '../../shared/console.ts';
import type { RunResult } from '../../shared/run.ts';
import type { StreamedEvent } from './sources.ts';

/** Adds at most this much latency to an event; at 1,000 events/s a batch holds ~25. */
export const FLUSH_MS = 25;
export const MAX_BATCH = 500;

export type Send = (message: 'event' | 'events' | 'result' | 'caught-up', data: unknown, id?: number) => void;

export function feedItem(e: StreamedEvent): FeedItem {
  const item: FeedItem = { seq: e.seq, at: e.at, event: e.event };
  if (e.runSeq > 0) item.runSeq = e.runSeq;
  if (e.invalid) item.invalid = e.invalid;
  return item;
}

export class FeedBatcher {
  private buffer: FeedItem[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastSent = 0;

  private readonly send: Send;

  constructor(send: Send, after = 0) {
    this.send = send;
    this.lastSent = after;
  }

  add(events: StreamedEvent[]): void {
    for (const e of events) {
      const lastHeld = this.buffer.at(-1)?.seq ?? this.lastSent;
      if (e.seq <= lastHeld) continue;
      this.buffer.push(feedItem(e));
      if (this.buffer.length >= MAX_BATCH) this.flush();
    }
    if (this.buffer.length > 0) this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.buffer;
    if (items.length === 0) return;
    this.buffer = [];
    const last = items.at(-1)!.seq;
    if (items.length === 1) this.send('event', items[0], last);
    else this.send('events', { items }, last);
    this.lastSent = last;
  }

  result(seq: number, result: RunResult): void {
    this.flush();
    if (seq <= this.lastSent) return;
    this.send('result', { seq, result }, seq);
    this.lastSent = seq;
  }

  caughtUp(): void {
    this.flush();
    this.send('caught-up', {});
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
