// The data of the evaluation page's plot, pure: a point per cell at (mean comparable cost per run, pass rate) with
// its Wilson interval, labelled harness/model and linked to the cell's Runs. A cell without a pass rate (nothing
// scored yet) or without a comparable cost cannot be placed: it is listed as not plotted, with why.
import type { EvaluationRow } from '../../shared/console.ts';
import { runsLink } from './evaluation-view.ts';

export interface PlotPoint {
  key: string;
  label: string;
  harness: string;
  /** Mean comparable cost per scored run, USD. */
  cost: number;
  passRate: number;
  low: number;
  high: number;
  href: string;
}

export interface PlotData {
  points: PlotPoint[];
  /** "harness/model: why" for each cell left out. */
  notPlotted: string[];
}

export function plotData(row: EvaluationRow): PlotData {
  const points: PlotPoint[] = [];
  const notPlotted: string[] = [];
  for (const cell of row.cells) {
    const label = `${cell.harness}/${cell.model}`;
    const cost = cell.comparableCostUsd.mean;
    if (cell.passRate === null) notPlotted.push(`${label}: no run scored yet`);
    else if (cost === null) notPlotted.push(`${label}: no comparable cost`);
    else {
      const interval = cell.passRateInterval ?? { low: cell.passRate, high: cell.passRate };
      points.push({ key: cell.key, label, harness: cell.harness, cost, passRate: cell.passRate, low: interval.low, high: interval.high, href: runsLink(row, cell) });
    }
  }
  return { points, notPlotted };
}
