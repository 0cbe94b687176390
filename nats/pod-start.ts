// The driver's wait for its Pod's start on the run's stream, so subscribers see pull -> start -> install in the
// order it happened. Why a wait: start_container's end is the kubelet's `Started` Event, which exists only once
// the driver's process runs, and only the dispatcher sees it (the driver holds no Kubernetes credentials); the
// dispatcher relays it into the run's system subject a moment later. Until then the driver's own messages would
// land first. So the driver's first publish waits until that event is on the stream, at most a bound.
//
// How, without a JetStream consumer per run: a core subscription to the run's system subject (flushed, so the
// server has the interest) catches what is published from now on, and direct gets read what was stored before
// (a handful of messages: the dispatcher's pull/start events). Nothing falls between the two.
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventSubject } from './envelope.ts';
import { STREAM_NAME } from './stream.ts';

/** The kubelet started the container (or failed to): the Pod's start is over either way. Pure. */
export function endsPodStart(event: unknown): boolean {
  const e = event as { type?: unknown; stage?: unknown; status?: unknown } | null | undefined;
  return e?.type === 'system' && e.stage === 'start_container' && (e.status === 'completed' || e.status === 'failed');
}

function parsed(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether the stream already holds the end of the Pod's start, read message by message (direct get). */
async function storedEndsPodStart(nc: NatsConnection, subject: string): Promise<boolean> {
  const jsm = await jetstreamManager(nc, { timeout: 2000 });
  for (let seq = 1; ; ) {
    const m = await jsm.direct.getMessage(STREAM_NAME, { seq, next_by_subj: subject });
    if (!m) return false;
    if (endsPodStart(parsed(m.data))) return true;
    seq = m.seq + 1;
  }
}

/**
 * Resolves 'seen' once the run's start_container completed/failed event is on the stream, 'timed_out' at `until`
 * (ms since epoch). `onWaiting` is called once it is waiting for a live event (tests publish then).
 */
export async function waitForPodStart(nc: NatsConnection, runId: string, until: number, onWaiting?: () => void): Promise<'seen' | 'timed_out'> {
  const subject = eventSubject(runId, 'system');
  const live = nc.subscribe(subject);
  const timer = setTimeout(() => live.unsubscribe(), Math.max(0, until - Date.now()));
  try {
    await nc.flush();
    if (await storedEndsPodStart(nc, subject)) return 'seen';
    onWaiting?.();
    for await (const m of live) if (endsPodStart(parsed(m.data))) return 'seen';
    return 'timed_out';
  } finally {
    clearTimeout(timer);
    live.unsubscribe();
  }
}
