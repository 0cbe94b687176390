// One run: its live feed (JetStream replay from the first event, then live; resumed after the last seq on
// reconnect), the stage timeline, usage, costs, spec and Kubernetes Events, and the Cancel action.
import { computed } from '@preact/signals';
import { useMemo } from 'preact/hooks';
import { formatIdle, toMs } from '../../format.ts';
import { runTimes } from '../../run-times.ts';
import { idleSeconds, isFinal } from '../../runs-view.ts';
import { stageTimeline } from '../../stages.ts';
import { PATHS } from '../../wire.ts';
import { serverNow } from '../clock.ts';
import { OutcomeBadge, PhaseBadge, StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { useEventStream } from '../sse.ts';
import { CancelRun } from './CancelRun.tsx';
import { Feed } from './Feed.tsx';
import { Costs, KubeEvents, Spec, Usage } from './RunFacts.tsx';
import { RunStatusPanel } from './RunStatusPanel.tsx';
import { RunStore } from './store.ts';
import { Timeline } from './Timeline.tsx';

export function RunPage({ namespace, name }: { namespace: string; name: string }) {
  const { store, spans } = useMemo(() => {
    const store = new RunStore();
    const spans = computed(() => {
      void store.feedVersion.value;
      const row = store.run.value?.row;
      return stageTimeline({ items: store.feed.items, final: row ? isFinal(row) : false, nowMs: serverNow.value, result: store.result.value ?? undefined });
    });
    return { store, spans };
  }, []);
  // A fresh EventSource (first open, or after the server refused one) asks for what follows the last event held;
  // EventSource's own reconnects send Last-Event-ID instead.
  const streamUrl = PATHS.runStream(namespace, name);
  const state = useEventStream(streamUrl, store.handlers, () => (store.feed.lastSeq ? `${streamUrl}?after=${store.feed.lastSeq}` : streamUrl));
  const info = store.run.value;
  useConsoleReady(info !== null || store.gone.value);

  const now = serverNow.value;
  const row = info?.row;
  const status = info?.status;
  const result = store.result.value;
  const idle = row ? idleSeconds(row, now) : undefined;
  const times = row ? runTimes(row, now) : undefined;
  const stalled = idle !== undefined && info !== null && idle >= info.stalledAfterSeconds;
  // Offsets count from the earliest of the run's start and its first event (the image pull comes before the start).
  const firstMs = toMs(store.feed.items[0]?.event.timestamp);
  const startedMs = toMs(row?.startedAt);
  const startMs = firstMs === undefined || startedMs === undefined ? (firstMs ?? startedMs) : Math.min(firstMs, startedMs);
  const title = `${namespace}/${name}`;
  useTitle(row ? `${title} (${row.phase})` : title);

  return (
    <article class="run-page" aria-labelledby="run-title" data-key={title} data-phase={row?.phase}>
      <div class="page-head">
        <p class="crumbs">
          <a href="/runs">Runs</a> /
        </p>
        <h1 id="run-title">{title}</h1>
        <StreamStatus state={state.value} notice={store.notice.value} />
      </div>
      {store.gone.value && (
        <p class="notice" role="alert">
          {info ? 'This Run was deleted. What was received is still shown.' : `There is no Run ${title}: it was deleted, or never existed.`}
        </p>
      )}
      {row && times && (
        <div class="run-head">
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
                {row.harness} <span class="muted">{row.harnessVersion ?? status?.harnessVersion ?? result?.harness_version ?? ''}</span>
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
          {(row.message ?? result?.message) && <p class="run-message">{row.message ?? result?.message}</p>}
          <div class="actions">
            {!isFinal(row) && <CancelRun namespace={namespace} name={name} />}
            <a class="button" href={PATHS.atif(namespace, name)} download>
              Download trajectory (ATIF)
            </a>
          </div>
        </div>
      )}
      <div class="run-grid">
        <section aria-labelledby="feed-title" class="feed-col">
          <h2 id="feed-title">Events</h2>
          <Feed store={store} startMs={startMs} />
        </section>
        <aside class="side-col" aria-label="Run details">
          <section aria-labelledby="stages-title" class="panel">
            <h2 id="stages-title">Stages</h2>
            <Timeline spans={spans.value} />
          </section>
          <section class="panel" aria-label="Usage and cost">
            <Usage tokens={status?.usage ?? result?.tokens ?? row?.tokens} />
            <Costs
              actual={status?.actualCostUsd ?? result?.actual_cost_usd ?? row?.actualCostUsd}
              comparable={status?.comparableCostUsd ?? result?.comparable_cost_usd ?? row?.comparableCostUsd}
              catalog={status?.catalogVersion ?? result?.catalog_version}
              authMode={status?.authMode ?? result?.auth_mode}
            />
          </section>
          {info && <RunStatusPanel status={status} result={result} nowMs={now} />}
          {info && <Spec spec={info.spec} />}
          <KubeEvents items={store.kubeEvents.value} nowMs={now} />
        </aside>
      </div>
    </article>
  );
}
