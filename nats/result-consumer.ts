// The dispatcher's NATS side: it relays the cluster's system events (pull_image, start_container, teardown) into
// the run's subjects, forgets an earlier Run's messages, and, while leader, consumes the drivers' result messages
// through a durable JetStream consumer, acknowledging each only after the Run status is written, so a restarted
// dispatcher resumes there.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import pRetry, { AbortError } from 'p-retry';
import { AckPolicy, DeliverPolicy, JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { HarnessEvent } from '../shared/events.ts';
import { RunResult } from '../shared/run.ts';
import { ALL_PROGRESS_SUBJECT, ALL_RESULTS_SUBJECT, clusterEventEnvelope, parseSubject, resultSubject, runIdOfProgressSubject, runSubjects } from './envelope.ts';
import { RunProgress } from '../shared/run-progress.ts';
import { STREAM_NAME, ensureRunStream } from './stream.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';
import { messageHeaders } from './publisher.ts';

export const RESULTS_CONSUMER = 'tcab-dispatcher-results';

/** JetStream's err_code for "JetStream system temporarily unavailable" (HTTP-like status 503): no meta leader yet. */
const JS_CLUSTER_NOT_AVAILABLE = 10008;

/**
 * Whether a failed stream setup means JetStream is not up yet, and how sure that is:
 *   'unavailable'  JetStream answered "JetStream system temporarily unavailable" (err_code 10008, status 503): a
 *                  clustered NATS that has not yet elected its meta leader (the bundled 3-server NATS while an install
 *                  starts, or after it lost a quorum). JetStream is there and configured; it is waited for long.
 *   'silent'       the request timed out (nats.js's TimeoutError): a NATS still forming its cluster can do that for a
 *                  while (test/e2e/chart-nats-cluster.test.ts allows either answer from a lone server), but so does a
 *                  misconfigured one forever (something takes $JS.API requests and never answers: a wrong account
 *                  import, a leaf node or gateway without JetStream behind it), so it is waited for only briefly.
 *   undefined      anything else (a permission, JetStream not enabled, no responders): another try would meet it again.
 */
export function jetStreamNotUp(error: unknown): 'unavailable' | 'silent' | undefined {
  // By err_code, not by status: JetStream not enabled (10076, 10039) answers 503 as well.
  if (error instanceof JetStreamApiError && error.code === JS_CLUSTER_NOT_AVAILABLE) return 'unavailable';
  const { name, message } = error instanceof Error ? error : { name: '', message: String(error) };
  if (/temporarily unavailable/i.test(message)) return 'unavailable';
  if (name === 'TimeoutError' || /^timeout$/i.test(message)) return 'silent';
  return undefined;
}

/** How long the dispatcher waits for JetStream to come up at start before it gives up (and its Pod restarts). */
const JETSTREAM_START_MS = 10 * 60_000;

/**
 * How long JetStream may stay silent (its requests time out) before the dispatcher gives up: counted from the
 * connect's start and again from each "temporarily unavailable" answer (a JetStream that said so exists and is
 * electing; its servers may be silent in between). Meant to outlast a 3-server NATS forming its cluster once its
 * servers run; without the bound, a NATS whose JetStream never answers kept the dispatcher waiting the whole 10
 * minutes before it exited.
 */
export const JETSTREAM_SILENT_MS = 60_000;

/** 'done', 'failed' or, after `ms`, 'timeout'; never rejects (a step of a shutdown must end). */
async function within(work: () => Promise<unknown>, ms: number): Promise<'done' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')));
  try {
    return await Promise.race([work().then(() => 'done' as const, () => 'failed' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function jsonOf(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  } catch {
    return undefined; // not JSON: not a RunResult either
  }
}

export class RunStream {
  private consuming: ConsumerMessages | undefined;
  private progress: Subscription | undefined;
  private readonly nc: NatsConnection;
  /** Between a disconnect and the reconnect that ends it (the client retries forever: nats/settings.ts). */
  private reconnecting = false;

  private constructor(nc: NatsConnection) {
    this.nc = nc;
    void this.watchStatus();
  }

  /** streamReplicas: how many servers keep the run stream (TCAB_NATS_STREAM_REPLICAS); made or scaled so. */
  /**
   * onStreamRetry: told each time JetStream was not up yet (jetStreamNotUp) and the stream setup is tried again
   * (0.5 s doubling to 5 s): for up to 10 minutes while JetStream answers "temporarily unavailable", and while it
   * answers nothing at all only for `silentMs` (JETSTREAM_SILENT_MS) since the start or its last such answer, after
   * which connect rejects saying so. Measured on three real nodes, a dispatcher that exited on the first such answer
   * was restarted twice per replica before the chart's 3-server NATS had formed.
   * silentMs, requestMs: that bound, and each JetStream request's timeout (nats.js's default, 5 s, when not given).
   */
  static async connect(settings: NatsSettings, options: { waitOnFirstConnect?: boolean; streamReplicas?: number; onStreamRetry?: (error: Error, attempt: number) => void; silentMs?: number; requestMs?: number } = {}): Promise<RunStream> {
    const { streamReplicas, onStreamRetry, silentMs = JETSTREAM_SILENT_MS, requestMs, ...connectOptions } = options;
    const nc = await connectNats(settings, { name: 'tcab-dispatcher', ...connectOptions });
    try {
      // The connect's start, then JetStream's last "temporarily unavailable": the last sign that it is starting.
      let signOfLife = performance.now();
      let sawUnavailable = false;
      await pRetry(async () => {
        try {
          await ensureRunStream(await jetstreamManager(nc, requestMs === undefined ? {} : { timeout: requestMs }), undefined, streamReplicas);
        } catch (error) {
          const notUp = jetStreamNotUp(error);
          if (notUp === 'unavailable') {
            signOfLife = performance.now();
            sawUnavailable = true;
          }
          const silentFor = performance.now() - signOfLife;
          if (notUp === 'silent' && silentFor >= silentMs) {
            const since = sawUnavailable ? 'since it last answered "temporarily unavailable"' : 'since the dispatcher connected';
            throw new AbortError(new Error(`JetStream did not answer for ${Math.round(silentFor / 1000)} s ${since} (its API requests time out): check that the NATS server (TCAB_NATS_URL) runs with JetStream enabled, that these credentials' account has JetStream, and, for a clustered NATS, that its servers reach each other and a quorum of them is up`, { cause: error }));
          }
          if (!notUp) throw new AbortError(error instanceof Error ? error : new Error(String(error)));
          throw error;
        }
      }, { retries: Number.POSITIVE_INFINITY, minTimeout: 500, maxTimeout: 5000, maxRetryTime: JETSTREAM_START_MS, onFailedAttempt: ({ error, attemptNumber }) => onStreamRetry?.(error, attemptNumber) });
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
    return new RunStream(nc);
  }

  /** Whether the connection is up now (readiness): false while reconnecting and once closed. */
  connected(): boolean {
    return !this.nc.isClosed() && !this.reconnecting;
  }

  private async watchStatus(): Promise<void> {
    // Made once connected; the status iterator reports every later disconnect and reconnect, and ends at close.
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnecting') this.reconnecting = true;
      else if (s.type === 'reconnect') this.reconnecting = false;
    }
  }

  async publish(runId: string, events: HarnessEvent[], attemptNumber?: number): Promise<void> {
    const js = jetstream(this.nc);
    for (const event of events) {
      const envelope = clusterEventEnvelope(runId, event, attemptNumber);
      await js.publish(envelope.subject, JSON.stringify(event), { msgID: envelope.msgId, headers: messageHeaders(envelope) });
    }
  }

  /**
   * Removes what the stream holds for a run id (every subject of `tcab.run.<id>.>`): called before a Run's driver
   * Pod is made, when the id's messages can only be an earlier Run's of the same name.
   */
  async forget(runId: string): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    await jsm.streams.purge(STREAM_NAME, { filter: runSubjects(runId) });
  }

  /**
   * The last result on the run's result subject, read from the stream directly (whatever the results consumer's
   * state: it stalls for a while when its server goes and its leader moves); undefined when there is none or it does
   * not parse. Rejects when NATS does not answer.
   */
  async lastResult(runId: string): Promise<RunResult | undefined> {
    const jsm = await jetstreamManager(this.nc);
    const stored = await jsm.streams.getMessage(STREAM_NAME, { last_by_subj: resultSubject(runId) });
    if (!stored) return undefined;
    const parsed = RunResult.safeParse(jsonOf(stored.data));
    return parsed.success ? parsed.data : undefined;
  }

  /** Starts delivering driver results (leader only). A malformed result is terminated, never retried forever. */
  async consumeResults(onResult: (runId: string, result: RunResult, ack: () => void) => void, log: (m: string) => void): Promise<void> {
    if (this.consuming) return;
    const jsm = await jetstreamManager(this.nc);
    await jsm.consumers.add(STREAM_NAME, { durable_name: RESULTS_CONSUMER, filter_subject: ALL_RESULTS_SUBJECT, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 60 * 1_000_000_000 }).catch(() => undefined);
    const consumer = await jetstream(this.nc).consumers.get(STREAM_NAME, RESULTS_CONSUMER);
    const messages = await consumer.consume();
    this.consuming = messages;
    void (async () => {
      for await (const m of messages) {
        const subject = parseSubject(m.subject);
        if (subject?.kind !== 'result') {
          log(`message on ${m.subject.slice(0, 256)} is not a run's result subject; dropped`);
          m.term();
          continue;
        }
        const parsed = RunResult.safeParse(jsonOf(m.data));
        if (!parsed.success) {
          log(`result for ${subject.runId} is not a RunResult; dropped`);
          m.term();
          continue;
        }
        onResult(subject.runId, parsed.data, () => m.ack());
      }
    })();
  }

  /**
   * Starts taking the drivers' progress messages (leader only): a core subscription to every run's progress subject
   * (outside the stream: one missed while no leader listens is gone, and the phase waits for the result). What does
   * not parse is dropped with a line; a subject that names no run id is dropped.
   */
  followProgress(onProgress: (runId: string, progress: RunProgress) => void, log: (m: string) => void): void {
    if (this.progress) return;
    this.progress = this.nc.subscribe(ALL_PROGRESS_SUBJECT, {
      callback: (error, m) => {
        if (error) return log(`progress subscription: ${error.message}`);
        const runId = runIdOfProgressSubject(m.subject);
        const parsed = RunProgress.safeParse(jsonOf(m.data));
        if (runId === undefined || !parsed.success) return log(`message on ${m.subject.slice(0, 256)} is not a run's progress; dropped`);
        onProgress(runId, parsed.data);
      },
    });
  }

  async stopConsuming(): Promise<void> {
    this.progress?.unsubscribe();
    this.progress = undefined;
    await this.consuming?.close();
    this.consuming = undefined;
  }

  /**
   * Drains (flushing acks of results whose status is written), within `drainMs`. A drain waits for the server's
   * answer, and a server that went away without closing the connection (the bundled NATS deleted by the same
   * `helm uninstall`, a partition) never gives one: the drain then hung until the kubelet's SIGKILL. Past the bound
   * the connection is closed without it; unacked results are redelivered to the next leader.
   */
  async close(drainMs = 2000): Promise<void> {
    await within(() => this.stopConsuming(), drainMs);
    if ((await within(() => this.nc.drain(), drainMs)) !== 'done' && !this.nc.isClosed()) await this.nc.close();
  }
}
