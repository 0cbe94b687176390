// Publishes a run's events and result to NATS JetStream. The only module of the driver that imports @nats-io.
// - The stream is created if missing (file storage, so a restarted server keeps what it had).
// - Order: one pump publishes from one ordered queue; after a failure it resumes from the first unacknowledged
//   message, and `Nats-Msg-Id` (run id + attempt + sequence) lets the server drop the retried copies that had
//   landed. The attempt (a cluster Run's uid) keeps a Run deleted and re-created under its name, within the
//   stream's duplicate window, from having its messages dropped as repeats of the earlier Run's.
// - NATS unreachable: the driver keeps going; the queue is bounded in memory and spills to disk. On close the sink
//   waits for delivery until the run's deadline, then writes what it could not deliver to stdout as NDJSON.
//   The sink connects as soon as it is made and says at once (stderr) when it cannot: the URL without
//   credentials and why (malformed: the parse error, never retried; refused, DNS, no answer: retried).
// - In a driver Pod, the dispatcher publishes the Pod's pull_image/start_container events into the same run's
//   subjects; they happened before the driver started but reach NATS through the dispatcher's watch. The sink
//   holds the driver's messages until start_container's end is on the stream (bounded), so the run's stream is in
//   the order things happened.
import { tmpdir } from 'node:os';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { RunResult } from '../../shared/run.ts';
import { HEADER, STREAM_NAME, eventSubject, resultSubject } from '../../shared/subjects.ts';
import { ensureRunStream } from '../../shared/run-stream.ts';
import type { EventSink, SequencedEvent } from './sink.ts';
import { SpillQueue } from './spill-queue.ts';
import { fitJson } from './fit-payload.ts';
import { describeConnectFailure, serverCredentials } from './nats-target.ts';
import { withoutCredentials } from '../../shared/nats-credentials.ts';

export interface NatsSinkOptions {
  servers: string | string[];
  /** Credentials for the driver's connection; never handed to the harness. */
  user?: string;
  pass?: string;
  token?: string;
  /** Stop trying at this time (ms since epoch): the run's deadline. */
  deliverBy: number;
  /** Where undelivered messages go when NATS never comes back (default: stdout, i.e. the pod log). */
  fallback?: (line: string) => void;
  spillDir?: string;
  maxMemoryBytes?: number;
  /** Messages published per round trip. */
  window?: number;
  /**
   * Which run of this run id this is, when the id can be used again: a cluster run id is `<ns>_<name>` (users rely
   * on it) and a Run may be deleted and re-created under its name; the dispatcher passes the Run's uid. It goes
   * into every Nats-Msg-Id, so the new run's messages are not taken for retries of the old one's.
   */
  attempt?: string;
  /** Dedup window of a stream this sink creates: bounds how long an outage may last without duplicates. */
  duplicateWindowMs?: number;
  /** Hold the first publish until the run's start_container completed/failed event is on the stream, at most this long. */
  awaitPodStartMs?: number;
  /** Called when the sink, connected and ready to publish, starts holding (tests observe the hold with it). */
  onHolding?: () => void;
  /** Where connection trouble is reported, one line each (default: stderr). Never carries credentials. */
  warn?: (message: string) => void;
  /**
   * The run's cancellation (SIGTERM in a Pod, Ctrl-C): from then on delivery is tried for at most cancelGraceMs
   * (default 5 s) more, so what cannot be delivered reaches the pod log before the Pod is killed.
   */
  signal?: AbortSignal;
  cancelGraceMs?: number;
}

interface Envelope {
  subject: string;
  msgId: string;
  runId: string;
  seq: number;
  kind: 'event' | 'result';
  type: string;
  time: string;
  /** The payload, already fitted to the server's max payload when first published. */
  data: string;
}

const HEADER_ROOM = 1024;

export class NatsSink implements EventSink {
  private readonly options: NatsSinkOptions;
  private readonly queue: SpillQueue;
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private streamReady = false;
  private pumping: Promise<void> | undefined;
  private closing = false;
  private wake: (() => void) | undefined;
  /** Counters for tests, the bench and the pod log. */
  readonly stats = { published: 0, retried: 0, truncated: 0, undelivered: 0, podStart: 'not_awaited' as 'not_awaited' | 'seen' | 'timed_out', heldMs: 0 };
  /** When holding for the Pod's start gives up (set at the first attempt, so retries after an outage share it). */
  private holdUntil: number | undefined;
  private holdDone = false;
  private connecting: Promise<void> | undefined;
  /** The last connection problem reported (reported again only when it changes). */
  private trouble: string | undefined;
  /** Set when the configuration can never connect (a malformed URL): nothing is retried. */
  private unusable: Error | undefined;

  /** When delivery is given up: the run's deadline, or sooner once the run is cancelled. */
  private deliverBy: number;

  constructor(options: NatsSinkOptions) {
    this.options = options;
    this.deliverBy = options.deliverBy;
    this.queue = new SpillQueue(options.spillDir ?? tmpdir(), options.maxMemoryBytes);
    if (options.signal?.aborted) this.onCancel();
    else options.signal?.addEventListener('abort', this.onCancel, { once: true });
    // Connect now, not at the first event: a wrong URL is reported before the run has done anything.
    this.ensureConnected().catch(() => undefined);
  }

  private readonly onCancel = () => {
    this.deliverBy = Math.min(this.deliverBy, Date.now() + (this.options.cancelGraceMs ?? 5000));
    if (this.queue.length > 0) this.kick(); // a pump pausing between retries looks at the new limit now
  };

  event(record: SequencedEvent): void {
    this.enqueue({
      subject: eventSubject(record.runId, record.event.type),
      msgId: `${this.msgIdPrefix(record.runId)}:${record.seq}`,
      runId: record.runId,
      seq: record.seq,
      kind: 'event',
      type: record.event.type,
      time: record.event.timestamp,
      data: JSON.stringify(record.event),
    });
  }

  result(result: RunResult): void {
    this.enqueue({
      subject: resultSubject(result.run_id),
      msgId: `${this.msgIdPrefix(result.run_id)}:result`,
      runId: result.run_id,
      seq: result.event_count + 1,
      kind: 'result',
      type: 'result',
      time: result.finished_at,
      data: JSON.stringify(result),
    });
  }

  private msgIdPrefix(runId: string): string {
    return this.options.attempt ? `${runId}:${this.options.attempt}` : runId;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.options.signal?.removeEventListener('abort', this.onCancel);
    this.kick();
    await this.pumping;
    // Whatever could not be delivered by the deadline goes to the pod log, so it is never silently lost.
    const left = this.queue.drain();
    const fallback = this.options.fallback ?? ((line: string) => process.stdout.write(`${line}\n`));
    for (const item of left) {
      const envelope = JSON.parse(item) as Envelope;
      fallback(JSON.stringify({ undelivered: true, subject: envelope.subject, run_id: envelope.runId, seq: envelope.seq, data: JSON.parse(envelope.data) }));
    }
    this.stats.undelivered += left.length;
    this.queue.dispose();
    await this.connecting?.catch(() => undefined); // the connection begun in the constructor, if still under way
    await this.nc?.close().catch(() => undefined);
  }

  private enqueue(envelope: Envelope): void {
    this.queue.push(JSON.stringify(envelope));
    this.kick();
  }

  private kick(): void {
    if (this.wake) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    }
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      if (this.queue.length > 0 && !this.closing && !this.unusable && Date.now() <= this.deliverBy) this.kick();
    });
  }

  /** Connects once at a time; an unreachable server fails fast here and the pump retries until the deadline. */
  private ensureConnected(): Promise<void> {
    if (this.unusable) return Promise.reject(this.unusable);
    if (this.nc && !this.nc.isClosed()) return Promise.resolve();
    this.connecting ??= this.connect().then(
      () => {
        this.connecting = undefined;
        if (this.trouble !== undefined) this.warn(`NATS ${this.serversForDisplay()} reachable again; delivering ${this.queue.length} queued message(s)`);
        this.trouble = undefined;
      },
      (error: unknown) => {
        this.connecting = undefined;
        this.reportTrouble(error);
        throw error;
      },
    );
    return this.connecting;
  }

  private serversForDisplay(): string {
    return this.serverList().map(withoutCredentials).join(', ');
  }

  private serverList(): string[] {
    return typeof this.options.servers === 'string' ? [this.options.servers] : this.options.servers;
  }

  private warn(message: string): void {
    (this.options.warn ?? ((line: string) => process.stderr.write(`warning: ${line}\n`)))(message);
  }

  private reportTrouble(error: unknown): void {
    const { user, pass, token } = this.options;
    const secrets = [...serverCredentials(this.serverList()), ...[user, pass, token].filter((s): s is string => Boolean(s))];
    const failure = describeConnectFailure(error, secrets);
    if (failure.permanent) this.unusable = error instanceof Error ? error : new Error(failure.reason);
    if (failure.reason === this.trouble) return;
    this.trouble = failure.reason;
    const what = failure.permanent
      ? 'nothing will be published; the run goes on and its events are written as NDJSON (undelivered) when it ends'
      : `the run goes on; its events are queued and retried until ${new Date(this.deliverBy).toISOString()}, then written as NDJSON (undelivered)`;
    this.warn(`cannot connect to NATS ${this.serversForDisplay()}: ${failure.reason}; ${what}`);
  }

  private async connect(): Promise<void> {
    const { servers, user, pass, token } = this.options;
    this.nc = await connect({
      servers,
      user,
      pass,
      token,
      name: 'tcab-driver',
      // Once connected, the client itself reconnects through later outages; publishes fail meanwhile and the
      // pump retries them in order.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 2000,
    });
    this.js = jetstream(this.nc, { timeout: 2000 });
    this.streamReady = false;
  }

  private async ensureStream(): Promise<void> {
    if (this.streamReady || !this.nc) return;
    await ensureRunStream(await jetstreamManager(this.nc, { timeout: 2000 }), this.options.duplicateWindowMs);
    this.streamReady = true;
  }

  private maxPayload(): number {
    return (this.nc?.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM;
  }

  private async pump(): Promise<void> {
    let backoff = 100;
    while (this.queue.length > 0) {
      if (Date.now() > this.deliverBy || this.unusable) return; // give up: close() logs the rest
      try {
        await this.ensureConnected();
        await this.ensureStream();
        await this.holdForPodStart((JSON.parse(this.queue.peek(1)[0]!) as Envelope).runId);
        const batch = this.queue.peek(this.options.window ?? 64).map((item) => JSON.parse(item) as Envelope);
        const acks = await Promise.allSettled(batch.map((envelope) => this.publish(envelope)));
        const firstFailure = acks.findIndex((a) => a.status === 'rejected');
        const delivered = firstFailure === -1 ? batch.length : firstFailure;
        this.queue.drop(delivered);
        this.stats.published += delivered;
        if (firstFailure !== -1) {
          this.stats.retried += batch.length - delivered;
          this.streamReady = false; // the server may have restarted without our stream
          throw (acks[firstFailure] as PromiseRejectedResult).reason;
        }
        backoff = 100;
      } catch {
        if (this.unusable) return;
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  private async holdForPodStart(runId: string): Promise<void> {
    const wait = this.options.awaitPodStartMs;
    if (!wait || this.holdDone) return;
    const began = Date.now();
    this.holdUntil ??= began + wait;
    let seen = false;
    if (this.holdUntil > began) {
      const consumer = await this.js!.consumers.get(STREAM_NAME, { filter_subjects: [eventSubject(runId, 'system')], deliver_policy: DeliverPolicy.All });
      const messages = await consumer.consume();
      this.options.onHolding?.();
      const timer = setTimeout(() => void messages.stop(), this.holdUntil - began);
      try {
        for await (const m of messages) {
          const event = m.json<{ stage?: string; status?: string }>();
          if (event.stage === 'start_container' && (event.status === 'completed' || event.status === 'failed')) {
            seen = true;
            break;
          }
        }
      } finally {
        clearTimeout(timer);
        await messages.close().catch(() => undefined);
      }
    }
    this.holdDone = true;
    this.stats.podStart = seen ? 'seen' : 'timed_out';
    this.stats.heldMs += Date.now() - began;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.min(ms, Math.max(0, this.deliverBy - Date.now())));
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async publish(envelope: Envelope): Promise<void> {
    const fitted = fitJson(JSON.parse(envelope.data), this.maxPayload());
    if (fitted.truncated) this.stats.truncated += 1;
    const h = natsHeaders();
    h.set(HEADER.runId, envelope.runId);
    h.set(HEADER.seq, String(envelope.seq));
    h.set(HEADER.kind, envelope.kind);
    h.set('ce-specversion', '1.0');
    h.set('ce-id', envelope.msgId);
    h.set('ce-source', 'urn:tcab:driver');
    h.set('ce-type', envelope.kind === 'result' ? 'dev.tcab.run.result' : `dev.tcab.harness.event.${envelope.type}`);
    h.set('ce-subject', envelope.runId);
    h.set('ce-time', envelope.time);
    h.set('content-type', 'application/json');
    await this.js!.publish(envelope.subject, fitted.json, { msgID: envelope.msgId, headers: h, timeout: 2000 });
  }
}
