// The live event feed: virtualised (a long run has tens of thousands of events; only those in view are in the
// DOM), measured per event (heights vary), following the tail while the reader is at the bottom. A deep link
// `#seq-<n>` scrolls to that event once it has arrived, highlights and focuses it.
import { useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { seqFromHash } from '../../routes.ts';
import { useVirtualizer } from '../virtual.ts';
import { EventView } from './EventView.tsx';
import type { RunStore } from './store.ts';

export function Feed({ store, startMs }: { store: RunStore; startMs: number | undefined }) {
  void store.feedVersion.value;
  const items = store.feed.items;
  const caughtUp = store.caughtUp.value;
  const scroller = useRef<HTMLDivElement>(null);
  // Which reasoning blocks the reader opened: kept outside the rows, which unmount when scrolled away.
  const opened = useMemo(() => new Set<number>(), []);
  const openVersion = useSignal(0);
  const target = useSignal(seqFromHash(location.hash));
  const highlighted = useSignal<number | undefined>(undefined);
  const missing = useSignal<number | undefined>(undefined);

  const virtual = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 52,
    getItemKey: (i) => items[i]!.seq,
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
    const index = store.feed.indexOf(seq);
    if (index < 0) {
      missing.value = caughtUp ? seq : undefined;
      return;
    }
    target.value = undefined;
    missing.value = undefined;
    highlighted.value = seq;
    virtual.scrollToIndex(index, { align: 'center' });
    // Focus once the row is drawn where the scroll put it (measurement can take a frame).
    requestAnimationFrame(() => requestAnimationFrame(() => document.getElementById(`seq-${seq}`)?.focus({ preventScroll: true })));
  }, [items.length, target.value, caughtUp]);

  void openVersion.value;
  const onToggle = (seq: number, open: boolean) => {
    if (open === opened.has(seq)) return;
    if (open) opened.add(seq);
    else opened.delete(seq);
    openVersion.value++;
  };
  const virtualItems = virtual.getVirtualItems();
  const atEnd = items.length === 0 || virtual.isAtEnd(40);
  return (
    <div class="feed-wrap">
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
        data-count={items.length}
        data-last-seq={store.feed.lastSeq}
      >
        {items.length === 0 && <p class="muted empty">{caughtUp ? 'No events yet.' : 'Loading events…'}</p>}
        <div class="feed-inner" style={{ height: `${virtual.getTotalSize()}px` }}>
          {virtualItems.map((v) => {
            const item = items[v.index]!;
            return (
              <div key={item.seq} class="feed-row" data-index={v.index} ref={virtual.measureElement} style={{ transform: `translateY(${v.start}px)` }}>
                <EventView item={item} index={v.index} count={items.length} startMs={startMs} highlighted={highlighted.value === item.seq} open={opened.has(item.seq)} onToggle={onToggle} />
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
