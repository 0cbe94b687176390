// The runs table: a real <table> (scoped headers, aria-sort, aria-rowcount/rowindex) whose body renders only the
// rows in view between two spacer rows. Rows are one line high and fixed, so no row is ever measured.
import type { Signal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { RunRow } from '../../../../shared/console.ts';
import { DASH, formatCheck, formatClockShort, formatCost, formatCount, formatDuration, formatIdle, totalTokens } from '../../format.ts';
import { runPath } from '../../routes.ts';
import { runsColumns, runsTableMinWidth, type RunsColumn } from '../../runs-columns.ts';
import { shownActivity } from '../../run-activity.ts';
import { durationText } from '../../run-times.ts';
import { idleSeconds, isFinal, type RunSort, type SortKey } from '../../runs-view.ts';
import { serverNow } from '../clock.ts';
import { OutcomeBadge, PhaseBadge } from '../common.tsx';
import { navigate } from '../router.ts';
import { useVirtualizer } from '../virtual.ts';

const ROW_HEIGHT = 36;
/** Where the table was scrolled, per view (query string): coming back from a run lands where the operator left. */
const scrollMemory = new Map<string, number>();

/** `checks`: some run has a check verdict, so the table has its Check column (runs-columns.ts). */
export function RunsTable({ rows, sort, stalledAfterSeconds, ready, checks }: { rows: RunRow[]; sort: Signal<RunSort>; stalledAfterSeconds: number; ready: boolean; checks: boolean }) {
  const columns = runsColumns(checks);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (i) => rows[i]!.key,
    paddingStart: ROW_HEIGHT,
    overscan: 10,
  });
  const restored = useRestoredScroll(scroller, ready, rows.length);
  const items = virtual.getVirtualItems();
  const top = items.length ? items[0]!.start - ROW_HEIGHT : 0;
  const bottom = items.length ? virtual.getTotalSize() - items[items.length - 1]!.end : 0;

  const toggle = (key: SortKey) => (sort.value = nextSort(sort.value, key));
  const open = (row: RunRow) => navigate(runPath(row.namespace, row.name));
  const moveFocus = (index: number) => focusRow(scroller, virtual, rows.length, index);

  return (
    <div class="table-scroll runs-scroll" ref={scroller} onScroll={(e) => restored.current && scrollMemory.set(location.search, e.currentTarget.scrollTop)}>
      <table class="runs" aria-label="Runs" aria-rowcount={rows.length + 1} style={{ minWidth: `${runsTableMinWidth(columns)}px` }}>
        <colgroup>
          {columns.map((c) => (
            <col key={c.label} style={c.width ? { width: `${c.width}px` } : undefined} />
          ))}
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            {columns.map((c) => (
              <ColumnHeader key={c.label} column={c} sort={sort.value} onSort={toggle} />
            ))}
          </tr>
        </thead>
        <tbody>
          {top > 0 && <tr aria-hidden="true" class="spacer" style={{ height: `${top}px` }} />}
          {items.map((item) => {
            const row = rows[item.index]!;
            return <Row key={row.key} row={row} index={item.index} stalledAfterSeconds={stalledAfterSeconds} checks={checks} onOpen={open} onMove={moveFocus} />;
          })}
          {bottom > 0 && <tr aria-hidden="true" class="spacer" style={{ height: `${bottom}px` }} />}
          {ready && rows.length === 0 && (
            <tr>
              <td colSpan={columns.length} class="empty">
                No runs match.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Puts the table back where this view (query string) was left, once its rows are first there. The ref is true from
 * then on: only scrolling after the restore is remembered.
 */
function useRestoredScroll(scroller: { current: HTMLDivElement | null }, ready: boolean, count: number): { current: boolean } {
  const restored = useRef(false);
  useLayoutEffect(() => {
    const saved = scrollMemory.get(location.search);
    if (restored.current || !ready || count === 0 || !scroller.current) return;
    restored.current = true;
    if (saved) scroller.current.scrollTop = saved;
  }, [ready, count]);
  return restored;
}

/** The sort after a click on `key`'s header: the same key flips direction; a new one starts A-Z for text, else highest first. */
function nextSort(s: RunSort, key: SortKey): RunSort {
  return s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: key === 'name' || key === 'harness' || key === 'model' ? 'asc' : 'desc' };
}

/** Focuses row `index` (past the end: the last row; before the first: nothing). */
function focusRow(scroller: { current: HTMLDivElement | null }, virtual: ReturnType<typeof useVirtualizer>, count: number, index: number): void {
  if (index < 0) return;
  index = Math.min(index, count - 1);
  const row = () => scroller.current?.querySelector<HTMLElement>(`tr[data-index="${index}"]`);
  // The overscan rows are in the DOM already: focus moves at once (the browser scrolls it into view); a row
  // further away is scrolled to first and focused once drawn.
  const drawn = row();
  if (drawn) return drawn.focus();
  virtual.scrollToIndex(index, { align: 'auto' });
  requestAnimationFrame(() => row()?.focus());
}

/** A column's header: a sort button with its direction (and aria-sort) where the column sorts, else its label. */
function ColumnHeader({ column: c, sort, onSort }: { column: RunsColumn; sort: RunSort; onSort: (key: SortKey) => void }) {
  const sorted = c.sort && sort.key === c.sort ? (sort.dir === 'asc' ? 'ascending' : 'descending') : c.sort ? 'none' : undefined;
  return (
    <th scope="col" class={c.class} aria-sort={sorted}>
      {c.sort ? (
        <button type="button" class="sort" onClick={() => onSort(c.sort!)}>
          {c.label}
          <span aria-hidden="true" class="arrow">
            {sorted === 'ascending' ? '▲' : sorted === 'descending' ? '▼' : ''}
          </span>
        </button>
      ) : (
        c.label
      )}
    </th>
  );
}

/** Row keyboard moves (the table is one tab stop per row; arrows, pages and Home/End move between rows). */
const ROW_KEYS: Record<string, (index: number) => number> = {
  ArrowDown: (i) => i + 1,
  ArrowUp: (i) => i - 1,
  PageDown: (i) => i + 15,
  PageUp: (i) => Math.max(0, i - 15),
  Home: () => 0,
  End: () => Number.MAX_SAFE_INTEGER,
};

function Row({ row, index, stalledAfterSeconds, checks, onOpen, onMove }: { row: RunRow; index: number; stalledAfterSeconds: number; checks: boolean; onOpen: (r: RunRow) => void; onMove: (i: number) => void }) {
  // Reading the clock here re-renders only the rows on screen once a second.
  const now = serverNow.value;
  const idle = idleSeconds(row, now);
  const stalled = idle !== undefined && idle >= stalledAfterSeconds;
  const tokens = totalTokens(row.tokens);
  const t = row.tokens;
  const activity = shownActivity(row);
  return (
    <tr
      tabIndex={0}
      data-index={index}
      data-key={row.key}
      data-phase={row.phase}
      data-stalled={stalled ? 'true' : undefined}
      aria-rowindex={index + 2}
      class={stalled ? 'stalled-row' : undefined}
      onClick={(e) => !(e.target as Element).closest('a') && onOpen(row)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') return onOpen(row);
        const to = ROW_KEYS[e.key]?.(index);
        if (to === undefined) return;
        e.preventDefault();
        onMove(to);
      }}
    >
      <th scope="row" class="c-name">
        {/* The egress profile as a badge in the free-text Run column (a column of its own does not fit 1280 px,
            runs-columns.ts): the name gives way to it, so the badge always shows. */}
        <span class="name-line">
          <a href={runPath(row.namespace, row.name)} tabIndex={-1} title={row.key}>
            <span class="ns">{row.namespace}/</span>
            {row.name}
          </a>
          {row.egress && (
            <span class="badge egress" title={`egress profile: ${row.egress}`} data-egress={row.egress}>
              {row.egress}
            </span>
          )}
          {row.attempt !== undefined && (
            <span class="badge attempt" title={`attempt ${row.attempt}: an earlier attempt failed on infrastructure and was retried`} data-attempt={row.attempt}>
              #{row.attempt}
            </span>
          )}
        </span>
      </th>
      <td class="c-harness" title={row.harness}>
        {row.harness}
      </td>
      <td class="c-model" title={row.model}>
        {row.model}
      </td>
      <td class="c-phase">
        <PhaseBadge phase={row.phase} stalled={stalled} />
      </td>
      <td class="c-outcome" title={[row.outcome?.replace(/_/g, ' '), row.message].filter(Boolean).join(': ') || undefined}>
        <OutcomeBadge outcome={row.outcome} />
      </td>
      {checks && <CheckCell check={row.check} />}
      <td class="c-started" title={row.startedAt ?? row.createdAt}>
        {formatClockShort(row.startedAt ?? row.createdAt, now)}
      </td>
      <td class="c-num">{durationText(row, now)}</td>
      <td class="c-activity" title={activity?.title}>
        {activity ? <span class={`act act-${activity.kind}`}>{activity.text}</span> : <span class="muted">{row.phase === 'Pending' ? 'queued' : DASH}</span>}
      </td>
      {/* A finished run has no idle time (not an unknown one): blank, not a dash. */}
      <td class={`c-num${stalled ? ' stalled-text' : ''}`}>{isFinal(row) ? '' : formatIdle(idle)}</td>
      <td class="c-num" title={t ? `input ${t.input ?? 'n/a'} · output ${t.output ?? 'n/a'} · cache read ${t.cache_read ?? 'n/a'} · cache write ${t.cache_write ?? 'n/a'}` : undefined}>
        {formatCount(tokens)}
      </td>
      <td class="c-num c-cost">{formatCost(row.actualCostUsd)}</td>
      <td class="c-num c-cost">{formatCost(row.comparableCostUsd)}</td>
    </tr>
  );
}

/** The check's verdict and reward; the exit code and duration in its title (its output: the run page). */
function CheckCell({ check }: { check: RunRow['check'] }) {
  if (!check) return <td class="c-check muted">{DASH}</td>;
  const verdict = check.passed ? 'passed' : 'failed';
  const title = [`check ${verdict}`, `exit ${check.exitCode ?? 'none (killed or did not start)'}`, check.reward !== null && `reward ${check.reward}`, formatDuration(check.durationMs)];
  return (
    <td class="c-check" data-check={verdict} title={title.filter(Boolean).join(' · ')}>
      <span class={check.passed ? 'ok-text' : 'fail-text'}>{formatCheck(check)}</span>
    </td>
  );
}
