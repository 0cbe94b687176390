// The NDJSON writer behind `tcab run --json`, `tcab events follow|tail --json`, `tcab translate` and the driver's
// pod log: live on a pipe, yet one write per event-loop turn rather than one per event.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createEventWriter } from './event-writer.ts';
import type { HarnessEvent } from '../events.ts';
import type { RunResult } from '../run.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { natsSettings } from '../../nats/settings.ts';
import { NatsServer } from '../../test/support/nats-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tcab-event-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const agent = (message: string): HarnessEvent => ({ type: 'agent', timestamp: '2026-01-01T00:00:00.000Z', message });

describe('createEventWriter', () => {
  it('finding 5: a consumer reading the NDJSON pipe sees an event before the writer goes on', async () => {
    // A writer in its own process, on a real pipe: one event, then it waits for the consumer's go-ahead file.
    const gate = join(dir, 'gate');
    const writer = join(dir, 'writer.ts');
    writeFileSync(
      writer,
      `import { existsSync } from 'node:fs';
import { createEventWriter } from ${JSON.stringify(join(import.meta.dirname, 'event-writer.ts'))};
const writer = createEventWriter(process.stdout, 'json');
writer.event(${JSON.stringify(agent('first'))});
await new Promise((resolve) => { const poll = setInterval(() => existsSync(${JSON.stringify(gate)}) && (clearInterval(poll), resolve(undefined)), 10); });
writer.event(${JSON.stringify(agent('second'))});
await writer.close();
`,
    );
    const child = spawn(process.execPath, [writer], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (received += text));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await vi.waitFor(() => expect(received).toBe(`${JSON.stringify(agent('first'))}\n`), { timeout: 20_000, interval: 10 });
      writeFileSync(gate, '');
      expect(await exited).toBe(0);
      expect(received.trim().split('\n').map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['first', 'second']);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('finding 5: a producer that awaits drained() waits for a reader that does not read, holding memory bounded, and loses nothing', async () => {
    // A writer in its own process, on a real pipe whose reader is paused until the writer says it is waiting.
    const events = 8000;
    const eventText = 16 * 1024; // 128 MiB in all: far more than the writer may hold
    const writer = join(dir, 'slow-reader.ts');
    writeFileSync(
      writer,
      `import { createEventWriter } from ${JSON.stringify(join(import.meta.dirname, 'event-writer.ts'))};
const writer = createEventWriter(process.stdout, 'json');
const text = 'x'.repeat(${eventText});
let said = false;
for (let i = 0; i < ${events}; i++) {
  writer.event({ type: 'agent', timestamp: '2026-01-01T00:00:00.000Z', message: i + ' ' + text });
  let settled = false;
  const wait = writer.drained().then(() => (settled = true));
  await Promise.resolve();
  if (!settled && !said) { said = true; process.stderr.write('waiting after ' + (i + 1) + '\\n'); }
  await wait;
}
await writer.close();
process.stderr.write('maxrss ' + process.resourceUsage().maxRSS + '\\n');
`,
    );
    const child = spawn(process.execPath, [writer], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await vi.waitFor(() => expect(stderr).toMatch(/waiting after \d+\n/), { timeout: 30_000, interval: 20 });
      // Waiting with a few pipe-fuls written: nothing else was produced ahead of the reader.
      expect(Number(/waiting after (\d+)/.exec(stderr)![1])).toBeLessThan(50);
      let lines = 0;
      let next = 0;
      let tail = '';
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        const parts = (tail + text).split('\n');
        tail = parts.pop()!;
        for (const line of parts) {
          expect(Number((JSON.parse(line) as { message: string }).message.split(' ')[0])).toBe(next++);
          lines++;
        }
      });
      expect(await exited).toBe(0);
      expect(lines).toBe(events);
      const maxRssKiB = Number(/maxrss (\d+)/.exec(stderr)![1]);
      // Node and the writer's modules take about 60 MiB; the 128 MiB of events must not be held at once.
      expect(maxRssKiB).toBeLessThan(110 * 1024);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('writes what one turn of the event loop produced as one write, in order', async () => {
    const writes: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        done();
      },
    });
    const writer = createEventWriter(out, 'json');
    for (let i = 0; i < 100; i++) writer.event(agent(`turn one ${i}`));
    expect(writes).toEqual([]); // still this turn
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    writer.event(agent('turn two'));
    await writer.close();
    expect(writes).toHaveLength(2);
    expect(writes.join('').trim().split('\n').map((l) => (JSON.parse(l) as { message: string }).message)).toEqual([...Array.from({ length: 100 }, (_, i) => `turn one ${i}`), 'turn two']);
  });

  it('a turn producing more than 64 KiB writes in 64 KiB pieces, not one huge buffer', () => {
    const writes: number[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.length);
        done();
      },
    });
    const writer = createEventWriter(out, 'json');
    const line = agent('x'.repeat(1000));
    for (let i = 0; i < 1000; i++) writer.event(line);
    const lineBytes = JSON.stringify(line).length + 1;
    expect(writes.length).toBeGreaterThan(10);
    for (const bytes of writes) {
      expect(bytes).toBeGreaterThan(64 * 1024);
      expect(bytes).toBeLessThanOrEqual(64 * 1024 + lineBytes);
    }
  });

  it('finding 5: `tcab events follow --json` on a pipe shows a run’s event while the run is still going', async () => {
    const server = await NatsServer.start();
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 60_000 });
    let closing: Promise<void> | undefined;
    const closeSink = () => (closing ??= sink.close());
    const runId = 'live-follow';
    const follow = spawn(process.execPath, [join(import.meta.dirname, '..', '..', 'cli', 'main.ts'), 'events', 'follow', runId, '--json', '--nats', server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = '';
    follow.stdout.setEncoding('utf8').on('data', (text: string) => (received += text));
    const exited = new Promise((resolve) => follow.on('exit', resolve));
    try {
      sink.event({ runId, seq: 1, event: agent('still working') });
      await vi.waitFor(() => expect(received).toContain('still working'), { timeout: 20_000, interval: 10 });
      // Seen before the run has ended: its result is published only now.
      expect(follow.exitCode).toBeNull();
      const result: RunResult = {
        run_id: runId, harness_slug: 'claude', harness_version: '2.1.197', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok',
        auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null,
        actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: '2026-01-01T00:00:00.000Z',
        finished_at: '2026-01-01T00:00:01.000Z', event_count: 1,
      };
      sink.result(result);
      await closeSink();
      expect(await exited).toBe(0);
      expect(received.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['agent', 'result']);
    } finally {
      follow.kill('SIGKILL');
      await closeSink();
      await server.dispose();
    }
  });
});
