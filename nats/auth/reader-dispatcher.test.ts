// The reader and dispatcher credentials against a real nats-server in operator mode: `tcab events follow`'s reader
// works with the read-only credential (ordered consumer, replay to the result), which can publish nothing and
// cannot touch the dispatcher's results consumer; the dispatcher's in-memory credential runs the result consumer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { NatsSink } from '../../driver/sinks/nats.ts';
import type { RunResult } from '../../shared/run.ts';
import { AuthNats, agentEvent, nextServerError, rejection, runResult } from '../../test/support/nats-auth.ts';
import { readRunStream } from '../reader.ts';
import type { StreamItem } from '../reader.ts';
import { RESULTS_CONSUMER, RunStream } from '../result-consumer.ts';
import { connectNats } from '../settings.ts';
import type { NatsSettings } from '../settings.ts';
import { STREAM_NAME } from '../stream.ts';
import { READER_INBOX_PREFIX } from './permissions.ts';

let nats: AuthNats;
let dispatcher: RunStream;
const results: Array<{ runId: string; result: RunResult }> = [];
let resultSeen: PromiseWithResolvers<void>;
beforeAll(async () => {
  nats = await AuthNats.start();
  dispatcher = await RunStream.connect(await nats.dispatcherSettings());
  resultSeen = Promise.withResolvers<void>();
  await dispatcher.consumeResults((runId, result, ack) => {
    results.push({ runId, result });
    ack();
    resultSeen.resolve();
  }, () => undefined);
  const { settings } = await nats.runSettings('r1');
  const sink = new NatsSink({ settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
  sink.event({ runId: 'r1', seq: 1, event: agentEvent('hello') });
  sink.result(runResult('r1', 'done', 1));
  await sink.close();
});
afterAll(async () => {
  await dispatcher?.close();
  await nats?.dispose();
});

async function consumerInfo(name: string) {
  const observer = await connectNats(await nats.dispatcherSettings(), { name: 'observer' });
  try {
    return await (await jetstreamManager(observer)).consumers.info(STREAM_NAME, name);
  } finally {
    await observer.close();
  }
}

describe('the dispatcher credential (in memory)', () => {
  it("runs the result consumer: the run's result reaches it and is acknowledged", async () => {
    await resultSeen.promise;
    expect(results).toEqual([{ runId: 'r1', result: expect.objectContaining({ run_id: 'r1', message: 'done' }) }]);
    expect(await consumerInfo(RESULTS_CONSUMER)).toMatchObject({ num_ack_pending: 0, num_pending: 0 });
  });
});

describe('the reader credential', () => {
  let settings: NatsSettings;
  let nc: NatsConnection;
  beforeAll(async () => {
    settings = await nats.readerSettings();
    nc = await connectNats({ ...settings, inboxPrefix: READER_INBOX_PREFIX }, { name: 'reader' });
  });
  afterAll(async () => {
    await nc?.close();
  });

  it("follows a run with `tcab events follow`'s reader, from the first event to the result", async () => {
    const items: StreamItem[] = [];
    for await (const item of readRunStream({ settings, runId: 'r1', replay: true, untilResult: true })) items.push(item);
    expect(items.map((i) => i.kind)).toEqual(['event', 'result']);
  });

  it('follows one event type of a run: that type and the result, with the same one-filter consumer', async () => {
    const kinds = async (type: 'agent' | 'system') => {
      const items: StreamItem[] = [];
      for await (const item of readRunStream({ settings, runId: 'r1', type, replay: true, untilResult: true })) items.push(item);
      return items.map((i) => (i.kind === 'event' ? i.event.type : i.kind));
    };
    expect(await kinds('agent')).toEqual(['agent', 'result']);
    expect(await kinds('system')).toEqual(['result']);
  });

  it('tails every run (an ordered consumer with one filter subject in its create subject)', async () => {
    const abort = new AbortController();
    for await (const item of readRunStream({ settings, replay: true, untilResult: true, signal: abort.signal })) {
      expect(item.kind).toBe('event');
      break;
    }
  });

  it('cannot publish to any run, through JetStream or core NATS; nothing lands', async () => {
    expect(await rejection(jetstream(nc, { timeout: 2000 }).publish('tcab.run.r1.result', '{}'))).toMatch(/Permissions Violation for Publish to "tcab.run.r1.result"/);
    const refused = nextServerError(nc);
    nc.publish('tcab.run.r2.event.agent', '{}');
    expect(await refused).toMatch(/Permissions Violation for Publish to "tcab.run.r2.event.agent"/);
    const info = await (await jetstreamManager(nc)).streams.info(STREAM_NAME, { subjects_filter: 'tcab.run.>' });
    expect(info.state.subjects).toEqual({ 'tcab.run.r1.event.agent': 1, 'tcab.run.r1.result': 1 });
  });

  it("cannot read, pull, ack, re-create or delete the dispatcher's results consumer, nor make a durable one, nor purge", async () => {
    const before = await consumerInfo(RESULTS_CONSUMER);
    const jsm = await jetstreamManager(nc);
    const api = '\\$JS\\.API';
    const attempts: Array<[RegExp, () => Promise<unknown>]> = [
      [new RegExp(`${api}\\.CONSUMER\\.INFO\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}"`), () => jsm.consumers.info(STREAM_NAME, RESULTS_CONSUMER)],
      [new RegExp(`${api}\\.CONSUMER\\.INFO\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}"`), async () => (await jetstream(nc).consumers.get(STREAM_NAME, RESULTS_CONSUMER)).next()],
      [new RegExp(`${api}\\.CONSUMER\\.MSG\\.NEXT\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}"`), () => nc.request(`$JS.API.CONSUMER.MSG.NEXT.${STREAM_NAME}.${RESULTS_CONSUMER}`, '{"batch":1}', { timeout: 2000 })],
      [new RegExp(`\\$JS\\.ACK\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}\\.`), () => nc.request(`$JS.ACK.${STREAM_NAME}.${RESULTS_CONSUMER}.1.1.1.1.0`, '+ACK', { timeout: 2000 })],
      [new RegExp(`${api}\\.CONSUMER\\.DELETE\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}"`), () => jsm.consumers.delete(STREAM_NAME, RESULTS_CONSUMER)],
      [new RegExp(`${api}\\.CONSUMER\\.CREATE\\.${STREAM_NAME}\\.${RESULTS_CONSUMER}\\.`), () => jsm.consumers.add(STREAM_NAME, { name: RESULTS_CONSUMER, durable_name: RESULTS_CONSUMER, filter_subject: 'tcab.run.*.result' })],
      [new RegExp(`${api}\\.CONSUMER\\.CREATE\\.${STREAM_NAME}\\.mine"`), () => jsm.consumers.add(STREAM_NAME, { durable_name: 'mine' })],
      [new RegExp(`${api}\\.CONSUMER\\.DURABLE\\.CREATE\\.${STREAM_NAME}\\.mine"`), () => jsm.consumers.add(STREAM_NAME, { durable_name: 'mine', filter_subjects: ['tcab.run.>'] })],
      [new RegExp(`${api}\\.STREAM\\.PURGE\\.${STREAM_NAME}"`), () => jsm.streams.purge(STREAM_NAME)],
    ];
    for (const [subject, attempt] of attempts) expect(await rejection(attempt())).toMatch(new RegExp(`Permissions Violation for Publish to "${subject.source}`));
    expect(await consumerInfo(RESULTS_CONSUMER)).toMatchObject({ delivered: before.delivered, ack_floor: before.ack_floor, config: before.config });
  });

  it('cannot reach the results consumer through a create that names it in the body only', async () => {
    const before = await consumerInfo(RESULTS_CONSUMER);
    const { durable_name: _, ...ephemeral } = before.config;
    const request = (subject: string, config: Record<string, unknown>) => nc.request(subject, JSON.stringify({ stream_name: STREAM_NAME, config }), { timeout: 2000 });
    // The bare create (a filter list) would turn the durable results consumer into an ephemeral one: not allowed.
    expect(await rejection(request(`$JS.API.CONSUMER.CREATE.${STREAM_NAME}`, { ...ephemeral, name: RESULTS_CONSUMER }))).toMatch(/Permissions Violation for Publish to "\$JS\.API\.CONSUMER\.CREATE\.TCAB_RUNS"/);
    // The allowed create names its consumer in the subject; the server refuses a body that names another one.
    const reply = await request(`$JS.API.CONSUMER.CREATE.${STREAM_NAME}.mine.tcab.run.*.result`, { ...before.config, name: RESULTS_CONSUMER });
    expect(reply.json<{ error?: { description?: string } }>().error?.description).toMatch(/name|durable/i);
    expect(await consumerInfo(RESULTS_CONSUMER)).toMatchObject({ delivered: before.delivered, config: before.config });
    const observer = await connectNats(await nats.dispatcherSettings(), { name: 'observer' });
    const consumers = await (await jetstreamManager(observer)).consumers.list(STREAM_NAME).next();
    await observer.close();
    expect(consumers.map((c) => c.name)).toContain(RESULTS_CONSUMER);
    expect(consumers.map((c) => c.name)).not.toContain('mine');
  });

  it("cannot subscribe to other clients' replies (the dispatcher's pulls, the runs' acks)", async () => {
    const sub = nc.subscribe('_INBOX.>');
    const ended = (async () => {
      for await (const m of sub) return `received ${m.subject}`;
      return 'ended without an error';
    })();
    expect(await rejection(ended)).toMatch(/Permissions Violation for Subscription to "_INBOX.>"/);
  });
});
