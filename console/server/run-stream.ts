// One run's SSE stream: `run` (row, spec, status) on open and on every change of the Run, its Kubernetes Events,
// and its JetStream feed from after the resume point (sse.ts resumeAfter): replayed, then live, batched as
// `events` messages whose SSE id is the last stream sequence in them, so a reconnect resumes with no gap and no
// duplicate (feed-batcher.ts).
import type { FastifyBaseLogger } from 'fastify';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import { runKey } from '../../shared/console.ts';
import { FeedBatcher } from './feed-batcher.ts';
import { rowOf, withActivity } from './run-row.ts';
import { resumeAfter } from './sse.ts';
import type { SseStream } from './sse.ts';
import type { ConsoleSources, Stoppable, Unsubscribe } from './sources.ts';
import type { ConsoleState } from './state.ts';

/** How long a browser waits before it reopens a run stream whose feed failed. */
export const FEED_RETRY_MS = 5000;

interface RunStreamContext {
  state: ConsoleState;
  sources: ConsoleSources;
  stalledAfterSeconds: number;
  log: FastifyBaseLogger;
}

export function streamRun(sse: SseStream, params: { namespace: string; name: string }, query: unknown, lastEventId: string | string[] | undefined, ctx: RunStreamContext): void {
  const { namespace, name } = params;
  const key = runKey(namespace, name);
  const after = resumeAfter(query, lastEventId);
  const stops: Unsubscribe[] = [];
  let events: { pod?: string; uid: string; off: Unsubscribe } | undefined;

  const watchEvents = (uid: string, pod: string | undefined) => {
    if (events && events.uid === uid && events.pod === pod) return;
    events?.off();
    events = { uid, pod, off: ctx.sources.kubeEvents.watch({ namespace, runUid: uid, pod }, (items) => sse.send('kube-events', { items })) };
  };

  stops.push(
    ctx.sources.runDetail.watch(namespace, name, (run) => {
      if (!run) return sse.send('gone', {});
      const status = run.status ? { ...run.status } : undefined;
      const row = withActivity(rowOf(run), undefined);
      const live = ctx.state.row(key);
      sse.send('run', {
        row: live?.activity ? { ...row, activity: live.activity, lastEventAt: live.lastEventAt } : row,
        spec: run.spec,
        status,
        stalledAfterSeconds: ctx.stalledAfterSeconds,
        serverTime: new Date().toISOString(),
      });
      if (run.metadata.uid) watchEvents(run.metadata.uid, run.status?.pod);
    }),
  );

  const runId = clusterRunIdOf(namespace, name);
  let feed: Stoppable | undefined;
  let closed = false;
  if (!ctx.sources.feed || !runId) {
    sse.send('notice', { text: runId ? 'no NATS connection: the event feed is unavailable' : `${key} has no run id (name too long)` });
  } else {
    const batcher = new FeedBatcher((message, data, id) => sse.send(message, data, id), after);
    // The feed cannot go on (its consumer failed, NATS refused it): say why and end the stream. The browser's own
    // reconnect (after FEED_RETRY_MS) sends the last id it got, so the next feed resumes right after it.
    const failed = (error: unknown) => {
      batcher.flush();
      sse.send('notice', { text: `NATS: ${error instanceof Error ? error.message : String(error)}` });
      sse.retry(FEED_RETRY_MS);
      sse.end();
    };
    ctx.sources.feed
      .open(runId, after, {
        onEvents: (items) => batcher.add(items),
        onResult: (seq, result) => batcher.result(seq, result),
        onCaughtUp: () => batcher.caughtUp(),
        onError: failed,
      })
      .then(
        (opened) => {
          if (closed) void opened.stop();
          else feed = opened;
        },
        failed,
      );
    stops.push(() => batcher.stop());
  }

  void sse.closed.then(() => {
    closed = true;
    stops.forEach((s) => s());
    events?.off();
    void feed?.stop().catch((error: unknown) => ctx.log.debug({ err: String(error) }, 'console feed stop failed'));
  });
}
