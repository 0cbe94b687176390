// The run's header under its title: phase, outcome, harness, model and times at a glance, the Run's message, and
// the actions (Cancel while it runs, the ATIF download).
import type { RunRow } from '../../../../shared/console.ts';
import type { RunResult } from '../../../../shared/run.ts';
import { formatIdle } from '../../format.ts';
import { runTimes } from '../../run-times.ts';
import { idleSeconds, isFinal, isStalled } from '../../runs-view.ts';
import { PATHS } from '../../wire.ts';
import { OutcomeBadge, PhaseBadge } from '../common.tsx';
import { CancelRun } from './CancelRun.tsx';
import type { RunInfo } from './store.ts';

export function RunHead({ namespace, name, info, result, nowMs }: { namespace: string; name: string; info: RunInfo; result: RunResult | null; nowMs: number }) {
  const row = info.row;
  const idle = idleSeconds(row, nowMs);
  const stalled = isStalled(row, { nowMs, stalledAfterSeconds: info.stalledAfterSeconds });
  return (
    <div class="run-head">
      <RunHeadFacts row={row} harnessVersion={row.harnessVersion ?? info.status?.harnessVersion ?? result?.harness_version ?? ''} idle={idle} stalled={stalled} nowMs={nowMs} />
      {(row.message ?? result?.message) && <p class="run-message">{row.message ?? result?.message}</p>}
      <div class="actions">
        {!isFinal(row) && <CancelRun namespace={namespace} name={name} />}
        <a class="button" href={PATHS.atif(namespace, name)} download>
          Download trajectory (ATIF)
        </a>
      </div>
    </div>
  );
}

function RunHeadFacts({ row, harnessVersion, idle, stalled, nowMs }: { row: RunRow; harnessVersion: string; idle: number | undefined; stalled: boolean; nowMs: number }) {
  const times = runTimes(row, nowMs);
  return (
    <dl class="kv inline">
      <div>
        <dt>Phase</dt>
        <dd>
          <PhaseBadge phase={row.phase} stalled={stalled} />
        </dd>
      </div>
      <div>
        <dt>Outcome</dt>
        <dd>
          <OutcomeBadge outcome={row.outcome} />
        </dd>
      </div>
      <div>
        <dt>Harness</dt>
        <dd>
          {row.harness} <span class="muted">{harnessVersion}</span>
        </dd>
      </div>
      <div>
        <dt>Model</dt>
        <dd>{row.model}</dd>
      </div>
      {times.created && (
        <div>
          <dt>Created</dt>
          <dd>
            <time dateTime={row.createdAt}>{times.created}</time>
          </dd>
        </div>
      )}
      <div>
        <dt>Started</dt>
        <dd>{row.startedAt ? <time dateTime={row.startedAt}>{times.started}</time> : times.started}</dd>
      </div>
      <div>
        <dt>Duration</dt>
        <dd title="From Started to now, or to the end (the feed's offsets count from its first event)">{times.duration}</dd>
      </div>
      <div>
        <dt>Idle</dt>
        <dd class={stalled ? 'stalled-text' : undefined}>{formatIdle(idle)}</dd>
      </div>
    </dl>
  );
}
