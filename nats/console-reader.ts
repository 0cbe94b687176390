// What the operator console reads from the run stream (issue 23), on a connection it is given:
//   - followActivity: ONE ordered consumer on `tcab.run.*.event.>` with deliver policy last-per-subject: it first
//     delivers the last stored event of each (run, type) subject, so every run has a current activity at start
//     without a direct get per run, then every new event. (Direct get by last_by_subj needs one request per run and
//     per type and a list of runs; one consumer needs neither.)
//   - openRunFeed: an ordered consumer on one run's subjects from stream sequence after+1: replay, then live. The
//     stream sequence is unique and increasing, so "resume after n" has no gap and no duplicate. `caught-up` is
//     reported when the message delivered has nothing pending after it, or at once when nothing is stored after n.
// Each message is decoded alone (stream-message.ts): a hostile one becomes one `unknown` event with its reason.
import type { NatsConnection } from '@nats-io/transport-node';
import { PermissionViolationError } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { HarnessEvent } from '../shared/events.ts';
import type { RunResult } from '../shared/run.ts';
import { parseSubject, runSubjects } from './envelope.ts';
import { STREAM_NAME, ensureRunStream } from './stream.ts';
import { decodeStreamMessage } from './stream-message.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';

export const ALL_EVENTS_SUBJECT = 'tcab.run.*.event.>';

/** One event as JetStream delivered it. */
export interface ConsoleStreamEvent {
  runId: string;
  /** JetStream stream sequence. */
  seq: number;
  /** The envelope's Tcab-Seq header (0 for the dispatcher's lifecycle events). */
  runSeq: number;
  /** When JetStream stored it (RFC 3339). */
  at: string;
  event: HarnessEvent;
  /** The message broke the contract: `event` is it as an unknown event, this says why. */
  invalid?: string;
}

export interface RunFeedHandlers {
  onEvents(events: ConsoleStreamEvent[]): void;
  onResult(seq: number, result: RunResult): void;
  onCaughtUp(): void;
  onError(error: Error): void;
}

export interface StopReading {
  stop(): Promise<void>;
}

type Decoded = { kind: 'event'; event: ConsoleStreamEvent } | { kind: 'result'; seq: number; result: RunResult };

function decode(m: JsMsg): Decoded {
  const at = m.time.toISOString();
  const item = decodeStreamMessage({ subject: m.subject, header: (name) => m.headers?.get(name), data: m.data }, () => m.time);
  // The subject is the stream's (its filter admitted it): the run id from it, not from a header a publisher chose.
  const runId = parseSubject(m.subject)?.runId ?? item.runId;
  if (item.kind === 'result') return { kind: 'result', seq: m.seq, result: item.result };
  if (item.kind === 'event') return { kind: 'event', event: { runId, seq: m.seq, runSeq: item.seq, at, event: item.event } };
  return { kind: 'event', event: { runId, seq: m.seq, runSeq: item.seq, at, event: item.event, invalid: item.reason } };
}

/** Reads until stopped; what ends the read otherwise goes to onError. Batches what one pull delivered. */
async function pump(messages: ConsumerMessages, onMessage: (m: JsMsg) => void, onError: (error: Error) => void): Promise<void> {
  try {
    for await (const m of messages) onMessage(m);
  } catch (error) {
    onError(error instanceof Error ? error : new Error(String(error)));
  }
}

export async function followActivity(nc: NatsConnection, onEvents: (events: ConsoleStreamEvent[]) => void, onError: (error: Error) => void): Promise<StopReading> {
  const consumer = await jetstream(nc).consumers.get(STREAM_NAME, { filter_subjects: ALL_EVENTS_SUBJECT, deliver_policy: DeliverPolicy.LastPerSubject });
  const messages = await consumer.consume();
  void pump(
    messages,
    (m) => {
      const d = decode(m);
      if (d.kind === 'event') onEvents([d.event]);
    },
    onError,
  );
  return { stop: async () => void (await messages.close()) };
}

/** Whether the stream holds any message of `filter` after sequence `after` (a direct get, no consumer). */
async function storedAfter(nc: NatsConnection, filter: string, after: number): Promise<boolean> {
  const jsm = await jetstreamManager(nc);
  const m = await jsm.direct.getMessage(STREAM_NAME, { seq: after + 1, next_by_subj: filter });
  return m !== null;
}

export async function openRunFeed(nc: NatsConnection, runId: string, after: number, handlers: RunFeedHandlers): Promise<StopReading> {
  const filter = runSubjects(runId);
  const pending = await storedAfter(nc, filter, after);
  const consumer = await jetstream(nc).consumers.get(STREAM_NAME, {
    filter_subjects: filter,
    ...(after > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 } : { deliver_policy: DeliverPolicy.All }),
  });
  const messages = await consumer.consume();
  let caughtUp = !pending;
  if (caughtUp) handlers.onCaughtUp();
  void pump(
    messages,
    (m) => {
      const d = decode(m);
      if (d.kind === 'result') handlers.onResult(d.seq, d.result);
      else handlers.onEvents([d.event]);
      if (!caughtUp && m.info.pending === 0) {
        caughtUp = true;
        handlers.onCaughtUp();
      }
    },
    handlers.onError,
  );
  return { stop: async () => void (await messages.close()) };
}

/**
 * The console's own NATS connection (not the dispatcher's results connection: a slow browser's feed never delays a
 * result's ack). With a reader credential it uses the reader's inbox prefix, as `tcab events` does.
 */
export class ConsoleNats {
  private readonly nc: NatsConnection;
  /** The onError of every read open now: a refused permission is reported on the connection, not on the read. */
  private readonly listeners = new Set<(error: Error) => void>();

  private constructor(nc: NatsConnection) {
    this.nc = nc;
    void this.watchRefusals();
  }

  static async connect(settings: NatsSettings, options: { waitOnFirstConnect?: boolean } = {}): Promise<ConsoleNats> {
    const nc = await connectNats(settings, { name: 'tcab-console', ...options });
    try {
      // A console opened before the first run anywhere (right after install) finds the stream made, as `tcab events` does.
      await ensureRunStream(await jetstreamManager(nc));
    } catch (error) {
      await nc.close();
      throw error;
    }
    return new ConsoleNats(nc);
  }

  /** A credential that lacks a permission (a pull, its inbox) would leave a read waiting forever: say so instead. */
  private async watchRefusals(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError) for (const onError of this.listeners) onError(s.error);
    }
  }

  private async tracked(onError: (error: Error) => void, open: (onError: (error: Error) => void) => Promise<StopReading>): Promise<StopReading> {
    const reading = await open(onError);
    this.listeners.add(onError);
    return {
      stop: async () => {
        this.listeners.delete(onError);
        await reading.stop();
      },
    };
  }

  followActivity(onEvents: (events: ConsoleStreamEvent[]) => void, onError: (error: Error) => void): Promise<StopReading> {
    return this.tracked(onError, (e) => followActivity(this.nc, onEvents, e));
  }

  openRunFeed(runId: string, after: number, handlers: RunFeedHandlers): Promise<StopReading> {
    return this.tracked(handlers.onError, (e) => openRunFeed(this.nc, runId, after, { ...handlers, onError: e }));
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
