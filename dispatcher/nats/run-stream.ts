// The dispatcher's NATS side: it publishes the cluster's system events (pull_image, start_container, teardown)
// into the run's subjects, and, while leader, consumes the drivers' result messages through a durable JetStream
// consumer, acknowledging each only after the Run status is written, so a restarted dispatcher resumes there.
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { HarnessEvent } from '../../shared/events.ts';
import { RunResult } from '../../shared/run.ts';
import { ensureRunStream } from '../../shared/run-stream.ts';
import { HEADER, STREAM_NAME, eventSubject, runSubjects } from '../../shared/subjects.ts';
import type { SystemEventPublisher } from '../controller/dispatcher.ts';
import { bounded } from '../shutdown.ts';

export const RESULTS_CONSUMER = 'tcab-dispatcher-results';
const RESULTS_SUBJECT = 'tcab.run.*.result';

export interface NatsSettings {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
}

export class RunStream implements SystemEventPublisher {
  private consuming: ConsumerMessages | undefined;
  private readonly nc: NatsConnection;

  private constructor(nc: NatsConnection) {
    this.nc = nc;
  }

  static async connect(settings: NatsSettings): Promise<RunStream> {
    const nc = await connect({ servers: settings.servers, user: settings.user, pass: settings.pass, token: settings.token, name: 'tcab-dispatcher', maxReconnectAttempts: -1 });
    await ensureRunStream(await jetstreamManager(nc));
    return new RunStream(nc);
  }

  async publish(runId: string, events: HarnessEvent[]): Promise<void> {
    const js = jetstream(this.nc);
    for (const event of events) {
      const h = natsHeaders();
      // No driver sequence number: these come from the cluster, not the driver's stream of the run.
      const msgId = `${runId}:k8s:${event.type === 'system' ? `${event.stage}:${event.status}` : event.type}:${event.timestamp}`;
      h.set(HEADER.runId, runId);
      h.set(HEADER.seq, '0');
      h.set(HEADER.kind, 'event');
      h.set('ce-specversion', '1.0');
      h.set('ce-id', msgId);
      h.set('ce-source', 'urn:tcab:dispatcher');
      h.set('ce-type', `dev.tcab.harness.event.${event.type}`);
      h.set('ce-subject', runId);
      h.set('ce-time', event.timestamp);
      h.set('content-type', 'application/json');
      await js.publish(eventSubject(runId, event.type), JSON.stringify(event), { msgID: msgId, headers: h });
    }
  }

  /**
   * Removes what the stream holds for a run id (every subject of `tcab.run.<id>.>`): called before a Run's driver
   * Pod is made, when the id's messages can only be an earlier Run's of the same name (see Dispatcher.claimOne).
   */
  async forget(runId: string): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    await jsm.streams.purge(STREAM_NAME, { filter: runSubjects(runId) });
  }

  /** Starts delivering driver results (leader only). A malformed result is terminated, never retried forever. */
  async consumeResults(onResult: (runId: string, result: RunResult, ack: () => void) => void, log: (m: string) => void): Promise<void> {
    if (this.consuming) return;
    const jsm = await jetstreamManager(this.nc);
    await jsm.consumers.add(STREAM_NAME, { durable_name: RESULTS_CONSUMER, filter_subject: RESULTS_SUBJECT, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 60 * 1_000_000_000 }).catch(() => undefined);
    const consumer = await jetstream(this.nc).consumers.get(STREAM_NAME, RESULTS_CONSUMER);
    const messages = await consumer.consume();
    this.consuming = messages;
    void (async () => {
      for await (const m of messages) {
        const runId = m.subject.split('.')[2] ?? '';
        const parsed = RunResult.safeParse(m.json());
        if (!parsed.success) {
          log(`result for ${runId} is not a RunResult; dropped`);
          m.term();
          continue;
        }
        onResult(runId, parsed.data, () => m.ack());
      }
    })();
  }

  async stopConsuming(): Promise<void> {
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
    await bounded(() => this.stopConsuming(), drainMs);
    if ((await bounded(() => this.nc.drain(), drainMs)) !== 'done' && !this.nc.isClosed()) await this.nc.close();
  }
}
