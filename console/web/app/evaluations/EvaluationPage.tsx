// One Evaluation (issue 39), live: its progress, the pass-rate / cost plot, the harness × model table (each cell
// links to its Runs) and the significant differences between cells.
import { useMemo } from 'preact/hooks';
import { PATHS } from '../../wire.ts';
import { comparisonText, phaseOf, progressOf, runsLink, statusBehind, tallyOf } from '../../evaluation-view.ts';
import { plotData } from '../../evaluation-plot.ts';
import { PhaseBadge, StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { useEventStream } from '../sse.ts';
import { CellsTable } from './CellsTable.tsx';
import { PassRatePlot } from './PassRatePlot.tsx';
import { ProgressBar } from './Progress.tsx';
import { EvaluationsStore } from './store.ts';

export function EvaluationPage({ namespace, name }: { namespace: string; name: string }) {
  const store = useMemo(() => new EvaluationsStore(), []);
  const state = useEventStream(PATHS.evaluationsStream, store.handlers);
  useConsoleReady(store.ready.value);
  useTitle(name);
  const row = store.rows.value.get(`${namespace}/${name}`);
  const head = (
    <div class="page-head">
      <p class="crumbs">
        <a href="/evaluations">Evaluations</a> /
      </p>
      <h1 id="evaluation-title">{name}</h1>
      {row && <PhaseBadge phase={phaseOf(row)} />}
      <StreamStatus state={state.value} />
    </div>
  );
  if (!store.available.value || !store.ready.value || !row) {
    return (
      <section aria-labelledby="evaluation-title">
        {head}
        <p class={store.available.value ? 'muted' : 'notice'}>
          {!store.available.value ? 'Evaluations are not available here: this console reads no Evaluation objects.' : !store.ready.value ? 'Loading…' : `No evaluation ${namespace}/${name}.`}
        </p>
      </section>
    );
  }
  const t = tallyOf(row);
  const outcomes = Object.entries(row.runs?.byOutcome ?? {});
  return (
    <section aria-labelledby="evaluation-title" class="evaluation-page" data-key={row.key}>
      {head}
      <p class="summary">
        <ProgressBar progress={progressOf(row)} /> runs final · {t.passed} passed of {t.scored} scored
        {t.infrastructureFailed > 0 && <span class="warn-text"> · {plural(t.infrastructureFailed, 'infrastructure failure', 'infrastructure failures')}</span>}
        {t.unscored > 0 && <> · {t.unscored} unscored</>}
        {outcomes.length > 0 && <span class="muted"> ({outcomes.map(([o, n]) => `${o.replace(/_/g, ' ')} ${n}`).join(', ')})</span>} ·{' '}
        <a href={runsLink(row)}>all its runs</a>
      </p>
      {row.message && (
        <p class={row.phase === 'Invalid' ? 'notice' : 'muted'} data-message>
          {row.message}
        </p>
      )}
      <p class="muted small">
        {namespace} · {row.matrix.cells} cells × {row.matrix.testCases} test cases × {row.matrix.repeats} {row.matrix.repeats === 1 ? 'repeat' : 'repeats'}
        {statusBehind(row) && ' · the status is for an earlier spec: the controller has not caught up with an edit yet'}
      </p>
      {row.cells.length === 0 ? (
        <p class="muted">No cell has a status yet.</p>
      ) : (
        <>
          <PassRatePlot data={plotData(row)} />
          <CellsTable row={row} />
          <h2>Significant differences</h2>
          {row.comparisons.length === 0 ? (
            <p class="muted">No pair of cells differs significantly (Fisher's exact test, p &lt; 0.05).</p>
          ) : (
            <ul class="comparisons">
              {row.comparisons.map((c) => (
                <li key={`${c.a.harness}/${c.a.model}/${c.b.harness}/${c.b.model}`}>{comparisonText(c)}</li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
