// Reads a run's events back from JetStream with an ordered consumer: replay from the first event, then live.
// Used by `tcab events follow` (one run, stops at the result) and `tcab events tail` (all runs, live).
// Each message is decoded alone (stream-message.ts): a hostile one costs that message, never the stream.
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { HarnessEventType } from '../shared/events.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { ensureRunStream } from '../shared/run-stream.ts';
import { ALL_RUNS_SUBJECT, STREAM_NAME, eventSubject, eventTypeSubject, resultSubject, runSubjects } from '../shared/subjects.ts';
import { InfrastructureError } from '../shared/exit-codes.ts';
import { shownServers, withoutCredentials } from '../shared/nats-credentials.ts';
import { decodeStreamMessage } from './stream-message.ts';
import type { StreamItem } from './stream-message.ts';

export type { StreamItem } from './stream-message.ts';

export interface ReadOptions {
  /** One URL, or several separated by commas (a cluster's seeds). */
  servers: string;
  /** One run (already checked against shared/run-id.ts); omitted = all runs. */
  runId?: string;
  type?: HarnessEventType;
  /** true: from the first stored event; false: only new ones. */
  replay: boolean;
  /** Stop after the run's result (follow). */
  untilResult: boolean;
  signal?: AbortSignal;
  user?: string;
  pass?: string;
  token?: string;
  now?: () => Date;
}

/** The server list as the client takes it; a value that is not a URL is the caller's mistake (exit 2). */
export function parseServers(servers: string): string[] {
  const list = servers.split(',').map((s) => s.trim());
  for (const server of list) {
    let url: URL | undefined;
    try {
      url = new URL(server.includes('://') ? server : `nats://${server}`);
    } catch {
      url = undefined;
    }
    if (!url?.hostname) throw new InvalidInputError('--nats', `"${withoutCredentials(server)}" is not a NATS server URL (e.g. nats://127.0.0.1:4222)`);
  }
  return list;
}

function reasonOf(error: unknown): string {
  const e = error as Error & { cause?: unknown };
  const cause = e.cause instanceof Error && e.cause.message !== e.message ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
}

function filterSubjects(options: ReadOptions): string[] {
  if (options.runId) {
    return options.type ? [eventSubject(options.runId, options.type), resultSubject(options.runId)] : [runSubjects(options.runId)];
  }
  return [options.type ? eventTypeSubject(options.type) : ALL_RUNS_SUBJECT];
}

export async function* readRunStream(options: ReadOptions): AsyncGenerator<StreamItem> {
  const servers = parseServers(options.servers);
  const where = `NATS at ${shownServers(options.servers)}`;
  let nc: NatsConnection;
  try {
    nc = await connect({ servers, user: options.user, pass: options.pass, token: options.token, name: 'tcab-events' });
  } catch (error) {
    throw new InfrastructureError(`cannot connect to ${where}: ${reasonOf(error)}`, { cause: error });
  }
  const now = options.now ?? (() => new Date());
  try {
    let messages;
    try {
      // Following before the first run anywhere is normal (right after install): the stream is made, then waited on.
      await ensureRunStream(await jetstreamManager(nc));
      const consumer = await jetstream(nc).consumers.get(STREAM_NAME, {
        filter_subjects: filterSubjects(options),
        deliver_policy: options.replay ? DeliverPolicy.All : DeliverPolicy.New,
      });
      messages = await consumer.consume();
    } catch (error) {
      throw new InfrastructureError(`cannot read the run stream ${STREAM_NAME} from ${where}: ${reasonOf(error)}`, { cause: error });
    }
    options.signal?.addEventListener('abort', () => void messages.stop(), { once: true });
    for await (const m of messages) {
      const item = decodeStreamMessage({ subject: m.subject, header: (name) => m.headers?.get(name), data: m.data }, now);
      yield item;
      if (options.untilResult && (item.kind === 'result' || (item.kind === 'invalid' && item.isResult))) break;
    }
  } finally {
    await nc.close();
  }
}
