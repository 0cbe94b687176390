// The run page's event feed buffer, pure: items in stream-sequence order, each exactly once. The server resumes a
// reconnecting EventSource after Last-Event-ID; this is the browser's own guard, so a replayed batch that overlaps
// what is shown never draws an event twice.
import type { FeedItem } from '../../shared/console.ts';
import type { HarnessEventType } from '../../shared/events.ts';

export class FeedBuffer {
  readonly items: FeedItem[] = [];
  private readonly indexBySeq = new Map<number, number>();
  /** Events per type, for the view picker's counts. */
  readonly countByType = new Map<HarnessEventType, number>();
  lastSeq = 0;

  /** Appends the items newer than the last one held; returns how many were new. */
  add(items: readonly FeedItem[]): number {
    let added = 0;
    for (const item of items) {
      if (item.seq <= this.lastSeq) continue;
      this.indexBySeq.set(item.seq, this.items.length);
      this.items.push(item);
      this.lastSeq = item.seq;
      this.countByType.set(item.event.type, (this.countByType.get(item.event.type) ?? 0) + 1);
      added++;
    }
    return added;
  }

  /** Position of an event in the feed (deep links `#seq-<n>`), or -1 when it has not arrived. */
  indexOf(seq: number): number {
    return this.indexBySeq.get(seq) ?? -1;
  }
}

/** The feed's views: which event types each shows (all: every one). */
export const FEED_VIEWS = {
  all: { label: 'All events', types: null },
  tools: { label: 'Tool calls', types: ['command', 'read', 'write', 'search', 'list', 'skill'] },
  messages: { label: 'Messages and reasoning', types: ['agent', 'reasoning'] },
  subagents: { label: 'Subagents', types: ['orchestration'] },
  problems: { label: 'Warnings, errors, unknown output', types: ['warning', 'error', 'unknown'] },
  stages: { label: 'Stages', types: ['system'] },
} as const satisfies Record<string, { label: string; types: readonly HarnessEventType[] | null }>;
export type FeedViewName = keyof typeof FEED_VIEWS;

export function viewCount(feed: FeedBuffer, view: FeedViewName): number {
  const types = FEED_VIEWS[view].types;
  return types === null ? feed.items.length : types.reduce((sum, t) => sum + (feed.countByType.get(t) ?? 0), 0);
}

/**
 * The positions (in feed.items) of the events one view shows, extended incrementally: each call scans only the
 * items added since the last one, so a filtered view of a 100k-event feed costs O(new events) per batch.
 */
export class FeedFilter {
  readonly indexes: number[] = [];
  private scanned = 0;
  private readonly types: ReadonlySet<HarnessEventType>;
  constructor(types: readonly HarnessEventType[]) {
    this.types = new Set(types);
  }

  update(items: readonly FeedItem[]): number[] {
    for (; this.scanned < items.length; this.scanned++) if (this.types.has(items[this.scanned]!.event.type)) this.indexes.push(this.scanned);
    return this.indexes;
  }
}
