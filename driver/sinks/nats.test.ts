import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsServer } from '../../test/support/nats-server.ts';
import { NatsSink } from './nats.ts';
import { readRunStream } from '../../nats/reader.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { natsSettings } from '../../nats/settings.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { STREAM_NAME } from '../../nats/stream.ts';
import { RunStream } from '../../nats/result-consumer.ts';

const lifecycle = [['pull_image', 'started'], ['pull_image', 'completed'], ['start_container', 'started'], ['start_container', 'completed']] as const;

let server: NatsServer;
beforeAll(async () => {
  server = await NatsServer.start({ maxPayload: 64 * 1024 });
});
afterAll(async () => {
  await server?.dispose();
});

const agent = (i: number): HarnessEvent => ({ type: 'agent', timestamp: new Date(Date.UTC(2026, 11, 2, 12, 0, 0, i)).toISOString(), message: `message ${i}` });

function result(runId: string, eventCount: number): RunResult {
  return {
    run_id: runId, harness_slug: 'claude', harness_version: '2.1.197', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok',
    auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null,
    actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: '2026-12-02T12:00:00.000Z',
    finished_at: '2026-12-02T12:00:01.000Z', event_count: eventCount,
  };
}

async function readAll(runId: string): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of readRunStream({ settings: natsSettings(server.url), runId, replay: true, untilResult: true })) items.push(item);
  return items;
}

describe('NatsSink with a real nats-server', () => {
  it('publishes events in order with run id/sequence/dedup/CloudEvents headers, then the result', async () => {
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000 });
    for (let i = 1; i <= 200; i++) sink.event({ runId: 'run-order', seq: i, event: agent(i) });
    sink.result(result('run-order', 200));
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 201, undelivered: 0 });

    const items = await readAll('run-order');
    expect(items).toHaveLength(201);
    expect(items.slice(0, 200).map((i) => (i.kind === 'event' ? i.seq : -1))).toEqual(Array.from({ length: 200 }, (_, k) => k + 1));
    expect(items.at(-1)).toMatchObject({ kind: 'result', runId: 'run-order', result: { outcome: 'succeeded' } });

    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    const first = await jsm.streams.getMessage(STREAM_NAME, { seq: 1 });
    expect(first!.subject).toMatch(/^tcab\.run\.run-order\.event\.agent$/);
    expect(first!.header.get('Nats-Msg-Id')).toBe('run-order:1');
    expect(first!.header.get('Tcab-Seq')).toBe('1');
    expect(first!.header.get('ce-specversion')).toBe('1.0');
    expect(first!.header.get('ce-type')).toBe('dev.tcab.harness.event.agent');
    await nc.close();
  });

  it("sends the run's progress once on its core subject: the dispatcher's subscription gets it, the run stream never holds it; a malformed one is dropped with a line", async () => {
    const dispatcher = await RunStream.connect(natsSettings(server.url));
    const got: { runId: string; phase: string; attempt?: unknown }[] = [];
    const notes: string[] = [];
    let arrived!: () => void;
    const twoArrived = new Promise<void>((resolve) => (arrived = resolve));
    dispatcher.followProgress((runId, progress) => {
      got.push({ runId, phase: progress.phase, attempt: progress.attempt });
      if (got.length === 2) arrived();
    }, (note) => notes.push(note));
    try {
      // What no driver would send: dropped, the subscription goes on.
      const raw = await connect({ servers: server.url });
      raw.publish('tcab.progress.run-progress', '{"phase":"Done"}');
      raw.publish('tcab.progress.run-progress', 'not json');
      await raw.flush();
      await raw.close();
      const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000 });
      sink.event({ runId: 'run-progress', seq: 1, event: agent(1) });
      sink.progress('run-progress', { phase: 'Checking', at: '2026-12-02T12:00:02.000Z', attempt: { number: 2, of: 3 } });
      sink.progress('run-progress', { phase: 'Checking', at: '2026-12-02T12:00:03.000Z' });
      sink.result(result('run-progress', 1));
      await sink.close();
      await twoArrived;
      expect(got).toEqual([{ runId: 'run-progress', phase: 'Checking', attempt: { number: 2, of: 3 } }, { runId: 'run-progress', phase: 'Checking', attempt: undefined }]);
      expect(notes).toEqual(["message on tcab.progress.run-progress is not a run's progress; dropped", "message on tcab.progress.run-progress is not a run's progress; dropped"]);
      expect((await readAll('run-progress')).map((i) => i.kind)).toEqual(['event', 'result']);
    } finally {
      await dispatcher.close();
    }
  });

  it('keeps going while the server is down and delivers everything in order, without duplicates, after a restart', async () => {
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 60_000, window: 8 });
    for (let i = 1; i <= 50; i++) sink.event({ runId: 'run-outage', seq: i, event: agent(i) });
    await server.stop();
    for (let i = 51; i <= 120; i++) sink.event({ runId: 'run-outage', seq: i, event: agent(i) });
    await server.resume();
    for (let i = 121; i <= 150; i++) sink.event({ runId: 'run-outage', seq: i, event: agent(i) });
    sink.result(result('run-outage', 150));
    await sink.close();
    expect(sink.stats.undelivered).toBe(0);

    const items = await readAll('run-outage');
    const seqs = items.filter((i) => i.kind === 'event').map((i) => (i.kind === 'event' ? i.seq : 0));
    expect(seqs).toEqual(Array.from({ length: 150 }, (_, k) => k + 1)); // 0 lost, order kept, no duplicates
    expect(items.at(-1)?.kind).toBe('result');
  });

  it('spills what does not fit in memory during an outage to disk and delivers it in order, headers intact, once the server is back', async () => {
    const spillDir = mkdtempSync(join(tmpdir(), 'tcab-sink-spill-'));
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 60_000, maxMemoryBytes: 4096, spillDir, attempt: 'uid-9' });
    await server.stop();
    for (let i = 1; i <= 100; i++) sink.event({ runId: 'run-spilled', seq: i, event: agent(i) });
    // Past 4 KiB the queue is on disk (in a private directory under spillDir).
    expect(readdirSync(spillDir)).toHaveLength(1);
    await server.resume();
    sink.result(result('run-spilled', 100));
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 101, undelivered: 0 });
    const items = await readAll('run-spilled');
    expect(items.map((i) => (i.kind === 'event' ? i.seq : i.kind))).toEqual([...Array.from({ length: 100 }, (_, k) => k + 1), 'result']);
    expect(items.slice(0, 100).map((i) => (i.kind === 'event' && i.event.type === 'agent' ? i.event.message : ''))).toEqual(Array.from({ length: 100 }, (_, k) => `message ${k + 1}`));
    const nc = await connect({ servers: server.url });
    const last = await (await jetstreamManager(nc)).streams.getMessage(STREAM_NAME, { last_by_subj: 'tcab.run.run-spilled.event.agent' });
    expect(last!.header.get('Nats-Msg-Id')).toBe('run-spilled:uid-9:100');
    expect(last!.header.get('ce-id')).toBe('run-spilled:uid-9:100');
    await nc.close();
    expect(readdirSync(spillDir)).toEqual([]); // disposed
    rmSync(spillDir, { recursive: true, force: true });
  });

  it('in a driver Pod, holds its messages until the start_container end of its Pod is on the stream, so the stream keeps the order things happened in', async () => {
    const holding = Promise.withResolvers<void>();
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000, awaitPodStartMs: 30_000, onHolding: holding.resolve });
    const install: HarnessEvent = { type: 'system', timestamp: '2026-12-02T12:00:02.000Z', stage: 'install_harness', status: 'started', message: 'npm install' };
    sink.event({ runId: 'run-held', seq: 1, event: install });
    sink.event({ runId: 'run-held', seq: 2, event: agent(3) });
    sink.result(result('run-held', 2));
    // Connected, stream ready, messages queued: without the hold they would be published now.
    await holding.promise;
    const dispatcher = await RunStream.connect(natsSettings(server.url));
    await dispatcher.publish('run-held', lifecycle.map(([stage, status], i) => ({ type: 'system', timestamp: new Date(Date.UTC(2026, 11, 2, 12, 0, 0, i)).toISOString(), stage, status, message: `${stage} ${status}` })));
    await dispatcher.close();
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 3, podStart: 'seen' });
    const stages = (await readAll('run-held')).map((i) => (i.kind === 'event' ? (i.event.type === 'system' ? `${i.event.stage}:${i.event.status}` : i.event.type) : i.kind));
    expect(stages).toEqual(['pull_image:started', 'pull_image:completed', 'start_container:started', 'start_container:completed', 'install_harness:started', 'agent', 'result']);
  });

  it('publishes after the hold runs out when no start_container event comes (no dispatcher), losing nothing', async () => {
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000, awaitPodStartMs: 300 });
    sink.event({ runId: 'run-unheld', seq: 1, event: agent(1) });
    sink.result(result('run-unheld', 1));
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 2, podStart: 'timed_out' });
    // Held for the whole hold: Node's timers run on a monotonic clock with whole milliseconds, so the wall clock
    // may see the 300 ms timer fire at 299 ms (it did, in one CI run out of many).
    expect(sink.stats.heldMs).toBeGreaterThanOrEqual(299);
    expect((await readAll('run-unheld')).map((i) => i.kind)).toEqual(['event', 'result']);
  });

  it('truncates an event above the max payload with an explicit marker instead of dropping it', async () => {
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000 });
    sink.event({ runId: 'run-big', seq: 1, event: { type: 'unknown', timestamp: '2026-12-02T12:00:00.000Z', raw: 'x'.repeat(200_000) } });
    sink.result(result('run-big', 1));
    await sink.close();
    expect(sink.stats.truncated).toBe(1);
    const [first] = await readAll('run-big');
    expect(first?.kind).toBe('event');
    const raw = first?.kind === 'event' && first.event.type === 'unknown' ? (first.event.raw as string) : '';
    expect(raw).toMatch(/…\[tcab: truncated, original 200000 bytes\]$/);
    expect(raw.length).toBeLessThan(64 * 1024);
  });

  it('lets a reader follow a run before any stream exists (right after install), then delivers the run to it', async () => {
    const fresh = await NatsServer.start();
    const nc = await connect({ servers: fresh.url });
    try {
      const jsm = await jetstreamManager(nc);
      await expect(jsm.streams.info(STREAM_NAME)).rejects.toThrow(/stream not found/);
      const items: StreamItem[] = [];
      const following = (async () => {
        for await (const item of readRunStream({ settings: natsSettings(fresh.url), runId: 'run-early', replay: true, untilResult: true })) items.push(item);
      })();
      // The reader made the stream (the one definition every component uses); only then does the run start.
      await expect.poll(() => jsm.streams.info(STREAM_NAME).then((info) => info.config, () => undefined)).toMatchObject({ subjects: ['tcab.run.>'], duplicate_window: 15 * 60 * 1e9 });
      const sink = new NatsSink({ settings: natsSettings(fresh.url), deliverBy: Date.now() + 30_000 });
      for (let i = 1; i <= 3; i++) sink.event({ runId: 'run-early', seq: i, event: agent(i) });
      sink.result(result('run-early', 3));
      await sink.close();
      await following;
      expect(items.map((i) => (i.kind === 'event' ? i.seq : i.kind))).toEqual([1, 2, 3, 'result']);
    } finally {
      await nc.close();
      await fresh.dispose();
    }
  });

  it('writes undelivered messages as NDJSON when NATS never comes back before the deadline', async () => {
    const lines: string[] = [];
    const sink = new NatsSink({ settings: natsSettings('nats://127.0.0.1:1'), deliverBy: Date.now() + 1500, fallback: (l) => lines.push(l) });
    sink.event({ runId: 'run-lost', seq: 1, event: agent(1) });
    sink.result(result('run-lost', 1));
    await sink.close();
    expect(sink.stats.undelivered).toBe(2);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { undelivered: true, subject: 'tcab.run.run-lost.event.agent', run_id: 'run-lost', seq: 1, data: agent(1) },
      expect.objectContaining({ undelivered: true, subject: 'tcab.run.run-lost.result', run_id: 'run-lost' }),
    ]);
  });
});

describe('NatsSink when NATS cannot be reached', () => {
  const password = 'sk-fake-nats-password-000';

  it('finding 13: a malformed URL is reported at once with the parse error and no credentials, and the events are written as NDJSON without waiting for the deadline', async () => {
    const warnings: string[] = [];
    const lines: string[] = [];
    const sink = new NatsSink({ settings: natsSettings(`nats://tcab:${password}@[not-a-host`), deliverBy: Date.now() + 60_000, warn: (m) => warnings.push(m), fallback: (l) => lines.push(l) });
    // Before any event: the sink connects when it is made.
    await vi.waitFor(() => expect(warnings).toHaveLength(1), { timeout: 5000, interval: 10 });
    expect(warnings[0]).toMatch(/^cannot connect to NATS nats:\/\/\[not-a-host: malformed URL \(Invalid URL\); nothing will be published/);
    sink.event({ runId: 'run-malformed', seq: 1, event: agent(1) });
    // The driver goes on between events: the sink must leave the event loop to it, not spin on a dead URL.
    await new Promise((resolve) => setImmediate(resolve));
    sink.result(result('run-malformed', 1));
    const closing = Date.now();
    await sink.close();
    expect(Date.now() - closing).toBeLessThan(5000); // not the 60 s deadline: a malformed URL never heals
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2]);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain(password);
  }, 20_000);

  it('finding 13: an unreachable server is reported at once (connection refused, URL without credentials), queued messages are retried until the deadline and then written as NDJSON', async () => {
    const warnings: string[] = [];
    const lines: string[] = [];
    const deliverBy = Date.now() + 2000;
    const sink = new NatsSink({ settings: natsSettings([`nats://tcab:${password}@127.0.0.1:1`], { pass: password }), deliverBy, warn: (m) => warnings.push(m), fallback: (l) => lines.push(l) });
    await vi.waitFor(() => expect(warnings).toHaveLength(1), { timeout: 1500, interval: 10 });
    expect(Date.now()).toBeLessThan(deliverBy);
    expect(warnings[0]).toBe(`cannot connect to NATS nats://127.0.0.1:1: connection refused; the run goes on; its events are queued and retried until ${new Date(deliverBy).toISOString()}, then written as NDJSON (undelivered)`);
    sink.event({ runId: 'run-unreachable', seq: 1, event: agent(1) });
    await sink.close();
    expect(Date.now()).toBeGreaterThanOrEqual(deliverBy);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([{ undelivered: true, subject: 'tcab.run.run-unreachable.event.agent', run_id: 'run-unreachable', seq: 1, data: agent(1) }]);
    expect(warnings).toHaveLength(1); // the same trouble on every retry is said once
  });

  it('says when NATS is reachable again, and delivers what was queued', async () => {
    const fresh = await NatsServer.start();
    const url = fresh.url;
    await fresh.stop();
    const warnings: string[] = [];
    const sink = new NatsSink({ settings: natsSettings(url), deliverBy: Date.now() + 30_000, warn: (m) => warnings.push(m) });
    try {
      await vi.waitFor(() => expect(warnings).toEqual([expect.stringContaining('connection refused')]), { timeout: 5000, interval: 10 });
      sink.event({ runId: 'run-back', seq: 1, event: agent(1) });
      await fresh.resume();
      await vi.waitFor(() => expect(sink.stats.published).toBe(1), { timeout: 20_000, interval: 20 });
      expect(warnings).toEqual([expect.stringContaining('connection refused'), `NATS ${url} reachable again; delivering 1 queued message(s)`]);
    } finally {
      await sink.close();
      await fresh.dispose();
    }
  });
});

describe('NatsSink when the run is cancelled', () => {
  it('finding 13: with NATS unreachable, a cancelled run (SIGTERM in a Pod) writes its undelivered messages within the cancel grace, not at the deadline', async () => {
    const abort = new AbortController();
    const lines: string[] = [];
    const sink = new NatsSink({ settings: natsSettings('nats://127.0.0.1:1'), deliverBy: Date.now() + 60_000, signal: abort.signal, cancelGraceMs: 500, warn: () => undefined, fallback: (l) => lines.push(l) });
    sink.event({ runId: 'run-cancelled', seq: 1, event: agent(1) });
    abort.abort();
    sink.result(result('run-cancelled', 1));
    const closing = Date.now();
    await sink.close();
    expect(Date.now() - closing).toBeLessThan(5000); // the grace (0.5 s) and a retry pause, not the 60 s deadline
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2]);
  }, 20_000);
});
