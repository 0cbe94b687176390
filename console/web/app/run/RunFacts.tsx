// The run page's side panels: the check's verdict, usage by token class, both costs, the Run's spec and its
// Kubernetes Events.
import type { KubeEventRow, RunRow } from '../../../../shared/console.ts';
import type { TokenUsage } from '../../../../shared/usage.ts';
import { formatClock, formatCost, formatDuration } from '../../format.ts';
import type { RunInfo } from './store.ts';

const CLASSES: ReadonlyArray<{ key: keyof TokenUsage; label: string; note?: string }> = [
  { key: 'input', label: 'Input', note: 'not from cache' },
  { key: 'cache_read', label: 'Cache read' },
  { key: 'cache_write', label: 'Cache write' },
  { key: 'output', label: 'Output', note: 'reasoning included' },
  { key: 'reasoning', label: 'of which reasoning' },
];

export function Usage({ tokens }: { tokens: TokenUsage | null | undefined }) {
  return (
    <table class="facts" aria-labelledby="usage-title">
      <caption id="usage-title">Usage by token class</caption>
      <tbody>
        {CLASSES.map((c) => (
          <tr key={c.key} data-class={c.key}>
            <th scope="row">
              {c.label}
              {c.note && <span class="muted small"> ({c.note})</span>}
            </th>
            <td class="num">{!tokens ? '—' : tokens[c.key] === null ? <span class="muted">not reported</span> : tokens[c.key]!.toLocaleString('en-US')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Costs({ actual, comparable, catalog, authMode }: { actual: number | null | undefined; comparable: number | null | undefined; catalog?: string | null | undefined; authMode?: string | null | undefined }) {
  return (
    <table class="facts">
      <caption>Cost</caption>
      <tbody>
        <tr>
          <th scope="row">
            Actual <span class="muted small">{authMode === 'subscription' ? '(subscription: comparable unless reported)' : '(as the harness reported it)'}</span>
          </th>
          <td class="num" data-cost="actual">
            {formatCost(actual)}
          </td>
        </tr>
        <tr>
          <th scope="row">
            Comparable <span class="muted small">(list prices)</span>
          </th>
          <td class="num" data-cost="comparable">
            {formatCost(comparable)}
          </td>
        </tr>
        <tr>
          <th scope="row">Catalogue version</th>
          <td class="num">{catalog ?? '—'}</td>
        </tr>
      </tbody>
    </table>
  );
}

/** The test case check's verdict (status.check, the result's check, or the row's). */
export function Check({ check }: { check: NonNullable<RunRow['check']> }) {
  const verdict = check.passed ? 'passed' : 'failed';
  return (
    <table class="facts check" data-check={verdict}>
      <caption>Check</caption>
      <tbody>
        <tr>
          <th scope="row">Verdict</th>
          <td class={`num ${check.passed ? 'ok-text' : 'fail-text'}`}>{verdict}</td>
        </tr>
        <tr>
          <th scope="row">Exit code</th>
          {/* null: its timeout killed it, or it could not start (its output, in the result, says which). */}
          <td class="num">{check.exitCode ?? <span class="muted">none (killed or did not start)</span>}</td>
        </tr>
        {check.reward !== null && (
          <tr>
            <th scope="row">Reward</th>
            <td class="num" data-reward={check.reward}>
              {check.reward}
            </td>
          </tr>
        )}
        <tr>
          <th scope="row">Duration</th>
          <td class="num">{formatDuration(check.durationMs)}</td>
        </tr>
      </tbody>
    </table>
  );
}

export function Spec({ spec }: { spec: RunInfo['spec'] }) {
  const { prompt, ...rest } = spec;
  return (
    <section aria-labelledby="spec-title" class="panel">
      <h2 id="spec-title">Spec</h2>
      <dl class="kv">
        {Object.entries(rest)
          .filter(([k, v]) => v !== undefined && k !== 'testCase')
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
            </div>
          ))}
      </dl>
      {prompt !== undefined && (
        <details open>
          <summary>Prompt</summary>
          <pre class="output prompt">{String(prompt)}</pre>
        </details>
      )}
      {spec.testCase !== undefined && (
        <details>
          <summary>Test case</summary>
          <pre class="output">{JSON.stringify(spec.testCase, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}

export function KubeEvents({ items, nowMs }: { items: KubeEventRow[]; nowMs: number }) {
  // A list, not a table: messages are long (image pulls, scheduling) and the side column is narrow.
  return (
    <section aria-labelledby="kube-title" class="panel">
      <h2 id="kube-title">Kubernetes Events</h2>
      {items.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ol class="kube">
          {items.map((e, i) => (
            <li key={i} class={e.type === 'Warning' ? 'warn-row' : undefined} data-reason={e.reason}>
              <div class="kube-head">
                <strong>{e.reason}</strong>
                <span class={e.type === 'Warning' ? 'fail-text' : 'muted'}>{e.type}</span>
                {e.count > 1 && <span class="muted">×{e.count}</span>}
                <span class="muted kube-time">{formatClock(e.lastAt ?? e.firstAt, nowMs)}</span>
              </div>
              <div class="kube-msg">
                {e.message}
                {e.source && <span class="muted small"> · {e.source}</span>}
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
