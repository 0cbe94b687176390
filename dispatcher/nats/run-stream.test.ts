// The dispatcher's NATS side against a real nats-server: a Run re-created under its name (same run id) reaches
// the result consumer and its followers on its own, and closing (the last step of the SIGTERM path) ends whether
// or not the server still answers.
import { afterEach, describe, expect, it } from 'vitest';
import { readRunStream } from '../../cli/nats-reader.ts';
import type { StreamItem } from '../../cli/nats-reader.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { NatsServer } from '../../test/support/nats-server.ts';
import { RunStream } from './run-stream.ts';

let nats: NatsServer | undefined;
afterEach(async () => {
  await nats?.dispose();
  nats = undefined;
});

describe('RunStream.close', () => {
  it('ends within its drain bound when the server stops answering with the results consumer open (a drain alone never ended)', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect({ servers: [nats.url] });
    await stream.consumeResults(() => undefined, () => undefined);
    nats.freeze();
    // Settles (and does not reject) once the bounded drain gave up and the connection was closed without it.
    const outcome = await Promise.race([stream.close(500).then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still closing after 10 s')).then((v) => v)]);
    expect(outcome).toBe('closed');
  });

  it('drains normally when the server answers', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect({ servers: [nats.url] });
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
  const sink = new NatsSink({ servers: url, deliverBy: Date.now() + 30_000, attempt });
  texts.forEach((text, i) => sink.event({ runId, seq: i + 1, event: agent(text) }));
  sink.result(result(runId, `${attempt} done`, texts.length));
  await sink.close();
}

/** `tcab events follow <run id>`'s reader: replay from the first stored message to the result. */
async function follow(url: string, runId: string): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of readRunStream({ servers: url, runId, replay: true, untilResult: true })) items.push(item);
  return items;
}

describe('a Run deleted and re-created under its name (same run id, new uid)', () => {
  it('its events and result are stored, not dropped as repeats of the old Run\'s (same sequence numbers), and once the old ones are forgotten its followers see only its own', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect({ servers: [nats.url] });
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
