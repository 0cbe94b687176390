// Runs: every Run, live (one SSE stream: a snapshot, then coalesced upserts/removes), filtered and sorted in the
// browser, virtualised so 10,000 rows cost the DOM only the ~40 on screen.
import { computed, signal } from '@preact/signals';
import { useEffect, useMemo } from 'preact/hooks';
import type { RunRow } from '../../../../shared/console.ts';
import { PATHS, PHASES } from '../../wire.ts';
import { facets, phaseCounts, viewFromQuery, viewToQuery, visibleRows, type RunFilter, type RunSort } from '../../runs-view.ts';
import { serverNow } from '../clock.ts';
import { StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { search } from '../router.ts';
import { useEventStream } from '../sse.ts';
import { RunsFilters } from './RunsFilters.tsx';
import { RunsTable } from './RunsTable.tsx';
import { RunsStore } from './store.ts';

export function RunsPage() {
  const page = useMemo(() => {
    const store = new RunsStore();
    const initial = viewFromQuery(search.peek());
    const filter = signal<RunFilter>(initial.filter);
    const sort = signal<RunSort>(initial.sort);
    // Idle and duration change every second: only a view that filters or sorts by them follows the clock.
    const clockBound = () => filter.value.stalledOnly || sort.value.key === 'idle' || sort.value.key === 'duration';
    const clock = () => ({ nowMs: clockBound() ? serverNow.value : serverNow.peek(), stalledAfterSeconds: store.stalledAfterSeconds.value });
    const visible = computed(() => {
      void store.version.value;
      return visibleRows(store.rows.values(), filter.value, sort.value, clock());
    });
    const options = computed(() => {
      void store.version.value;
      return facets(store.rows.values());
    });
    const counts = computed(() => {
      void store.version.value;
      return phaseCounts(store.rows.values(), { nowMs: serverNow.value, stalledAfterSeconds: store.stalledAfterSeconds.value });
    });
    return { store, filter, sort, visible, options, counts };
  }, []);
  const { store, filter, sort, visible, options, counts } = page;
  const state = useEventStream(PATHS.runsStream, store.handlers);
  useConsoleReady(store.ready.value);
  useTitle('Runs');

  // The view lives in the URL, so a filtered table is a link an operator can share.
  useEffect(() => {
    const query = viewToQuery(filter.value, sort.value);
    const path = `/runs${query ? `?${query}` : ''}`;
    if (location.pathname + location.search !== path) history.replaceState(null, '', path);
  }, [filter.value, sort.value]);

  const c = counts.value;
  return (
    <section aria-labelledby="runs-title" class="runs-page">
      <div class="page-head">
        <h1 id="runs-title">Runs</h1>
        <StreamStatus state={state.value} notice={store.notice.value} />
      </div>
      <p class="summary" data-total={c.total}>
        {store.ready.value ? (
          <>
            Showing <strong>{visible.value.length.toLocaleString('en-US')}</strong> of {c.total.toLocaleString('en-US')} runs
            {PHASES.filter((p) => c.byPhase[p]).map((p) => (
              <span key={p} class="count">
                {' · '}
                <button type="button" class="link" aria-pressed={filter.value.phase === p} onClick={() => (filter.value = { ...filter.value, phase: filter.value.phase === p ? '' : p })}>
                  {p} {c.byPhase[p]!.toLocaleString('en-US')}
                </button>
              </span>
            ))}
            {c.stalled > 0 && (
              <span class="count stalled-count">
                {' · '}
                <button type="button" class="link stalled-text" aria-pressed={filter.value.stalledOnly} onClick={() => (filter.value = { ...filter.value, stalledOnly: !filter.value.stalledOnly })}>
                  {c.stalled.toLocaleString('en-US')} stalled
                </button>
              </span>
            )}
          </>
        ) : (
          'Loading runs…'
        )}
      </p>
      <RunsFilters filter={filter} harnesses={options.value.harnesses} models={options.value.models} cellName={cellNameOf(store.rows.values(), filter.value.cell)} />
      <RunsTable rows={visible.value} sort={sort} stalledAfterSeconds={store.stalledAfterSeconds.value} ready={store.ready.value} checks={options.value.checks} />
    </section>
  );
}

/** "harness × model" of the cell a filter names, from a Run of it (undefined while none is known). */
function cellNameOf(rows: Iterable<RunRow>, cell: string): string | undefined {
  if (!cell) return undefined;
  for (const row of rows) if (row.cell === cell) return `${row.harness} × ${row.model}`;
  return undefined;
}
