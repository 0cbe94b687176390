// One run: its live feed (JetStream replay from the first event, then live; resumed after the last seq on
// reconnect), the stage timeline, usage, costs, spec and Kubernetes Events, and the Cancel action.
import { computed } from '@preact/signals';
import { useMemo } from 'preact/hooks';
import type { FeedItem, KubeEventRow, RunRow } from '../../../../shared/console.ts';
import type { RunResult } from '../../../../shared/run.ts';
import { toMs } from '../../format.ts';
import { isFinal } from '../../runs-view.ts';
import { stageTimeline, type StageSpan } from '../../stages.ts';
import { PATHS } from '../../wire.ts';
import { serverNow } from '../clock.ts';
import { StreamStatus, useConsoleReady, useTitle } from '../common.tsx';
import { useEventStream } from '../sse.ts';
import { Feed } from './Feed.tsx';
import { Check, Costs, KubeEvents, Spec, Usage } from './RunFacts.tsx';
import { RunHead } from './RunHead.tsx';
import { RunStatusPanel } from './RunStatusPanel.tsx';
import { RunStore, type RunInfo } from './store.ts';
import { Timeline } from './Timeline.tsx';

export function RunPage({ namespace, name }: { namespace: string; name: string }) {
  const { store, spans } = useRunStore();
  // A fresh EventSource (first open, or after the server refused one) asks for what follows the last event held;
  // EventSource's own reconnects send Last-Event-ID instead.
  const streamUrl = PATHS.runStream(namespace, name);
  const state = useEventStream(streamUrl, store.handlers, () => (store.feed.lastSeq ? `${streamUrl}?after=${store.feed.lastSeq}` : streamUrl));
  const info = store.run.value;
  useConsoleReady(info !== null || store.gone.value);

  const now = serverNow.value;
  const row = info?.row;
  const result = store.result.value;
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
      {info && <RunHead namespace={namespace} name={name} info={info} result={result} nowMs={now} />}
      <div class="run-grid">
        <section aria-labelledby="feed-title" class="feed-col">
          <h2 id="feed-title">Events</h2>
          <Feed store={store} startMs={feedStartMs(store.feed.items, row)} />
        </section>
        <RunDetails info={info} result={result} spans={spans.value} kubeEvents={store.kubeEvents.value} nowMs={now} />
      </div>
    </article>
  );
}

/** The page's store, and its stage timeline recomputed as events arrive, the run ends or the clock ticks. */
function useRunStore() {
  return useMemo(() => {
    const store = new RunStore();
    const spans = computed(() => {
      void store.feedVersion.value;
      const row = store.run.value?.row;
      return stageTimeline({ items: store.feed.items, final: row ? isFinal(row) : false, nowMs: serverNow.value, result: store.result.value ?? undefined });
    });
    return { store, spans };
  }, []);
}

/** Offsets count from the earliest of the run's start and its first event (the image pull comes before the start). */
function feedStartMs(items: readonly FeedItem[], row: RunRow | undefined): number | undefined {
  const firstMs = toMs(items[0]?.event.timestamp);
  const startedMs = toMs(row?.startedAt);
  return firstMs === undefined || startedMs === undefined ? (firstMs ?? startedMs) : Math.min(firstMs, startedMs);
}

/**
 * The side column: stages, the check's verdict, usage and cost (from the status, else the result, else the row),
 * status, spec, Events.
 */
function RunDetails({ info, result, spans, kubeEvents, nowMs }: { info: RunInfo | null; result: RunResult | null; spans: StageSpan[]; kubeEvents: KubeEventRow[]; nowMs: number }) {
  const row = info?.row;
  const status = info?.status;
  const check = status?.check ?? checkOfResult(result) ?? row?.check;
  return (
    <aside class="side-col" aria-label="Run details">
      <section aria-labelledby="stages-title" class="panel">
        <h2 id="stages-title">Stages</h2>
        <Timeline spans={spans} />
      </section>
      {check && (
        <section class="panel" aria-label="Check">
          <Check check={check} />
        </section>
      )}
      <section class="panel" aria-label="Usage and cost">
        <Usage tokens={status?.usage ?? result?.tokens ?? row?.tokens} />
        <Costs
          actual={status?.actualCostUsd ?? result?.actual_cost_usd ?? row?.actualCostUsd}
          comparable={status?.comparableCostUsd ?? result?.comparable_cost_usd ?? row?.comparableCostUsd}
          catalog={status?.catalogVersion ?? result?.catalog_version}
          authMode={status?.authMode ?? result?.auth_mode}
        />
      </section>
      {info && <RunStatusPanel status={status} result={result} nowMs={nowMs} />}
      {info && <Spec spec={info.spec} />}
      <KubeEvents items={kubeEvents} nowMs={nowMs} />
    </aside>
  );
}

/** The result's check (snake_case, null when it did not run) in the status's shape. */
function checkOfResult(result: RunResult | null): RunRow['check'] {
  const c = result?.check;
  return c ? { passed: c.passed, exitCode: c.exit_code, reward: c.reward, durationMs: c.duration_ms } : undefined;
}
