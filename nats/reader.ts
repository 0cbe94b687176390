// Reads a run's events back from JetStream with an ordered consumer: replay from the first event, then live.
// Used by `tcab events follow` (one run, stops at the result) and `tcab events tail` (all runs, live).
// Each message is decoded alone (stream-message.ts): a hostile one costs that message, never the stream.
import type { NatsConnection } from '@nats-io/transport-node';
import { PermissionViolationError } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { HarnessEventType } from '../shared/events.ts';
import { InfrastructureError } from '../shared/exit-codes.ts';
import { anotherAttemptMayFollow } from '../shared/run.ts';
import type { RunResult } from '../shared/run.ts';
import { ALL_RUNS_SUBJECT, eventSubject, eventTypeSubject, resultSubject, runSubjects } from './envelope.ts';
import { STREAM_NAME, ensureRunStream } from './stream.ts';
import { connectNats } from './settings.ts';
import type { NatsSettings } from './settings.ts';
import { reasonOf, shownServers } from './server-urls.ts';
import { decodeStreamMessage } from './stream-message.ts';
import { nextAttemptOverdue, nextAttemptWait } from './next-attempt.ts';
import type { NextAttemptWait } from './next-attempt.ts';
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
  /**
   * With untilResult: how long to read on, after a result another attempt may follow, for a message of a later
   * attempt (nats/next-attempt.ts). None by then: the iteration ends there (that result stands) and
   * onNoNextAttempt is told. Omitted: no bound (the dispatcher is trusted to start the attempt).
   */
  nextAttemptWithinMs?: number;
  onNoNextAttempt?: (result: RunResult) => void;
  signal?: AbortSignal;
  now?: () => Date;
  /** Milliseconds of a monotonic clock, for the bound above (performance.now). */
  clock?: () => number;
}

const TIMED_OUT = Symbol('timed out');

/** `promise`, or TIMED_OUT once `ms` have passed first (a value already there wins: it settles before any timer). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  // setTimeout fires at once past 2^31-1 ms: a longer wait is taken in steps (the caller asks again).
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.min(Math.max(0, ms), 2 ** 31 - 1))));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
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
    const clock = options.clock ?? (() => performance.now());
    const bound = options.untilResult ? options.nextAttemptWithinMs : undefined;
    const iterator = messages[Symbol.asyncIterator]();
    let next: Promise<IteratorResult<JsMsg>> | undefined;
    let wait: NextAttemptWait | undefined;
    try {
      for (;;) {
        next ??= iterator.next();
        // The timer only wakes the reader; whether it stops is nextAttemptOverdue's to say.
        const got = wait ? await within(next, wait.deadline - clock()) : await next;
        if (got === TIMED_OUT) {
          if (!nextAttemptOverdue(wait, clock())) continue;
          options.onNoNextAttempt?.(wait!.result);
          break;
        }
        next = undefined;
        if (got.done) break;
        const m = got.value;
        // A type the reader did not ask for still shows a later attempt (never a result: those are always wanted).
        const asked = wanted(options, m.subject);
        if (!asked && !wait) continue;
        const item = decodeStreamMessage({ subject: m.subject, header: (name) => m.headers?.get(name), data: m.data }, now);
        if (bound !== undefined) wait = nextAttemptWait(wait, item, clock(), bound);
        if (!asked) continue;
        yield item;
        if (options.untilResult && ((item.kind === 'result' && !anotherAttemptMayFollow(item.result)) || (item.kind === 'invalid' && item.isResult))) break;
      }
    } catch (error) {
      throw cannotRead(error);
    } finally {
      // A pull still pending (the bound passed) settles when the consumer stops: nobody awaits it any more.
      next?.catch(() => undefined);
      messages.stop();
    }
  } finally {
    await nc.close();
  }
}
