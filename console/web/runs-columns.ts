// The runs table's columns and their widths, pure (no DOM) so the arithmetic of "every column fits at 1280 px" is
// unit-tested. Fixed columns hold values of a known shape (badges, clocks, numbers) at a pixel width; the three
// free-text columns (Run, Model, Activity) share what is left and cut their text with an ellipsis (title = full).
import type { SortKey } from './runs-view.ts';

export interface RunsColumn {
  label: string;
  sort?: SortKey;
  class: string;
  /** Pixels (cell padding included); none = a free-text column sharing the rest of the table's width. */
  width?: number;
}

export const RUNS_COLUMNS: readonly RunsColumn[] = [
  { label: 'Run', sort: 'name', class: 'c-name' },
  { label: 'Harness', sort: 'harness', class: 'c-harness', width: 96 },
  { label: 'Model', sort: 'model', class: 'c-model' },
  // "Running" + the "stalled" badge; "Dispatched".
  { label: 'Phase', sort: 'phase', class: 'c-phase', width: 140 },
  // "infrastructure failed", the longest outcome.
  { label: 'Outcome', sort: 'outcome', class: 'c-outcome', width: 148 },
  { label: 'Started', sort: 'started', class: 'c-started', width: 84 },
  { label: 'Duration', sort: 'duration', class: 'c-num', width: 84 },
  { label: 'Activity', class: 'c-activity' },
  { label: 'Idle', sort: 'idle', class: 'c-num', width: 68 },
  { label: 'Tokens', sort: 'tokens', class: 'c-num', width: 76 },
  // Headers wrap between words: "Comparable" (12 px bold) + the sort arrow is the widest line.
  { label: 'Actual cost', sort: 'actualCost', class: 'c-num c-cost', width: 100 },
  { label: 'Comparable cost', sort: 'comparableCost', class: 'c-num c-cost', width: 100 },
];

/** The narrowest a free-text column gets before the table stops shrinking (and scrolls sideways instead). */
export const MIN_FREE_COLUMN_PX = 110;

/** Below this width the table keeps it and its container scrolls horizontally (the header row scrolls with it). */
export const RUNS_TABLE_MIN_WIDTH = RUNS_COLUMNS.reduce((sum, c) => sum + (c.width ?? MIN_FREE_COLUMN_PX), 0);

/** Width around the table in a window: main's padding (2 x 16), the scroller's border (2 x 1), a classic scrollbar. */
export const RUNS_TABLE_CHROME_PX = 32 + 2 + 17;

/** Whether a window this wide shows every column without horizontal scrolling. */
export const runsTableFits = (windowWidth: number) => windowWidth - RUNS_TABLE_CHROME_PX >= RUNS_TABLE_MIN_WIDTH;
