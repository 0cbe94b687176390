// The live event feed: virtualised (a long run has tens of thousands of events; only those in view are in the
// DOM), measured per event (heights vary), following the tail while the reader is at the bottom. A deep link
// `#seq-<n>` scrolls to that event once it has arrived, highlights and focuses it.
import { useSignal, type Signal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { VirtualItem } from '@tanstack/virtual-core';
import type { FeedItem } from '../../../../shared/console.ts';
import { FEED_VIEWS, FeedFilter, viewCount, type FeedBuffer, type FeedViewName } from '../../feed.ts';
import { seqFromHash } from '../../routes.ts';
import { useVirtualizer } from '../virtual.ts';
import { EventView } from './EventView.tsx';
import type { RunStore } from './store.ts';

export function Feed({ store, startMs }: { store: RunStore; startMs: number | undefined }) {
  void store.feedVersion.value;
  const all = store.feed.items;
  const caughtUp = store.caughtUp.value;
  const scroller = useRef<HTMLDivElement>(null);
  const { opened, onToggle } = useOpenedBlocks();
  const link = useDeepLink();
  const view = useSignal<FeedViewName>('all');
  const shown = useViewFilter(store.feed, view.value);
  const count = shown ? shown.length : all.length;
  const itemAt = (i: number) => all[shown ? shown[i]! : i]!;

  const virtual = useVirtualizer({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: () => 52,
    getItemKey: (i) => itemAt(i).seq,
    overscan: 6,
    anchorTo: 'end',
    followOnAppend: true,
  });
  useLinkFromHash(link.target);
  useScrollToLinked(link, { feed: store.feed, shown, caughtUp, view, virtual });

  const virtualItems = virtual.getVirtualItems();
  const atEnd = count === 0 || virtual.isAtEnd(40);
  return (
    <div class="feed-wrap">
      <FeedTools feed={store.feed} view={view} caughtUp={caughtUp} />
      {link.missing.value !== undefined && (
        <p class="notice" role="alert">
          Event #{link.missing.value} is not in this run's feed.
        </p>
      )}
      <div
        ref={scroller}
        class="feed"
        role="feed"
        aria-label="Event feed"
        aria-busy={!caughtUp}
        tabIndex={0}
        data-caught-up={caughtUp ? 'true' : 'false'}
        data-count={all.length}
        data-view={view.value}
        data-last-seq={store.feed.lastSeq}
      >
        {count === 0 && <p class="muted empty">{!caughtUp ? 'Loading events…' : all.length === 0 ? 'No events yet.' : 'No events of this kind.'}</p>}
        <FeedRows virtual={virtual} items={virtualItems} itemAt={itemAt} count={count} startMs={startMs} highlighted={link.highlighted.value} opened={opened} onToggle={onToggle} />
      </div>
      {!atEnd && (
        <button type="button" class="jump" onClick={() => virtual.scrollToEnd()}>
          Jump to latest ↓
        </button>
      )}
    </div>
  );
}

type FeedVirtualizer = ReturnType<typeof useVirtualizer>;

/** Which reasoning blocks the reader opened: kept outside the rows, which unmount when scrolled away. */
function useOpenedBlocks() {
  const opened = useMemo(() => new Set<number>(), []);
  const openVersion = useSignal(0);
  // Read here so that a toggle re-renders the feed: the set itself is not a signal.
  void openVersion.value;
  const onToggle = (seq: number, open: boolean) => {
    if (open === opened.has(seq)) return;
    if (open) opened.add(seq);
    else opened.delete(seq);
    openVersion.value++;
  };
  return { opened, onToggle };
}

/** A deep link's state: the event still to scroll to, the one highlighted, and one the feed does not have. */
interface DeepLink {
  target: Signal<number | undefined>;
  highlighted: Signal<number | undefined>;
  missing: Signal<number | undefined>;
}

function useDeepLink(): DeepLink {
  const target = useSignal(seqFromHash(location.hash));
  const highlighted = useSignal<number | undefined>(undefined);
  const missing = useSignal<number | undefined>(undefined);
  return { target, highlighted, missing };
}

/** The positions in the feed the view shows, or null for every event (the "all" view). */
function useViewFilter(feed: FeedBuffer, view: FeedViewName): number[] | null {
  // One incremental filter per view, kept while the page lives (switching back costs nothing).
  const filters = useMemo(() => new Map<FeedViewName, FeedFilter>(), []);
  const types = FEED_VIEWS[view].types;
  if (types === null) return null;
  const filter = filters.get(view) ?? new FeedFilter(types);
  filters.set(view, filter);
  return filter.update(feed.items);
}

/** A link followed on this page (the hash changes) targets its event anew. */
function useLinkFromHash(target: Signal<number | undefined>): void {
  useEffect(() => {
    const onHash = () => (target.value = seqFromHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
}

/** Scrolls to the linked event once it has arrived, highlights and focuses it; says so when the feed lacks it. */
function useScrollToLinked(
  { target, highlighted, missing }: DeepLink,
  { feed, shown, caughtUp, view, virtual }: { feed: FeedBuffer; shown: number[] | null; caughtUp: boolean; view: Signal<FeedViewName>; virtual: FeedVirtualizer },
): void {
  useEffect(() => {
    const seq = target.value;
    if (seq === undefined) return;
    const position = feed.indexOf(seq);
    if (position < 0) {
      missing.value = caughtUp ? seq : undefined;
      return;
    }
    // A linked event the current view hides: show every event, then come back here on the next render.
    const index = shown ? shown.indexOf(position) : position;
    if (index < 0) {
      view.value = 'all';
      return;
    }
    target.value = undefined;
    missing.value = undefined;
    highlighted.value = seq;
    virtual.scrollToIndex(index, { align: 'center' });
    // Focus once the row is drawn where the scroll put it (measurement can take a frame).
    requestAnimationFrame(() => requestAnimationFrame(() => document.getElementById(`seq-${seq}`)?.focus({ preventScroll: true })));
  }, [feed.items.length, target.value, caughtUp, view.value]);
}

/** The events in view, each placed where the virtualiser measured it. */
function FeedRows({ virtual, items, itemAt, count, startMs, highlighted, opened, onToggle }: { virtual: FeedVirtualizer; items: VirtualItem[]; itemAt: (i: number) => FeedItem; count: number; startMs: number | undefined; highlighted: number | undefined; opened: ReadonlySet<number>; onToggle: (seq: number, open: boolean) => void }) {
  return (
    <div class="feed-inner" style={{ height: `${virtual.getTotalSize()}px` }}>
      {items.map((v) => {
        const item = itemAt(v.index);
        return (
          <div key={item.seq} class="feed-row" data-index={v.index} ref={virtual.measureElement} style={{ transform: `translateY(${v.start}px)` }}>
            <EventView item={item} index={v.index} count={count} startMs={startMs} highlighted={highlighted === item.seq} open={opened.has(item.seq)} onToggle={onToggle} />
          </div>
        );
      })}
    </div>
  );
}

/** The view picker, with each view's count, and how far the replay has got. */
function FeedTools({ feed, view, caughtUp }: { feed: FeedBuffer; view: Signal<FeedViewName>; caughtUp: boolean }) {
  return (
    <div class="feed-tools">
      <label for="feed-view">Show</label>
      <select id="feed-view" value={view.value} onChange={(e) => (view.value = e.currentTarget.value as FeedViewName)}>
        {(Object.keys(FEED_VIEWS) as FeedViewName[]).map((name) => (
          <option key={name} value={name}>
            {FEED_VIEWS[name].label} ({viewCount(feed, name).toLocaleString('en-US')})
          </option>
        ))}
      </select>
      {!caughtUp && feed.items.length > 0 && (
        <span class="muted small" aria-hidden="true">
          replaying… {feed.items.length.toLocaleString('en-US')} so far
        </span>
      )}
    </div>
  );
}
