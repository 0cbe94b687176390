// Reads a run's events back from JetStream with an ordered consumer: replay from the first event, then live.
// Used by `tcab events follow` (one run, stops at the result) and `tcab events tail` (all runs, live).
// Each message is decoded alone (stream-message.ts): a hostile one costs that message, never the stream.
import type { NatsConnection } from '@nats-io/transport-node';
import { PermissionViolationError } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { HarnessEventType } from '../shared/events.ts';
import { InfrastructureError } from '../shared/exit-codes.ts';
import { anotherAttemptMayFollow } from '../shared/run.ts';
import { ALL_RUNS_SUBJECT, eventSubject, eventTypeSubject, resultSubject, runSubjects } from './envelope.ts';
import { STREAM_NAME, ensureRunStream } from './stream.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';
import { reasonOf, shownServers } from './server-urls.ts';
import { decodeStreamMessage } from './stream-message.ts';
import { READER_INBOX_PREFIX } from './auth/permissions.ts';
import type { StreamItem } from './stream-message.ts';

export type { StreamItem } from './stream-message.ts';

export interface ReadOptions {
  settings: NatsSettings;
  /** One run (already checked against shared/run-id.ts); omitted = all runs. */
  runId?: string;
  type?: HarnessEventType;
  /** true: from the first stored event; false: only new ones. */
  replay: boolean;
  /** Stop after the run's result (follow): its last attempt's, read past a result another attempt may follow. */
  untilResult: boolean;
  signal?: AbortSignal;
  now?: () => Date;
}

/**
 * The one subject the consumer is filtered on. One, not a list: nats.js creates a consumer with a single filter
 * through `$JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>`, the subject a reader credential may use (a list goes
 * through the bare `...CREATE.<stream>`, whose body names the consumer, which could then be the dispatcher's
 * results consumer: nats/auth/permissions.ts). One run with a type is read whole and the other types skipped here.
 */
function filterSubject(options: ReadOptions): string {
  if (options.runId) return runSubjects(options.runId);
  return options.type ? eventTypeSubject(options.type) : ALL_RUNS_SUBJECT;
}

/** Whether a message of the filtered subject is one the reader asked for (its type, or the run's result). */
function wanted(options: ReadOptions, subject: string): boolean {
  if (!options.runId || !options.type) return true;
  return subject === eventSubject(options.runId, options.type) || subject === resultSubject(options.runId);
}

export async function* readRunStream(options: ReadOptions): AsyncGenerator<StreamItem> {
  const where = `NATS at ${shownServers(options.settings.servers)}`;
  let nc: NatsConnection;
  try {
    // A reader credential may subscribe only to the reader's inbox (nats/auth): use it unless told otherwise.
    nc = await connectNats({ ...options.settings, inboxPrefix: options.settings.inboxPrefix ?? READER_INBOX_PREFIX }, { name: 'tcab-events' });
  } catch (error) {
    throw new InfrastructureError(`cannot connect to ${where}: ${reasonOf(error)}`, { cause: error });
  }
  const now = options.now ?? (() => new Date());
  const cannotRead = (error: unknown) => new InfrastructureError(`cannot read the run stream ${STREAM_NAME} from ${where}: ${reasonOf(error)}`, { cause: error });
  // A permission the credential lacks (a pull, its inbox) is reported on the connection, not on the pull: the read
  // would wait forever. Watched from before the first request, it ends the read instead (exit 3).
  const refusal = Promise.withResolvers<Error>();
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof PermissionViolationError) return refusal.resolve(s.error);
  })();
  try {
    let messages: ConsumerMessages;
    try {
      // Following before the first run anywhere is normal (right after install): the stream is made, then waited on.
      await ensureRunStream(await jetstreamManager(nc));
      const consumer = await jetstream(nc).consumers.get(STREAM_NAME, {
        filter_subjects: filterSubject(options),
        deliver_policy: options.replay ? DeliverPolicy.All : DeliverPolicy.New,
      });
      messages = await consumer.consume();
    } catch (error) {
      throw cannotRead(error);
    }
    void refusal.promise.then((error) => messages.stop(error));
    options.signal?.addEventListener('abort', () => void messages.stop(), { once: true });
    try {
      for await (const m of messages) {
        if (!wanted(options, m.subject)) continue;
        const item = decodeStreamMessage({ subject: m.subject, header: (name) => m.headers?.get(name), data: m.data }, now);
        yield item;
        if (options.untilResult && ((item.kind === 'result' && !anotherAttemptMayFollow(item.result)) || (item.kind === 'invalid' && item.isResult))) break;
      }
    } catch (error) {
      throw cannotRead(error);
    }
  } finally {
    await nc.close();
  }
}
