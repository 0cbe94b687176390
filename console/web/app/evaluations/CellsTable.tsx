// The harness × model table of one evaluation: per cell its progress, passed of scored, pass rate with its Wilson
// interval, pass@k and pass^k (when the evaluation repeats), reward, infrastructure failures and unscored runs
// (counted apart: never failed tasks), cost, tokens and wall time, its significant differences, and its Runs.
import type { EvaluationRow } from '../../../../shared/console.ts';
import { cellTokens, formatAtK, formatDurations, formatPassRate, formatPValue, formatReward, formatUsdPerRun, kLabel, marksByCell, runsLink } from '../../evaluation-view.ts';

export function CellsTable({ row }: { row: EvaluationRow }) {
  const atK = kLabel(row.cells, (c) => c.passAtK);
  const hatK = kLabel(row.cells, (c) => c.passHatK);
  const marks = marksByCell(row);
  return (
    <div class="table-scroll">
      <table class="cells">
        <caption class="visually-hidden">Harness × model cells</caption>
        <thead>
          <tr>
            <th scope="col">Harness</th>
            <th scope="col">Model</th>
            <th scope="col" class="num">
              Final
            </th>
            <th scope="col" class="num">
              Passed / scored
            </th>
            <th scope="col" class="num" title="Wilson 95% interval in brackets">
              Pass rate [95%]
            </th>
            {atK !== null && (
              <th scope="col" class="num">
                pass@{atK}
              </th>
            )}
            {hatK !== null && (
              <th scope="col" class="num">
                pass^{hatK}
              </th>
            )}
            <th scope="col" class="num">
              Reward
            </th>
            <th scope="col" class="num" title="Runs that ended on infrastructure: not counted as failed tasks">
              Infra failed
            </th>
            <th scope="col" class="num" title="Final runs without a verdict: cancelled, over budget, no check">
              Unscored
            </th>
            <th scope="col" class="num" title="Mean comparable cost (list prices) per scored run">
              Cost / run
            </th>
            <th scope="col" class="num">
              Tokens
            </th>
            <th scope="col" class="num">
              Time p50 / p90
            </th>
            <th scope="col">Significant</th>
            <th scope="col">Runs</th>
          </tr>
        </thead>
        <tbody>
          {row.cells.map((cell) => (
            <tr key={cell.key} data-cell={cell.key}>
              <th scope="row">{cell.harness}</th>
              <td>{cell.model}</td>
              <td class="num">
                {cell.final}/{cell.runs}
              </td>
              <td class="num">
                {cell.passed}/{cell.scored}
              </td>
              <td class="num pass-rate">{formatPassRate(cell)}</td>
              {atK !== null && <td class="num">{formatAtK(cell.passAtK)}</td>}
              {hatK !== null && <td class="num">{formatAtK(cell.passHatK)}</td>}
              <td class="num">{formatReward(cell.meanReward)}</td>
              <td class={`num${cell.infrastructureFailed > 0 ? ' warn-text' : ''}`}>{cell.infrastructureFailed}</td>
              <td class="num">{cell.unscored}</td>
              <td class="num">{formatUsdPerRun(cell.comparableCostUsd.mean)}</td>
              <td class="num">{cellTokens(cell)}</td>
              <td class="num">{formatDurations(cell.durationSeconds)}</td>
              <td class="marks">
                {(marks.get(cell.key) ?? []).map((m) => (
                  <span key={m.other} class={`mark mark-${m.direction}`} title={`same ${m.fixed}; Fisher ${formatPValue(m.pValue)}`}>
                    {m.direction === 'higher' ? '▲ more than ' : '▼ less than '}
                    {m.other}
                  </span>
                ))}
              </td>
              <td>
                <a class="cell-runs" href={runsLink(row, cell)} aria-label={`Runs of ${cell.harness} × ${cell.model}`}>
                  runs →
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
