// The dispatcher's NATS side against a real nats-server: a Run re-created under its name (same run id) reaches
// the result consumer and its followers on its own, and closing (the last step of the SIGTERM path) ends whether
// or not the server still answers.
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { readRunStream } from './reader.ts';
import type { StreamItem } from './reader.ts';
import { natsSettings } from './settings.ts';
import { NatsSink } from '../driver/sinks/nats.ts';
import type { HarnessEvent } from '../shared/events.ts';
import type { RunResult } from '../shared/run.ts';
import { spawn } from 'node:child_process';
import { NatsServer, freePort, natsServerBinary } from '../test/support/nats-server.ts';
import { RunStream, isJetStreamStarting } from './result-consumer.ts';

let nats: NatsServer | undefined;
afterEach(async () => {
  await nats?.dispose();
  nats = undefined;
});

describe('RunStream.close', () => {
  it('ends within its drain bound when the server stops answering with the results consumer open (a drain alone never ended)', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    await stream.consumeResults(() => undefined, () => undefined);
    nats.freeze();
    // Settles (and does not reject) once the bounded drain gave up and the connection was closed without it.
    const outcome = await Promise.race([stream.close(500).then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still closing after 10 s')).then((v) => v)]);
    expect(outcome).toBe('closed');
  });

  it('drains normally when the server answers', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    await stream.consumeResults(() => undefined, () => undefined);
    await stream.publish('ns_r', [{ type: 'system', stage: 'pull_image', status: 'completed', message: 'pulled', timestamp: new Date().toISOString() } as never]);
    await expect(stream.close(5_000)).resolves.toBeUndefined();
  });
});

const agent = (text: string): HarnessEvent => ({ type: 'agent', timestamp: new Date().toISOString(), message: text });
const result = (runId: string, message: string, eventCount: number): RunResult => ({
  run_id: runId, harness_slug: 'gg', harness_version: null, model: 'm', canonical_model: null, outcome: 'succeeded', message,
  auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null,
  actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: new Date().toISOString(),
  finished_at: new Date().toISOString(), event_count: eventCount,
});

/** One driver run as a driver Pod publishes it (the sink with the Run's uid as its attempt). */
async function driverRun(url: string, runId: string, attempt: string, texts: string[]): Promise<void> {
  const sink = new NatsSink({ settings: natsSettings(url), deliverBy: Date.now() + 30_000, attempt });
  texts.forEach((text, i) => sink.event({ runId, seq: i + 1, event: agent(text) }));
  sink.result(result(runId, `${attempt} done`, texts.length));
  await sink.close();
}

/** `tcab events follow <run id>`'s reader: replay from the first stored message to the result. */
async function follow(url: string, runId: string): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of readRunStream({ settings: natsSettings(url), runId, replay: true, untilResult: true })) items.push(item);
  return items;
}

describe('a Run deleted and re-created under its name (same run id, new uid)', () => {
  it('its events and result are stored, not dropped as repeats of the old Run\'s (same sequence numbers), and once the old ones are forgotten its followers see only its own', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    const results: { runId: string; message: string }[] = [];
    let next: (() => void) | undefined;
    await stream.consumeResults((runId, r, ack) => {
      results.push({ runId, message: r.message });
      ack();
      next?.();
    }, () => undefined);
    const resultCount = (n: number) => new Promise<void>((resolve) => {
      next = () => results.length >= n && resolve();
      next();
    });
    const runId = 'e2e-ns_hello';

    await driverRun(nats.url, runId, 'uid-1', ['old one', 'old two', 'old three']);
    await resultCount(1);
    // The dispatcher, as the Run is deleted / the new Run is claimed: the old Run's messages go.
    await stream.forget(runId);
    await driverRun(nats.url, runId, 'uid-2', ['new one', 'new two']);
    // The dispatcher gets the new Run's result (before: dropped as a duplicate, and the Run failed with NoResult).
    await resultCount(2);
    expect(results).toEqual([{ runId, message: 'uid-1 done' }, { runId, message: 'uid-2 done' }]);

    const followed = await follow(nats.url, runId);
    expect(followed.map((i) => (i.kind === 'event' ? (i.event as { message: string }).message : i.kind === 'result' ? i.result.message : i.kind))).toEqual(['new one', 'new two', 'uid-2 done']);
    await stream.close();
  });
});

describe('RunStream.connected (readiness)', () => {
  it('is true while connected, false while the server is away (the client reconnecting), true again once it is back, false once closed', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    expect(stream.connected()).toBe(true);
    await nats.stop();
    await expect.poll(() => stream.connected(), { timeout: 10_000 }).toBe(false);
    await nats.resume();
    await expect.poll(() => stream.connected(), { timeout: 20_000 }).toBe(true);
    await stream.close();
    expect(stream.connected()).toBe(false);
  });
});

describe('RunStream.consumeResults', () => {
  it('drops a result that is not JSON (terminated, logged with its run id) and goes on to the next one', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    const logs: string[] = [];
    const got = Promise.withResolvers<string>();
    await stream.consumeResults((runId, r, ack) => {
      ack();
      got.resolve(`${runId}: ${r.message}`);
    }, (m) => logs.push(m));
    const nc = await connect({ servers: nats.url });
    await nc.publish('tcab.run.bad-run.result', '{not json');
    await nc.flush();
    await driverRun(nats.url, 'good-run', 'uid-1', ['one']);
    expect(await got.promise).toBe('good-run: uid-1 done');
    expect(logs).toEqual(['result for bad-run is not a RunResult; dropped']);
    await nc.close();
    await stream.close();
  });
});

describe('RunStream.lastResult', () => {
  it('reads the last result of a run from the stream, whatever the consumer did; none for a run without one', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    try {
      await driverRun(nats.url, 'ns_looked-up', 'uid-1', ['one', 'two']);
      // Nobody consumes results here: the read goes to the stream itself.
      const found = await stream.lastResult('ns_looked-up');
      expect(found).toMatchObject({ run_id: 'ns_looked-up', message: 'uid-1 done', event_count: 2 });
      await driverRun(nats.url, 'ns_looked-up', 'uid-2', ['three']);
      expect(await stream.lastResult('ns_looked-up')).toMatchObject({ message: 'uid-2 done', event_count: 1 });
      expect(await stream.lastResult('ns_no-result-yet')).toBeUndefined();
    } finally {
      await stream.close();
    }
  });

  it('rejects when the server does not answer (the caller waits another grace instead of declaring no result)', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    try {
      nats.freeze();
      await expect(stream.lastResult('ns_frozen')).rejects.toThrow();
    } finally {
      await stream.close(200);
    }
  });

  it('says nothing for a result that is not a RunResult', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    const nc = await connect({ servers: nats.url });
    try {
      await nc.request('tcab.run.ns_forged.result', new TextEncoder().encode('{"outcome":"succeeded"}'), { timeout: 5000 });
      expect(await stream.lastResult('ns_forged')).toBeUndefined();
    } finally {
      await nc.close();
      await stream.close();
    }
  });
});

describe('isJetStreamStarting (what the dispatcher waits out at start)', () => {
  const named = (name: string, message: string) => Object.assign(new Error(message), { name });
  it.each([
    ['a clustered JetStream without its meta leader yet', named('JetStreamApiError', 'JetStream system temporarily unavailable'), true],
    ['nats.js\'s request timeout', named('TimeoutError', 'timeout'), true],
    ['"timeout" under another name (as the dispatcher logged it)', new Error('timeout'), true],
    ['a permission', named('PermissionViolationError', 'Permissions Violation for Publish to "$JS.API.STREAM.INFO.TCAB_RUNS"'), false],
    ['JetStream not enabled', named('JetStreamApiError', 'jetstream not enabled for account'), false],
    ['no responders (no JetStream on the server at all)', named('NoRespondersError', 'no responders: \'$JS.API.INFO\''), false],
    ['a word that contains timeout', new Error('connection timeout reached while reading config'), false],
    ['not an Error', 'JetStream system temporarily unavailable', true],
    ['nothing', undefined, false],
  ])('%s', (_, error, starting) => {
    expect(isJetStreamStarting(error)).toBe(starting);
  });

  it('a stream setup that fails for another reason is not retried: against a server without JetStream, connect rejects with that error and never retries', async () => {
    const port = await freePort();
    const server = spawn(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let log = '';
        server.stderr!.on('data', (d: Buffer) => ((log += d.toString()), log.includes('Server is ready') && resolve()));
        server.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${log}`)));
      });
      const retries: string[] = [];
      const error = await RunStream.connect(natsSettings(`nats://127.0.0.1:${port}`), { onStreamRetry: (e) => retries.push(e.message) }).then(() => undefined, (e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect(isJetStreamStarting(error)).toBe(false);
      expect(retries).toEqual([]);
    } finally {
      server.kill('SIGKILL');
    }
  });
});
