// The driver's wait for its Pod's start against a real nats-server: found among what is stored (in any order),
// or live, or given up at the bound; never another run's; and without a JetStream consumer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsServer } from '../test/support/nats-server.ts';
import type { HarnessEvent } from '../shared/events.ts';
import { endsPodStart, waitForPodStart } from './pod-start.ts';
import { RunStream } from './result-consumer.ts';
import { connectNats, natsSettings } from './settings.ts';
import { STREAM_NAME, ensureRunStream } from './stream.ts';

let server: NatsServer;
let nc: NatsConnection;
let dispatcher: RunStream;
beforeAll(async () => {
  server = await NatsServer.start();
  nc = await connectNats(natsSettings(server.url), { name: 'test' });
  await ensureRunStream(await jetstreamManager(nc));
  dispatcher = await RunStream.connect(natsSettings(server.url));
});
afterAll(async () => {
  await dispatcher?.close();
  await nc?.close();
  await server?.dispose();
});

const system = (stage: 'pull_image' | 'start_container', status: 'started' | 'completed' | 'failed', ms = 0): HarnessEvent => ({ type: 'system', timestamp: new Date(Date.UTC(2026, 11, 4, 12, 0, 0, ms)).toISOString(), stage, status, message: `${stage} ${status}` });
const inFuture = (ms: number) => Date.now() + ms;

describe('endsPodStart', () => {
  it.each([
    [system('start_container', 'completed'), true],
    [system('start_container', 'failed'), true],
    [system('start_container', 'started'), false],
    [system('pull_image', 'completed'), false],
    [{ type: 'agent', message: 'start_container completed' }, false],
    [null, false],
    ['start_container', false],
  ])('%j -> %s', (event, ends) => {
    expect(endsPodStart(event)).toBe(ends);
  });
});

describe('waitForPodStart', () => {
  it('finds the start among what the stream already holds, whatever order the dispatcher relayed it in, without waiting live', async () => {
    await dispatcher.publish('pod-stored', [system('pull_image', 'completed', 1), system('start_container', 'completed', 3), system('start_container', 'started', 2)]);
    let waitedLive = false;
    expect(await waitForPodStart(nc, 'pod-stored', inFuture(30_000), () => (waitedLive = true))).toBe('seen');
    expect(waitedLive).toBe(false);
  });

  it('waits for the start published after it began looking, with no JetStream consumer on the server', async () => {
    const waiting = Promise.withResolvers<void>();
    const outcome = waitForPodStart(nc, 'pod-live', inFuture(30_000), waiting.resolve);
    await waiting.promise;
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(STREAM_NAME)).state.consumer_count).toBe(0);
    await dispatcher.publish('pod-live', [system('pull_image', 'completed', 1), system('start_container', 'started', 2)]);
    await dispatcher.publish('pod-live', [system('start_container', 'completed', 3)]);
    expect(await outcome).toBe('seen');
  });

  it("gives up at its bound when no start comes, and another run's start does not count", async () => {
    await dispatcher.publish('pod-other', [system('start_container', 'completed')]);
    const began = Date.now();
    const waiting = Promise.withResolvers<void>();
    const outcome = waitForPodStart(nc, 'pod-alone', began + 400, waiting.resolve);
    await waiting.promise;
    await dispatcher.publish('pod-other', [system('start_container', 'failed', 5)]);
    expect(await outcome).toBe('timed_out');
    expect(Date.now() - began).toBeGreaterThanOrEqual(400);
  });
});
