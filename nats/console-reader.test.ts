// The console's reads (nats/console-reader.ts) as a reader credential (`tcab console --creds reader.creds`) against
// a real nats-server in operator mode: the activity consumer (last event of each subject, then new ones) and a
// run's feed (from the first message, or after a sequence: caught-up at once when nothing is stored after it).
// A credential without the pull permission ends the read with an error instead of a wait forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsSink } from '../driver/sinks/nats.ts';
import { AuthNats, agentEvent, runResult } from '../test/support/nats-auth.ts';
import { READER_INBOX_PREFIX, readerPermissions } from './auth/permissions.ts';
import { mintUser } from './auth/mint.ts';
import { ConsoleNats } from './console-reader.ts';
import type { ConsoleStreamEvent } from './console-reader.ts';
import { RunStream } from './result-consumer.ts';
import { natsSettings } from './settings.ts';
import type { RunResult } from '../shared/run.ts';

let nats: AuthNats;
let dispatcher: RunStream;
let reader: ConsoleNats;

async function driverRun(runId: string, texts: string[], withResult: boolean): Promise<void> {
  const sink = new NatsSink({ settings: (await nats.runSettings(runId)).settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
  texts.forEach((text, i) => sink.event({ runId, seq: i + 1, event: agentEvent(text) }));
  if (withResult) sink.result(runResult(runId, 'done', texts.length));
  await sink.close();
}

beforeAll(async () => {
  nats = await AuthNats.start();
  dispatcher = await RunStream.connect(await nats.dispatcherSettings());
  await driverRun('ns_a', ['a1', 'a2', 'a3'], true);
  await driverRun('ns_b', ['b1'], false);
  reader = await ConsoleNats.connect({ ...(await nats.readerSettings()), inboxPrefix: READER_INBOX_PREFIX });
});
afterAll(async () => {
  await reader?.close();
  await dispatcher?.close();
  await nats?.dispose();
});

/** Collects until `done` holds; resolves with what was collected. */
function collector<T>(done: (items: T[]) => boolean) {
  const items: T[] = [];
  const settled = Promise.withResolvers<T[]>();
  return { items, settled: settled.promise, add: (more: T[]) => (items.push(...more), done(items) ? settled.resolve(items) : undefined), fail: settled.reject };
}

describe('ConsoleNats as a reader', () => {
  it('activity: the last stored event of each run first, then new events as they are stored', async () => {
    const seen = collector<ConsoleStreamEvent>((items) => items.some((e) => e.runId === 'ns_c'));
    const reading = await reader.followActivity(seen.add, seen.fail);
    await driverRun('ns_c', ['c1'], false);
    const items = await seen.settled;
    await reading.stop();
    const byRun = (runId: string) => items.filter((e) => e.runId === runId).map((e) => e.event.type === 'agent' && e.event.message);
    expect(byRun('ns_a')).toEqual(['a3']); // one subject (tcab.run.ns_a.event.agent): its last message only
    expect(byRun('ns_b')).toEqual(['b1']);
    expect(byRun('ns_c')).toEqual(['c1']);
    expect(items.every((e) => e.seq > 0 && e.runSeq > 0 && !Number.isNaN(Date.parse(e.at)))).toBe(true);
  });

  it('a run feed from the start: every event in order, the result, caught-up after the replay', async () => {
    const order: string[] = [];
    const done = Promise.withResolvers<void>();
    let resultSeq = 0;
    let result: RunResult | undefined;
    const reading = await reader.openRunFeed('ns_a', 0, {
      onEvents: (events) => order.push(...events.map((e) => `event ${e.runSeq}`)),
      onResult: (seq, r) => ((resultSeq = seq), (result = r), order.push('result')),
      onCaughtUp: () => (order.push('caught-up'), done.resolve()),
      onError: done.reject,
    });
    await done.promise;
    await reading.stop();
    expect(order).toEqual(['event 1', 'event 2', 'event 3', 'result', 'caught-up']);
    expect(result?.message).toBe('done');
    expect(resultSeq).toBeGreaterThan(0);
  });

  it('a run feed after its last stored message is caught up at once, then live', async () => {
    const first = Promise.withResolvers<number>();
    const probe = await reader.openRunFeed('ns_b', 0, { onEvents: (e) => first.resolve(e.at(-1)!.seq), onResult: () => undefined, onCaughtUp: () => undefined, onError: first.reject });
    const last = await first.promise;
    await probe.stop();
    const caughtUp = Promise.withResolvers<void>();
    const live = Promise.withResolvers<ConsoleStreamEvent[]>();
    const reading = await reader.openRunFeed('ns_b', last, { onEvents: live.resolve, onResult: () => undefined, onCaughtUp: caughtUp.resolve, onError: live.reject });
    await caughtUp.promise;
    const sink = new NatsSink({ settings: (await nats.runSettings('ns_b')).settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
    sink.event({ runId: 'ns_b', seq: 2, event: agentEvent('b2') });
    await sink.close();
    const events = await live.promise;
    await reading.stop();
    expect(events.map((e) => e.event.type === 'agent' && e.event.message)).toEqual(['b2']);
    expect(events[0]!.seq).toBeGreaterThan(last);
  });

  it('a credential that may not pull ends the read with the server\'s refusal, not a wait forever', async () => {
    const full = readerPermissions();
    const { creds } = await mintUser(nats.bundle.account.seed, 'reader-no-pull', { ...full, pub: { ...full.pub, allow: full.pub.allow.filter((s) => !s.includes('MSG.NEXT')) } });
    const crippled = await ConsoleNats.connect(natsSettings(nats.server.url, { credsText: creds, inboxPrefix: READER_INBOX_PREFIX }));
    try {
      const refused = Promise.withResolvers<Error>();
      const reading = await crippled.followActivity(() => undefined, refused.resolve);
      expect((await refused.promise).message).toMatch(/Permissions Violation for Publish to "\$JS\.API\.CONSUMER\.MSG\.NEXT\.TCAB_RUNS/);
      await reading.stop();
    } finally {
      await crippled.close();
    }
  });
});
