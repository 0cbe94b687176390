// A run's credential against a real nats-server in operator mode: the driver's real publish path works with it
// (JetStream acks, the Pod-start hold by direct get and a core subscription), and everything else a run could try
// is refused by the server: no credential at all, another run's subjects, `tcab.run.>`, other clients' replies,
// consumers, stream changes. Each refusal is checked to have changed nothing on the stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { AuthNats, agentEvent, nextServerError, rejection, runResult, startEvent } from '../../test/support/nats-auth.ts';
import { RunStream } from '../result-consumer.ts';
import { connectNats, natsSettings } from '../settings.ts';
import { STREAM_NAME } from '../stream.ts';

let nats: AuthNats;
let dispatcher: RunStream;
let observer: NatsConnection; // the dispatcher's identity, to look at the stream
beforeAll(async () => {
  nats = await AuthNats.start();
  dispatcher = await RunStream.connect(await nats.dispatcherSettings()); // creates the stream, as at startup
  observer = await connectNats(await nats.dispatcherSettings(), { name: 'observer' });
});
afterAll(async () => {
  await observer?.close();
  await dispatcher?.close();
  await nats?.dispose();
});

async function storedCount(filter = 'tcab.run.>'): Promise<number> {
  const info = await (await jetstreamManager(observer)).streams.info(STREAM_NAME, { subjects_filter: filter });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

/** A driver run through the real sink (nats/publisher.ts, nats/pod-start.ts), with its run credential. */
async function driverRun(runId: string, onHolding?: () => void) {
  const { settings } = await nats.runSettings(runId);
  const sink = new NatsSink({ settings, deliverBy: Date.now() + 30_000, attempt: 'a1', awaitPodStartMs: 30_000, onHolding, warn: () => undefined });
  sink.event({ runId, seq: 1, event: agentEvent('hello') });
  sink.event({ runId, seq: 2, event: agentEvent('bye') });
  sink.result(runResult(runId, 'done', 2));
  return sink;
}

describe('a run credential', () => {
  it('a client without credentials is refused', async () => {
    expect(await rejection(connectNats(natsSettings(nats.server.url), { name: 'anonymous' }))).toMatch(/Authorization Violation/);
  });

  it("publishes the run's events and result through the driver's path, after its Pod's start was found stored (direct get)", async () => {
    await dispatcher.publish('stored', [startEvent('started'), startEvent('completed')]);
    let waitedLive = false;
    const sink = await driverRun('stored', () => (waitedLive = true));
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 3, undelivered: 0, podStart: 'seen' });
    expect(waitedLive).toBe(false);
    expect(await storedCount('tcab.run.stored.>')).toBe(5);
  });

  it("holds for its Pod's start published live (core subscription on its own system subject)", async () => {
    const holding = Promise.withResolvers<void>();
    const sink = await driverRun('live', holding.resolve);
    await holding.promise;
    await dispatcher.publish('live', [startEvent('completed')]);
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 3, undelivered: 0, podStart: 'seen' });
  });

  describe('what else a run could try', () => {
    let nc: NatsConnection;
    beforeAll(async () => {
      nc = await connectNats((await nats.runSettings('mine')).settings, { name: 'run mine' });
    });
    afterAll(async () => {
      await nc?.close();
    });

    it("cannot publish to another run's subjects, through JetStream or core NATS; nothing lands", async () => {
      const js = jetstream(nc, { timeout: 2000 });
      expect(await rejection(js.publish('tcab.run.other.result', '{}'))).toMatch(/Permissions Violation for Publish to "tcab.run.other.result"/);
      const refused = nextServerError(nc);
      nc.publish('tcab.run.other.event.agent', '{}');
      expect(await refused).toMatch(/Permissions Violation for Publish to "tcab.run.other.event.agent"/);
      expect(await storedCount('tcab.run.other.>')).toBe(0);
      // Its own subjects stay open (the refusals above are about the subject, not the connection).
      await expect(js.publish('tcab.run.mine.event.agent', '{}')).resolves.toMatchObject({ stream: STREAM_NAME });
    });

    it.each(['tcab.run.>', 'tcab.run.other.>', 'tcab.run.*.result', '>', '_INBOX.>', '_INBOX_other.>', '$JS.ACK.>'])('cannot subscribe to %s', async (subject) => {
      const sub = nc.subscribe(subject);
      const ended = (async () => {
        for await (const m of sub) return `received ${m.subject}`;
        return 'ended without an error';
      })();
      expect(await rejection(ended)).toMatch(new RegExp(`Permissions Violation for Subscription to "${subject.replace(/[.*>$]/g, '\\$&')}"`));
    });

    it('cannot create a consumer (durable or ordered), purge, edit or delete the stream', async () => {
      const before = await storedCount();
      const jsm = await jetstreamManager(nc); // $JS.API.INFO is allowed: nats.js checks the API with it
      const attempts: Array<[string, () => Promise<unknown>]> = [
        ['CONSUMER.CREATE', () => jsm.consumers.add(STREAM_NAME, { durable_name: 'stolen', filter_subject: 'tcab.run.*.result' })],
        ['CONSUMER.CREATE', async () => (await jetstream(nc).consumers.get(STREAM_NAME, { filter_subjects: ['tcab.run.>'] })).next()],
        ['STREAM.PURGE', () => jsm.streams.purge(STREAM_NAME)],
        ['STREAM.UPDATE', () => jsm.streams.update(STREAM_NAME, { subjects: ['tcab.run.>', 'x'] })],
        ['STREAM.DELETE', () => jsm.streams.delete(STREAM_NAME)],
        ['STREAM.MSG.DELETE', () => jsm.streams.deleteMessage(STREAM_NAME, 1)],
      ];
      for (const [api, attempt] of attempts) expect(await rejection(attempt())).toMatch(new RegExp(`Permissions Violation for Publish to "\\$JS\\.API\\.${api.replaceAll('.', '\\.')}`));
      expect(await storedCount()).toBe(before);
      expect((await (await jetstreamManager(observer)).streams.info(STREAM_NAME)).state.consumer_count).toBe(0);
    });
  });
});
