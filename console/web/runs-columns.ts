// The runs table's columns and their widths, pure (no DOM) so the arithmetic of "every column fits at 1280 px" is
// unit-tested. Fixed columns hold values of a known shape (badges, clocks, numbers) at a pixel width; the three
// free-text columns (Run, Model, Activity) share what is left and cut their text with an ellipsis (title = full).
// The Check column shows only where some run has a check verdict: 1280 px has no room for it (7 px to spare), and
// most runs have no test case check, so their table stays as it was.
import type { SortKey } from './runs-view.ts';

export interface RunsColumn {
  label: string;
  sort?: SortKey;
  class: string;
  /** Pixels (cell padding included); none = a free-text column sharing the rest of the table's width. */
  width?: number;
  /** Shown only when some run has a check verdict (runsColumns). */
  onlyWithChecks?: boolean;
}

export const RUNS_COLUMNS: readonly RunsColumn[] = [
  { label: 'Run', sort: 'name', class: 'c-name' },
  { label: 'Harness', sort: 'harness', class: 'c-harness', width: 90 },
  { label: 'Model', sort: 'model', class: 'c-model' },
  // "Starting" / "Running" + the "stalled" badge (measured 152 px in Chromium) + padding.
  { label: 'Phase', sort: 'phase', class: 'c-phase', width: 168 },
  // "infrastructure failed", the longest outcome's badge (135 px).
  { label: 'Outcome', sort: 'outcome', class: 'c-outcome', width: 152 },
  // "passed · 0.75" (estimated ~94 px at 14 px; not measured in Chromium yet), a reward cut to 2 decimals.
  { label: 'Check', sort: 'check', class: 'c-check', width: 112, onlyWithChecks: true },
  // "14:03:07", or "11-30 14:03" for another day (formatClockShort).
  { label: 'Started', sort: 'started', class: 'c-started', width: 84 },
  { label: 'Duration', sort: 'duration', class: 'c-num', width: 88 },
  { label: 'Activity', class: 'c-activity' },
  // "59m 59s", bold when stalled.
  { label: 'Idle', sort: 'idle', class: 'c-num', width: 86 },
  { label: 'Tokens', sort: 'tokens', class: 'c-num', width: 74 },
  // Headers wrap between words and the sort arrow (11 px) follows the last one; 12 px bold in Chromium: "Comparable"
  // 81 px, "Actual cost" 75, "Duration" 59 (+ arrow), with 16 px of cell padding.
  { label: 'Actual cost', sort: 'actualCost', class: 'c-num c-cost', width: 92 },
  { label: 'Comparable cost', sort: 'comparableCost', class: 'c-num c-cost', width: 100 },
];

/** The narrowest a free-text column gets before the table stops shrinking (and scrolls sideways instead). */
export const MIN_FREE_COLUMN_PX = 96;

/** The columns shown: the Check column only when some run has a check verdict. */
export const runsColumns = (checks: boolean): readonly RunsColumn[] => (checks ? RUNS_COLUMNS : RUNS_COLUMNS.filter((c) => !c.onlyWithChecks));

/** Below this width the table keeps it and its container scrolls horizontally (the header row scrolls with it). */
export const runsTableMinWidth = (columns: readonly RunsColumn[]) => columns.reduce((sum, c) => sum + (c.width ?? MIN_FREE_COLUMN_PX), 0);

/** The minimum width without the Check column: the table of runs that have no check. */
export const RUNS_TABLE_MIN_WIDTH = runsTableMinWidth(runsColumns(false));

/** Width around the table in a window: main's padding (2 x 16), the scroller's border (2 x 1), a classic scrollbar. */
export const RUNS_TABLE_CHROME_PX = 32 + 2 + 17;

/** Whether a window this wide shows every column without horizontal scrolling (with the Check column or without). */
export const runsTableFits = (windowWidth: number, checks = false) => windowWidth - RUNS_TABLE_CHROME_PX >= runsTableMinWidth(runsColumns(checks));
