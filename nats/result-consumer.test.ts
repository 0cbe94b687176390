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
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { errors as natsErrors } from '@nats-io/nats-core';
import { RESULTS_CONSUMER, RunStream, jetStreamNotUp } from './result-consumer.ts';
import { STREAM_NAME } from './stream.ts';

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

  it('drains normally when the server answers: a result delivered and acked before the close stays acked, and the connection ends', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect(natsSettings(nats.url));
    const delivered: string[] = [];
    let got: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (got = resolve));
    await stream.consumeResults((runId, _r, ack) => {
      delivered.push(runId);
      ack();
      got();
    }, () => undefined);
    await stream.publish('ns_r', [{ type: 'system', stage: 'pull_image', status: 'completed', message: 'pulled', timestamp: new Date().toISOString() } as never]);
    await driverRun(nats.url, 'ns_r', 'uid-1', ['done']);
    await first;
    await stream.close(5_000);
    expect(stream.connected()).toBe(false);
    expect(delivered).toEqual(['ns_r']);
    // The ack went out before the drain ended: the durable holds nothing pending and nothing left to deliver.
    const nc = await connect({ servers: nats.url });
    const info = await (await jetstreamManager(nc)).consumers.info(STREAM_NAME, RESULTS_CONSUMER);
    await nc.close();
    expect(info).toMatchObject({ num_ack_pending: 0, num_pending: 0, delivered: { stream_seq: expect.any(Number) } });
    expect(info.ack_floor.stream_seq).toBe(info.delivered.stream_seq);
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
      await expect(stream.lastResult('ns_frozen')).rejects.toThrow(/TIMEOUT|timeout/i);
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

/** A nats-server without JetStream (no -js); resolves once it accepts clients. */
async function serverWithoutJetStream(): Promise<{ url: string; kill: () => void }> {
  const port = await freePort();
  const server = spawn(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let log = '';
      server.stderr!.on('data', (d: Buffer) => ((log += d.toString()), log.includes('Server is ready') && resolve()));
      server.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${log}`)));
    });
  } catch (error) {
    server.kill('SIGKILL');
    throw error;
  }
  return { url: `nats://127.0.0.1:${port}`, kill: () => server.kill('SIGKILL') };
}

describe('jetStreamNotUp (what the dispatcher waits out at start, and how long)', () => {
  const named = (name: string, message: string) => Object.assign(new Error(message), { name });
  const apiError = (errCode: number, status: number, description: string) => new JetStreamApiError({ err_code: errCode, code: status, description });
  it.each([
    ['a clustered JetStream without its meta leader yet', named('JetStreamApiError', 'JetStream system temporarily unavailable'), 'unavailable'],
    ['nats.js\'s JetStreamApiError for it (err_code 10008, 503)', apiError(10008, 503, 'JetStream system temporarily unavailable'), 'unavailable'],
    ['err_code 10008 in other words', apiError(10008, 503, 'cluster not available'), 'unavailable'],
    ['JetStream not enabled, also a 503 (err_code 10076): not starting', apiError(10076, 503, 'JetStream not enabled'), undefined],
    ['JetStream not enabled for the account, also a 503 (err_code 10039)', apiError(10039, 503, 'jetstream not enabled for account'), undefined],
    ['nats.js\'s request timeout (JetStream silent: waited briefly)', new natsErrors.TimeoutError(), 'silent'],
    ['a TimeoutError by name', named('TimeoutError', 'timeout'), 'silent'],
    ['"timeout" under another name (as the dispatcher logged it)', new Error('timeout'), 'silent'],
    ['a permission', named('PermissionViolationError', 'Permissions Violation for Publish to "$JS.API.STREAM.INFO.TCAB_RUNS"'), undefined],
    ['JetStream not enabled', named('JetStreamApiError', 'jetstream not enabled for account'), undefined],
    ['no responders (no JetStream on the server at all)', named('NoRespondersError', 'no responders: \'$JS.API.INFO\''), undefined],
    ['nats.js\'s words for no responders', named('JetStreamNotEnabled', 'jetstream is not enabled'), undefined],
    ['a word that contains timeout', new Error('connection timeout reached while reading config'), undefined],
    ['connect\'s own "did not answer" error (never retried again)', new Error('JetStream did not answer for 60 s since the dispatcher connected (its API requests time out): check …'), undefined],
    ['not an Error', 'JetStream system temporarily unavailable', 'unavailable'],
    ['nothing', undefined, undefined],
  ])('%s', (_, error, notUp) => {
    expect(jetStreamNotUp(error)).toBe(notUp);
  });

  it('a stream setup that fails for another reason is not retried: against a server without JetStream, connect rejects with that error and never retries', async () => {
    const server = await serverWithoutJetStream();
    try {
      const retries: string[] = [];
      const error = await RunStream.connect(natsSettings(server.url), { onStreamRetry: (e) => retries.push(e.message) }).then(() => undefined, (e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect(jetStreamNotUp(error)).toBeUndefined();
      expect(retries).toEqual([]);
    } finally {
      server.kill();
    }
  });

  it('a JetStream that never answers (its requests taken and dropped) is retried only within the silent bound, then connect rejects saying what to check', async () => {
    const server = await serverWithoutJetStream();
    // Something takes $JS.API requests and never answers (no "no responders": a wrong import, a leaf without JetStream).
    const sink = await connect({ servers: server.url });
    try {
      sink.subscribe('$JS.API.>', { callback: () => undefined });
      await sink.flush();
      const retries: string[] = [];
      const started = performance.now();
      const error = await RunStream.connect(natsSettings(server.url), { silentMs: 2000, requestMs: 500, onStreamRetry: (e) => retries.push(e.message) }).then(() => undefined, (e: unknown) => e as Error);
      const elapsed = performance.now() - started;
      expect(error?.message).toMatch(/^JetStream did not answer for \d+ s since the dispatcher connected \(its API requests time out\): check that the NATS server \(TCAB_NATS_URL\) runs with JetStream enabled/);
      expect(jetStreamNotUp((error?.cause))).toBe('silent');
      // Retried while within the bound (0.5 s, 1 s back-off), not for the 10 minutes left to "temporarily unavailable".
      expect(retries.length).toBeGreaterThan(0);
      expect(retries.every((m) => m === 'timeout'), retries.join('; ')).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(2000);
      // The bound, plus at most one back-off (5 s) and one request (0.5 s) past it.
      expect(elapsed).toBeLessThan(2000 + 5000 + 500 + 2000);
    } finally {
      await sink.close();
      server.kill();
    }
  });

  it('"temporarily unavailable" answers are waited out past the silent bound, and each restarts it: silence after them rejects only a bound after the last', async () => {
    const server = await serverWithoutJetStream();
    // A JetStream electing its leader: three "temporarily unavailable" answers (0 s, 0.5 s, 1.5 s), then silence. The
    // first silent request ends at 4 s: past the bound counted from the start (3 s), within the one counted from the
    // last answer (2.5 s), so it is retried (next at 7.5 s, ending 8 s: past both, rejected).
    const fake = await connect({ servers: server.url });
    let answered = 0;
    try {
      fake.subscribe('$JS.API.>', {
        callback: (_, m) => {
          if (answered >= 3) return;
          answered++;
          m.respond(JSON.stringify({ type: 'io.nats.jetstream.api.v1.account_info_response', error: { code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' } }));
        },
      });
      await fake.flush();
      const retries: string[] = [];
      const started = performance.now();
      const error = await RunStream.connect(natsSettings(server.url), { silentMs: 3000, requestMs: 500, onStreamRetry: (e) => retries.push(e.message) }).then(() => undefined, (e: unknown) => e as Error);
      const elapsed = performance.now() - started;
      expect(retries.length, retries.join('; ')).toBeGreaterThan(3);
      expect(retries.slice(0, 3)).toEqual(Array(3).fill('JetStream system temporarily unavailable'));
      expect(retries.slice(3).every((m) => m === 'timeout'), retries.join('; ')).toBe(true);
      expect(error?.message).toMatch(/^JetStream did not answer for \d+ s since it last answered "temporarily unavailable"/);
      // A bound after the last answer (1.5 s), not after the start.
      expect(elapsed).toBeGreaterThanOrEqual(1500 + 3000);
    } finally {
      await fake.close();
      server.kill();
    }
  });
});
