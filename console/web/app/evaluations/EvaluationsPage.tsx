// Evaluations (issue 39): every Evaluation, live, newest first: its phase, how many of its Runs are final, what
// passed of what was scored, and its age; each links to its page.
import { useMemo } from 'preact/hooks';
import { PATHS } from '../../wire.ts';
import { formatDuration, toMs } from '../../format.ts';
import { phaseOf, progressOf, sortedEvaluations, tallyOf } from '../../evaluation-view.ts';
import { evaluationPath } from '../../routes.ts';
import { serverNow } from '../clock.ts';
import { PhaseBadge, StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { useEventStream } from '../sse.ts';
import { ProgressBar } from './Progress.tsx';
import { EvaluationsStore } from './store.ts';

export function EvaluationsPage() {
  const store = useMemo(() => new EvaluationsStore(), []);
  const state = useEventStream(PATHS.evaluationsStream, store.handlers);
  useConsoleReady(store.ready.value);
  useTitle('Evaluations');
  const rows = sortedEvaluations(store.rows.value.values());
  return (
    <section aria-labelledby="evaluations-title">
      <div class="page-head">
        <h1 id="evaluations-title">Evaluations</h1>
        <StreamStatus state={state.value} />
      </div>
      {!store.available.value ? (
        <p class="notice" data-evaluations="unavailable">
          Evaluations are not available here: this console reads no Evaluation objects.
        </p>
      ) : !store.ready.value ? (
        <p class="muted">Loading evaluations…</p>
      ) : rows.length === 0 ? (
        <p class="muted">No evaluations yet. Start one with tcab eval run.</p>
      ) : (
        <div class="table-scroll">
          <table class="evaluations">
            <thead>
              <tr>
                <th scope="col">Evaluation</th>
                <th scope="col">Phase</th>
                <th scope="col">Runs final</th>
                <th scope="col" class="num">
                  Passed / scored
                </th>
                <th scope="col" class="num">
                  Cells
                </th>
                <th scope="col" class="num">
                  Age
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const t = tallyOf(row);
                const created = toMs(row.createdAt);
                return (
                  <tr key={row.key} data-key={row.key}>
                    <th scope="row">
                      <a href={evaluationPath(row.namespace, row.name)}>{row.key}</a>
                    </th>
                    <td>
                      <PhaseBadge phase={phaseOf(row)} />
                    </td>
                    <td>
                      <ProgressBar progress={progressOf(row)} />
                    </td>
                    <td class="num">
                      {t.passed}/{t.scored}
                    </td>
                    <td class="num">{row.cells.length || row.matrix.cells}</td>
                    <td class="num" title={row.createdAt}>
                      {created === undefined ? '—' : formatDuration(serverNow.value - created)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
