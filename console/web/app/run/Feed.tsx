// The live event feed: virtualised (a long run has tens of thousands of events; only those in view are in the
// DOM), measured per event (heights vary), following the tail while the reader is at the bottom. A deep link
// `#seq-<n>` scrolls to that event once it has arrived, highlights and focuses it.
import { useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { FEED_VIEWS, FeedFilter, viewCount, type FeedViewName } from '../../feed.ts';
import { seqFromHash } from '../../routes.ts';
import { useVirtualizer } from '../virtual.ts';
import { EventView } from './EventView.tsx';
import type { RunStore } from './store.ts';

export function Feed({ store, startMs }: { store: RunStore; startMs: number | undefined }) {
  void store.feedVersion.value;
  const all = store.feed.items;
  const caughtUp = store.caughtUp.value;
  const scroller = useRef<HTMLDivElement>(null);
  // Which reasoning blocks the reader opened: kept outside the rows, which unmount when scrolled away.
  const opened = useMemo(() => new Set<number>(), []);
  const openVersion = useSignal(0);
  const target = useSignal(seqFromHash(location.hash));
  const highlighted = useSignal<number | undefined>(undefined);
  const missing = useSignal<number | undefined>(undefined);
  const view = useSignal<FeedViewName>('all');
  // One incremental filter per view, kept while the page lives (switching back costs nothing).
  const filters = useMemo(() => new Map<FeedViewName, FeedFilter>(), []);
  const types = FEED_VIEWS[view.value].types;
  let shown: number[] | null = null;
  if (types !== null) {
    const filter = filters.get(view.value) ?? new FeedFilter(types);
    filters.set(view.value, filter);
    shown = filter.update(all);
  }
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

  useEffect(() => {
    const onHash = () => (target.value = seqFromHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    const seq = target.value;
    if (seq === undefined) return;
    const position = store.feed.indexOf(seq);
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
  }, [all.length, target.value, caughtUp, view.value]);

  void openVersion.value;
  const onToggle = (seq: number, open: boolean) => {
    if (open === opened.has(seq)) return;
    if (open) opened.add(seq);
    else opened.delete(seq);
    openVersion.value++;
  };
  const virtualItems = virtual.getVirtualItems();
  const atEnd = count === 0 || virtual.isAtEnd(40);
  return (
    <div class="feed-wrap">
      <div class="feed-tools">
        <label for="feed-view">Show</label>
        <select id="feed-view" value={view.value} onChange={(e) => (view.value = e.currentTarget.value as FeedViewName)}>
          {(Object.keys(FEED_VIEWS) as FeedViewName[]).map((name) => (
            <option key={name} value={name}>
              {FEED_VIEWS[name].label} ({viewCount(store.feed, name).toLocaleString('en-US')})
            </option>
          ))}
        </select>
        {!caughtUp && all.length > 0 && (
          <span class="muted small" aria-hidden="true">
            replaying… {all.length.toLocaleString('en-US')} so far
          </span>
        )}
      </div>
      {missing.value !== undefined && (
        <p class="notice" role="alert">
          Event #{missing.value} is not in this run's feed.
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
        <div class="feed-inner" style={{ height: `${virtual.getTotalSize()}px` }}>
          {virtualItems.map((v) => {
            const item = itemAt(v.index);
            return (
              <div key={item.seq} class="feed-row" data-index={v.index} ref={virtual.measureElement} style={{ transform: `translateY(${v.start}px)` }}>
                <EventView item={item} index={v.index} count={count} startMs={startMs} highlighted={highlighted.value === item.seq} open={opened.has(item.seq)} onToggle={onToggle} />
              </div>
            );
          })}
        </div>
      </div>
      {!atEnd && (
        <button type="button" class="jump" onClick={() => virtual.scrollToEnd()}>
          Jump to latest ↓
        </button>
      )}
    </div>
  );
}
