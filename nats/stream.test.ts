// The run stream's one definition, against a real nats-server: made by whoever comes first, and a stream made
// before direct get was part of it gets direct get added (the driver's Pod-start lookup needs it).
import { afterEach, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { StorageType } from '@nats-io/jetstream';
import { NatsServer } from '../test/support/nats-server.ts';
import { connectNats, natsSettings } from './settings.ts';
import { DUPLICATE_WINDOW_MS, STREAM_NAME, ensureRunStream, runStreamConfig } from './stream.ts';

let server: NatsServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

describe('ensureRunStream', () => {
  it('creates the stream with the one definition, and a second call (another component) changes nothing', async () => {
    server = await NatsServer.start();
    const nc = await connectNats(natsSettings(server.url), { name: 'test' });
    const jsm = await jetstreamManager(nc);
    await ensureRunStream(jsm);
    await ensureRunStream(jsm, 1000);
    expect((await jsm.streams.info(STREAM_NAME)).config).toMatchObject({ subjects: ['tcab.run.>'], storage: StorageType.File, duplicate_window: DUPLICATE_WINDOW_MS * 1e6, allow_direct: true });
    await nc.close();
  });

  it('adds direct get to a stream made without it, keeping what it holds and its window', async () => {
    server = await NatsServer.start();
    const nc = await connectNats(natsSettings(server.url), { name: 'test' });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ ...runStreamConfig(60_000), allow_direct: false });
    await nc.publish('tcab.run.old.event.agent', '{}');
    await nc.flush();
    await expect.poll(async () => (await jsm.streams.info(STREAM_NAME)).state.messages).toBe(1);
    await ensureRunStream(jsm);
    const info = await jsm.streams.info(STREAM_NAME);
    expect(info.config).toMatchObject({ allow_direct: true, duplicate_window: 60_000 * 1e6 });
    expect(info.state.messages).toBe(1);
    await nc.close();
  });
});
