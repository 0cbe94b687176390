// The runs table's filters: every control labelled, every change applied at once (no submit), Escape in the text box clears it.
import type { Signal } from '@preact/signals';
import { OUTCOME_LIST, PHASES } from '../../wire.ts';
import { EMPTY_FILTER, type RunFilter } from '../../runs-view.ts';
import { evaluationPath } from '../../routes.ts';

/** `cellName`: "harness × model" of the cell filtered by, when a Run of it is known. */
export function RunsFilters({ filter, harnesses, models, cellName }: { filter: Signal<RunFilter>; harnesses: string[]; models: string[]; cellName?: string | undefined }) {
  const f = filter.value;
  const set = (patch: Partial<RunFilter>) => (filter.value = { ...filter.value, ...patch });
  const active = JSON.stringify(f) !== JSON.stringify(EMPTY_FILTER);
  return (
    <form class="filters" role="search" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for="f-text">Search</label>
        <input
          id="f-text"
          type="search"
          placeholder="name, model, activity…"
          value={f.text}
          onInput={(e) => set({ text: e.currentTarget.value })}
          onKeyDown={(e) => e.key === 'Escape' && set({ text: '' })}
        />
      </div>
      <div class="field">
        <label for="f-phase">Phase</label>
        <select id="f-phase" value={f.phase} onChange={(e) => set({ phase: e.currentTarget.value as RunFilter['phase'] })}>
          <option value="">Any</option>
          <option value="active">Not finished</option>
          {PHASES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="f-harness">Harness</label>
        <select id="f-harness" value={f.harness} onChange={(e) => set({ harness: e.currentTarget.value })}>
          <option value="">Any</option>
          {withCurrent(harnesses, f.harness).map((h) => (
            <option key={h} value={h}>
              {h}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="f-model">Model</label>
        <select id="f-model" value={f.model} onChange={(e) => set({ model: e.currentTarget.value })}>
          <option value="">Any</option>
          {withCurrent(models, f.model).map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="f-outcome">Outcome</label>
        <select id="f-outcome" value={f.outcome} onChange={(e) => set({ outcome: e.currentTarget.value as RunFilter['outcome'] })}>
          <option value="">Any</option>
          <option value="none">None yet</option>
          {OUTCOME_LIST.map((o) => (
            <option key={o} value={o}>
              {o.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </div>
      <div class="field check">
        <input id="f-stalled" type="checkbox" checked={f.stalledOnly} onChange={(e) => set({ stalledOnly: e.currentTarget.checked })} />
        <label for="f-stalled">Stalled only</label>
      </div>
      {f.evaluation && <EvaluationFilter evaluation={f.evaluation} cell={f.cell} cellName={cellName} onClear={() => set({ evaluation: '', cell: '' })} />}
      {active && (
        <button type="button" onClick={() => (filter.value = EMPTY_FILTER)}>
          Clear filters
        </button>
      )}
    </form>
  );
}

/** The Evaluation (and cell) the runs are filtered to, from its page's links; a link back to it. */
function EvaluationFilter({ evaluation, cell, cellName, onClear }: { evaluation: string; cell: string; cellName: string | undefined; onClear: () => void }) {
  const slash = evaluation.indexOf('/');
  const [namespace, name] = [evaluation.slice(0, slash), evaluation.slice(slash + 1)];
  return (
    <p class="evaluation-filter" data-evaluation-filter={evaluation}>
      Runs of evaluation <a href={evaluationPath(namespace, name)}>{evaluation}</a>
      {cell && <> · cell {cellName ?? cell}</>}{' '}
      <button type="button" class="link" onClick={onClear}>
        show all
      </button>
    </p>
  );
}

/** Keeps a value chosen from a link in the options even before (or after) any row has it. */
const withCurrent = (values: string[], current: string) => (current && !values.includes(current) ? [current, ...values] : values);
