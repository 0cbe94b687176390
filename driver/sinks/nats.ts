// Publishes a run's events and result to NATS JetStream through nats/ (connection, envelope, stream, the Pod-start
// wait); this module is only the queue, the pump and the spill.
// - Order: one pump publishes from one ordered queue; after a failure it resumes from the first unacknowledged
//   message, and `Nats-Msg-Id` (run id + attempt + sequence, nats/envelope.ts) lets the server drop the retried
//   copies that had landed.
// - Each payload is serialized once, when it is queued; it is parsed again only if it is over the server's max
//   payload (cut, with a marker, fit-payload.ts) or written to the pod log as undelivered.
// - NATS unreachable: the driver keeps going; the queue is bounded in memory and spills to disk. On close the sink
//   waits for delivery until the run's deadline, then writes what it could not deliver to stdout as NDJSON.
//   The sink connects as soon as it is made and says at once (stderr) when it cannot: the URL without
//   credentials and why (malformed: the parse error, never retried; refused, DNS, no answer: retried).
// - In a driver Pod, the first publish waits (bounded) until the dispatcher has put the Pod's start_container end
//   on the stream (nats/pod-start.ts says why), so the run's stream is in the order things happened.
import { tmpdir } from 'node:os';
import type { RunResult } from '../../shared/run.ts';
import type { RunProgress } from '../../shared/run-progress.ts';
import { eventEnvelope, resultEnvelope } from '../../nats/envelope.ts';
import type { Envelope } from '../../nats/envelope.ts';
import { RunPublisher } from '../../nats/publisher.ts';
import { natsSecrets } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { describeConnectFailure, shownServers } from '../../nats/server-urls.ts';
import { eventJson } from './sink.ts';
import type { EventSink, SequencedEvent } from './sink.ts';
import { SpillQueue } from './spill-queue.ts';
import type { SpillCodec } from './spill-queue.ts';
import { fitJsonText } from './fit-payload.ts';

export interface NatsSinkOptions {
  /** Servers and credentials (nats/settings.ts); the credentials are never handed to the harness. */
  settings: NatsSettings;
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
  /** Which attempt of a cluster Run this is (1, 2, ...): the Tcab-Attempt header of every message, for readers. */
  attemptNumber?: number;
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

/** One queued message: its envelope and its payload, serialized once (JSON text). */
interface Queued {
  envelope: Envelope;
  runId: string;
  seq: number;
  payload: string;
}

/** Only a spilled message is serialized as a whole; weighed by its payload plus a fixed allowance for the rest. */
const QUEUED: SpillCodec<Queued> = { size: (q) => q.payload.length + 512, encode: (q) => JSON.stringify(q), decode: (line) => JSON.parse(line) as Queued };

export class NatsSink implements EventSink {
  private readonly options: NatsSinkOptions;
  private readonly queue: SpillQueue<Queued>;
  private publisher: RunPublisher | undefined;
  private pumping: Promise<void> | undefined;
  /** A progress message on its way (close waits for it, so the connection is not closed under it). */
  private progressing: Promise<void> = Promise.resolve();
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
    this.queue = new SpillQueue(options.spillDir ?? tmpdir(), options.maxMemoryBytes, QUEUED);
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
    this.enqueue({ envelope: eventEnvelope(record.runId, this.options.attempt, record.seq, record.event, this.options.attemptNumber), runId: record.runId, seq: record.seq, payload: eventJson(record) });
  }

  result(result: RunResult): void {
    this.enqueue({ envelope: resultEnvelope(result, this.options.attempt, this.options.attemptNumber), runId: result.run_id, seq: result.event_count + 1, payload: JSON.stringify(result) });
  }

  /** Sent once, beside the queue (it is no event of the stream); a failure is reported and otherwise costs nothing. */
  progress(runId: string, progress: RunProgress): void {
    if (this.closing || this.unusable) return;
    const sending = this.ensureConnected()
      .then(() => this.publisher!.publishProgress(runId, JSON.stringify(progress)))
      .catch((error: unknown) => this.warn(`the run's progress (${progress.phase}) was not sent: ${(error as Error).message}`));
    this.progressing = Promise.all([this.progressing, sending]).then(() => undefined);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.options.signal?.removeEventListener('abort', this.onCancel);
    this.kick();
    await this.pumping;
    await this.progressing;
    // Whatever could not be delivered by the deadline goes to the pod log, so it is never silently lost. The
    // payload is JSON text already: it is spliced in, not parsed and serialized again.
    const left = this.queue.drain();
    const fallback = this.options.fallback ?? ((line: string) => process.stdout.write(`${line}\n`));
    for (const q of left) fallback(`{"undelivered":true,"subject":${JSON.stringify(q.envelope.subject)},"run_id":${JSON.stringify(q.runId)},"seq":${q.seq},"data":${q.payload}}`);
    this.stats.undelivered += left.length;
    this.queue.dispose();
    await this.connecting?.catch(() => undefined); // the connection begun in the constructor, if still under way
    await this.publisher?.close();
  }

  private enqueue(item: Queued): void {
    this.queue.push(item);
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
    if (this.publisher && !this.publisher.closed) return Promise.resolve();
    this.connecting ??= RunPublisher.connect(this.options.settings, this.options.duplicateWindowMs).then(
      (publisher) => {
        this.publisher = publisher;
        this.connecting = undefined;
        if (this.trouble !== undefined) this.warn(`NATS ${shownServers(this.options.settings.servers)} reachable again; delivering ${this.queue.length} queued message(s)`);
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

  private warn(message: string): void {
    (this.options.warn ?? ((line: string) => process.stderr.write(`warning: ${line}\n`)))(message);
  }

  private reportTrouble(error: unknown): void {
    const failure = describeConnectFailure(error, natsSecrets(this.options.settings));
    if (failure.permanent) this.unusable = error instanceof Error ? error : new Error(failure.reason);
    if (failure.reason === this.trouble) return;
    this.trouble = failure.reason;
    const what = failure.permanent
      ? 'nothing will be published; the run goes on and its events are written as NDJSON (undelivered) when it ends'
      : `the run goes on; its events are queued and retried until ${new Date(this.deliverBy).toISOString()}, then written as NDJSON (undelivered)`;
    this.warn(`cannot connect to NATS ${shownServers(this.options.settings.servers)}: ${failure.reason}; ${what}`);
  }

  private async pump(): Promise<void> {
    let backoff = 100;
    while (this.queue.length > 0) {
      if (Date.now() > this.deliverBy || this.unusable) return; // give up: close() logs the rest
      try {
        await this.ensureConnected();
        const publisher = this.publisher!;
        await publisher.ensureStream();
        await this.holdForPodStart(publisher, this.queue.peek(1)[0]!.runId);
        const batch = this.queue.peek(this.options.window ?? 64);
        const acks = await Promise.allSettled(batch.map((q) => publisher.publish(q.envelope, this.fitted(q, publisher.maxPayload))));
        const firstFailure = acks.findIndex((a) => a.status === 'rejected');
        const delivered = firstFailure === -1 ? batch.length : firstFailure;
        this.queue.drop(delivered);
        this.stats.published += delivered;
        if (firstFailure !== -1) {
          this.stats.retried += batch.length - delivered;
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

  /** The payload cut to the server's max payload; the cut one replaces the queued one, so a retry does not cut again. */
  private fitted(q: Queued, maxPayload: number): string {
    const fitted = fitJsonText(q.payload, maxPayload);
    if (fitted.truncated) {
      this.stats.truncated += 1;
      q.payload = fitted.json;
    }
    return q.payload;
  }

  private async holdForPodStart(publisher: RunPublisher, runId: string): Promise<void> {
    const wait = this.options.awaitPodStartMs;
    if (!wait || this.holdDone) return;
    const began = Date.now();
    this.holdUntil ??= began + wait;
    const outcome = this.holdUntil > began ? await publisher.waitForPodStart(runId, this.holdUntil, this.options.onHolding) : 'timed_out';
    this.holdDone = true;
    this.stats.podStart = outcome;
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
}
