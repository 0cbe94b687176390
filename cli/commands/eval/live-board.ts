// The live progress of `tcab eval run` on a terminal (issue 39): the whole evaluation and each cell (harness x
// model), done/total, passed/scored, cost so far and an estimate of the time left, redrawn in place as runs end and
// once a second (log-update), with each finished run's line printed above it. formatBoard is pure; the board is
// only the shell around it.
import logUpdate from 'log-update';
import pc from 'picocolors';
import type { EvaluationStatus } from '../../../shared/evaluation/schema.ts';

/** Milliseconds as `42s`, `3m07s` or `1h05m`. */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * The time left at the pace so far: elapsed / done x left. Unknown (undefined) before anything is done. `parallel`
 * runs at once share the pace, so a cell's estimate is the whole evaluation's pace for its own runs left: an
 * estimate of when the cell is done if the runs left were taken in order, never a value the runs reported.
 */
export function etaMs(elapsedMs: number, done: number, left: number): number | undefined {
  if (left === 0) return 0;
  return done === 0 ? undefined : (elapsedMs / done) * left;
}

/** The board's lines: the whole evaluation, then one line per cell in matrix order. */
export function formatBoard(status: EvaluationStatus, elapsedMs: number, options: { color: boolean }): string[] {
  const colors = pc.createColors(options.color);
  const cells = status.cells ?? [];
  const total = status.runs?.total ?? 0;
  const final = status.runs?.final ?? 0;
  const passed = status.runs?.passed ?? 0;
  const scored = status.runs?.scored ?? 0;
  const cost = cells.reduce<number | null>((sum, c) => (sum === null || c.actualCostUsd.sum === null ? null : sum + c.actualCostUsd.sum), 0);
  const eta = (left: number) => {
    const ms = etaMs(elapsedMs, final, left);
    return ms === undefined ? 'ETA –' : left === 0 ? colors.green('done') : `ETA ${formatEta(ms)}`;
  };
  const money = (v: number | null) => (v === null ? '$–' : `$${v.toFixed(4)}`);
  const name = (c: (typeof cells)[number]) => `${c.harness} × ${c.model}`;
  const width = Math.max(10, ...cells.map((c) => name(c).length));
  const lines = [colors.bold(`${'all'.padEnd(width)}  ${`${final}/${total}`.padStart(9)}  ${`${passed}/${scored} passed`.padStart(14)}  ${money(cost).padStart(10)}  ${eta(total - final)}  (${formatEta(elapsedMs)} so far)`)];
  for (const c of cells) {
    lines.push(`${name(c).padEnd(width)}  ${`${c.final}/${c.runs}`.padStart(9)}  ${`${c.passed}/${c.scored} passed`.padStart(14)}  ${money(c.actualCostUsd.sum).padStart(10)}  ${eta(c.runs - c.final)}`);
  }
  return lines;
}

/** The board on a terminal: `finished` prints a run's line above it and redraws it, `done` leaves it printed. */
export function liveBoard(started: number, color: boolean) {
  let last: EvaluationStatus | undefined;
  let stopped = false;
  const draw = () => {
    if (last) logUpdate(formatBoard(last, Date.now() - started, { color }).join('\n'));
  };
  const ticker = setInterval(draw, 1000);
  ticker.unref();
  return {
    /** A run ended: its line printed above the board, the board redrawn with the status it made. */
    finished(text: string, status: EvaluationStatus) {
      logUpdate.clear();
      process.stdout.write(`${text}\n`);
      last = status;
      draw();
    },
    /** Stops redrawing and leaves the board on the screen; again: nothing. */
    done() {
      if (stopped) return;
      stopped = true;
      clearInterval(ticker);
      draw();
      logUpdate.done();
    },
  };
}
