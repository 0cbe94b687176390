// The driver's connection to the run stream: connect (nats/settings.ts), make sure the stream exists, publish one
// enveloped message, wait for the Pod's start. What to retry, queue or give up is the caller's (driver/sinks/nats.ts).
import type { NatsConnection } from '@nats-io/transport-node';
import { PermissionViolationError, headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { progressSubject } from './envelope.ts';
import type { Envelope } from './envelope.ts';
import { ensureRunStream } from './stream.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';
import { waitForPodStart } from './pod-start.ts';

/** nats.js headers for an envelope (the driver's messages and the dispatcher's relayed ones). */
export function messageHeaders(envelope: Envelope) {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(envelope.headers)) h.set(name, value);
  return h;
}

/** JetStream requests (publish acks, stream checks) the driver waits for at most this long before retrying. */
const REQUEST_TIMEOUT_MS = 2000;
/** Room left under the server's max payload for the headers. */
const HEADER_ROOM = 1024;

export class RunPublisher {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private streamReady = false;
  private readonly duplicateWindowMs: number | undefined;

  /** Subjects the server refused a core publish to (a few at most: the progress subject). */
  private readonly refusedPublishes = new Set<string>();

  private constructor(nc: NatsConnection, duplicateWindowMs: number | undefined) {
    this.nc = nc;
    this.js = jetstream(nc, { timeout: REQUEST_TIMEOUT_MS });
    this.duplicateWindowMs = duplicateWindowMs;
    this.watchRefusals().catch(() => undefined); // ends with the connection
  }

  /** Until the connection closes: the publishes the server refused (its -ERR reaches the connection's status only). */
  private async watchRefusals(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError && s.error.operation === 'publish' && this.refusedPublishes.size < 16) this.refusedPublishes.add(s.error.subject);
    }
  }

  /** @param duplicateWindowMs the dedup window of a stream this publisher creates (tests shorten it). */
  static async connect(settings: NatsSettings, duplicateWindowMs?: number): Promise<RunPublisher> {
    return new RunPublisher(await connectNats(settings, { name: 'tcab-driver' }), duplicateWindowMs);
  }

  get closed(): boolean {
    return this.nc.isClosed();
  }

  /** The largest payload the server takes, less room for the headers. */
  get maxPayload(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM;
  }

  async ensureStream(): Promise<void> {
    if (this.streamReady) return;
    await ensureRunStream(await jetstreamManager(this.nc, { timeout: REQUEST_TIMEOUT_MS }), this.duplicateWindowMs);
    this.streamReady = true;
  }

  /** Resolves once the server stored the message (or had it already: same Nats-Msg-Id within the window). */
  async publish(envelope: Envelope, payload: string | Uint8Array): Promise<void> {
    try {
      await this.js.publish(envelope.subject, payload, { msgID: envelope.msgId, headers: messageHeaders(envelope), timeout: REQUEST_TIMEOUT_MS });
    } catch (error) {
      this.streamReady = false; // the server may have restarted without our stream
      throw error;
    }
  }

  /**
   * The run's progress (shared/run-progress.ts) on its core subject: not stored, not acked, sent once (a lost one
   * costs a phase shown late, nothing else). Resolves once the server has read it; rejects when the server refused
   * it (the credential does not allow the subject): a core publish is never answered, so the refusal is read from
   * the connection's status (watchRefusals), which the server's -ERR reaches before the PONG of the flush.
   */
  async publishProgress(runId: string, payload: string): Promise<void> {
    const subject = progressSubject(runId);
    this.nc.publish(subject, payload);
    await this.nc.flush();
    // The status watcher runs on microtasks queued as the -ERR was parsed: all have run by the next macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.refusedPublishes.has(subject)) throw new Error(`Permissions Violation for Publish to "${subject}"`);
  }

  waitForPodStart(runId: string, until: number, onWaiting?: () => void): Promise<'seen' | 'timed_out'> {
    return waitForPodStart(this.nc, runId, until, onWaiting);
  }

  async close(): Promise<void> {
    await this.nc.close().catch(() => undefined);
  }
}
