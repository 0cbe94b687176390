// The run page's event feed buffer, pure: items in stream-sequence order, each exactly once. The server resumes a
// reconnecting EventSource after Last-Event-ID; this is the browser's own guard, so a replayed batch that overlaps
// what is shown never draws an event twice.
import type { FeedItem } from '../../shared/console.ts';

export class FeedBuffer {
  readonly items: FeedItem[] = [];
  private readonly indexBySeq = new Map<number, number>();
  lastSeq = 0;

  /** Appends the items newer than the last one held; returns how many were new. */
  add(items: readonly FeedItem[]): number {
    let added = 0;
    for (const item of items) {
      if (item.seq <= this.lastSeq) continue;
      this.indexBySeq.set(item.seq, this.items.length);
      this.items.push(item);
      this.lastSeq = item.seq;
      added++;
    }
    return added;
  }

  /** Position of an event in the feed (deep links `#seq-<n>`), or -1 when it has not arrived. */
  indexOf(seq: number): number {
    return this.indexBySeq.get(seq) ?? -1;
  }
}
