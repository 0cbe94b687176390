// Reads a run's events back from JetStream with an ordered consumer: replay from the first event, then live.
// Used by `tcab events follow` (one run, stops at the result) and `tcab events tail` (all runs, live).
import { connect } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { HarnessEvent } from '../shared/events.ts';
import type { HarnessEventType } from '../shared/events.ts';
import { RunResult } from '../shared/run.ts';
import { ensureRunStream } from '../shared/run-stream.ts';
import { ALL_RUNS_SUBJECT, HEADER, STREAM_NAME, eventSubject, eventTypeSubject, resultSubject, runSubjects } from '../shared/subjects.ts';

export type StreamItem =
  | { kind: 'event'; runId: string; seq: number; event: HarnessEvent }
  | { kind: 'result'; runId: string; result: RunResult }
  | { kind: 'invalid'; subject: string; error: string };

export interface ReadOptions {
  servers: string | string[];
  /** One run; omitted = all runs. */
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
}

function filterSubjects(options: ReadOptions): string[] {
  if (options.runId) {
    return options.type ? [eventSubject(options.runId, options.type), resultSubject(options.runId)] : [runSubjects(options.runId)];
  }
  return [options.type ? eventTypeSubject(options.type) : ALL_RUNS_SUBJECT];
}

export async function* readRunStream(options: ReadOptions): AsyncGenerator<StreamItem> {
  const nc = await connect({ servers: options.servers, user: options.user, pass: options.pass, token: options.token, name: 'tcab-events' });
  try {
    // Following before the first run anywhere is normal (right after install): the stream is made, then waited on.
    await ensureRunStream(await jetstreamManager(nc));
    const js = jetstream(nc);
    const consumer = await js.consumers.get(STREAM_NAME, {
      filter_subjects: filterSubjects(options),
      deliver_policy: options.replay ? DeliverPolicy.All : DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    options.signal?.addEventListener('abort', () => void messages.stop(), { once: true });
    for await (const m of messages) {
      const runId = m.headers?.get(HEADER.runId) ?? '';
      const kind = m.headers?.get(HEADER.kind);
      let data: unknown;
      try {
        data = m.json();
      } catch (error) {
        yield { kind: 'invalid', subject: m.subject, error: (error as Error).message };
        continue;
      }
      if (kind === 'result') {
        const parsed = RunResult.safeParse(data);
        yield parsed.success ? { kind: 'result', runId, result: parsed.data } : { kind: 'invalid', subject: m.subject, error: parsed.error.message };
        if (options.untilResult) break;
        continue;
      }
      const parsed = HarnessEvent.safeParse(data);
      yield parsed.success
        ? { kind: 'event', runId, seq: Number(m.headers?.get(HEADER.seq) ?? 0), event: parsed.data }
        : { kind: 'invalid', subject: m.subject, error: parsed.error.message };
    }
  } finally {
    await nc.close();
  }
}
