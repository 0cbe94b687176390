// `tcab events follow|tail` as processes against a real nats-server, with hostile messages published between
// good ones: each message costs at most itself (printed as an `unknown` event naming its subject), the good ones
// are all printed in order, and the reader keeps going to the run's result.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { NatsServer, REFUSING_PORT } from '../../../test/support/nats-server.ts';
import { pollUntil } from '../../../test/support/poll.ts';
import { ensureRunStream } from '../../../nats/stream.ts';
import { HEADER, eventSubject, resultSubject } from '../../../nats/envelope.ts';
import type { RunResult } from '../../../shared/run.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const t = '2026-12-04T12:00:00.000Z';
let server: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;

beforeAll(async () => {
  server = await NatsServer.start();
  nc = await connect({ servers: server.url });
  await ensureRunStream(await jetstreamManager(nc));
  js = jetstream(nc);
});
afterAll(async () => {
  await nc?.close();
  await server?.dispose();
});

const result = (runId: string, outcome: string = 'succeeded') => ({
  run_id: runId, harness_slug: 'claude', harness_version: '1', model: 'm', canonical_model: null, outcome, message: '', auth_mode: 'api-key', sessions: [], session_ids: [],
  exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
  wire: null, started_at: t, finished_at: t, event_count: 2, attempt: undefined, check: undefined, retryable: undefined,
}) satisfies Record<keyof RunResult, unknown>;

async function publish(subject: string, payload: string | Uint8Array, runId: string, seq: number, kind: 'event' | 'result' = 'event') {
  const h = natsHeaders();
  h.set(HEADER.runId, runId);
  h.set(HEADER.seq, String(seq));
  h.set(HEADER.kind, kind);
  await js.publish(subject, payload, { headers: h, msgID: `${runId}:${seq}` });
}

const good = (n: number) => ({ type: 'agent', timestamp: t, message: `good ${n}` });

/** The hostile payloads, each on its own subject of the run (what a compromised or buggy publisher could send). */
function hostile(runId: string): { subject: string; payload: string | Uint8Array }[] {
  return [
    { subject: eventSubject(runId, 'unknown'), payload: '['.repeat(100_000) + ']'.repeat(100_000) },
    { subject: eventSubject(runId, 'agent'), payload: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    { subject: eventSubject(runId, 'agent'), payload: 'this is not JSON' },
    { subject: eventSubject(runId, 'unknown'), payload: JSON.stringify({ type: 'unknown', timestamp: t, raw: 'x'.repeat(900_000) }).replace('"unknown"', '"unknwn"') },
    { subject: eventSubject(runId, 'command'), payload: JSON.stringify({ type: 'command', timestamp: t, command: 'ls', exit_code: 1.5 }) },
  ];
}

/** Publishes good 1, the hostile set, good 2 (seq numbers in order); returns the next seq. */
async function publishMixed(runId: string, first: number): Promise<number> {
  let seq = first;
  await publish(eventSubject(runId, 'agent'), JSON.stringify(good(seq)), runId, seq++);
  for (const { subject, payload } of hostile(runId)) await publish(subject, payload, runId, seq++);
  await publish(eventSubject(runId, 'agent'), JSON.stringify(good(seq)), runId, seq++);
  return seq;
}

interface Cli {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: () => string;
  exited: Promise<number | null>;
}

function startCli(args: string[]): Cli {
  const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stdoutDone = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) lines.push(JSON.parse(line) as Record<string, unknown>);
  })();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, stderr: () => stderr, exited: exited.then(async (code) => (await stdoutDone, code)) };
}

const summary = (lines: Record<string, unknown>[]) => lines.map((l) => (l.type === 'agent' ? l.message : l.type));
const HOSTILE_AS_UNKNOWN = Array(5).fill('unknown');

describe('tcab events follow / tail against hostile messages', () => {
  it('finding 3: follow prints every good event in order, each hostile message as one unknown, and runs on to the result', async () => {
    const runId = 'hostile-follow';
    const next = await publishMixed(runId, 1);
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', server.url]);
    await pollUntil('the replayed events', () => cli.lines.length >= 7, { timeoutMs: 30_000, intervalMs: 50 });
    expect(cli.child.exitCode).toBeNull();
    // Live, after follow caught up: more hostile messages, more good ones, then the result.
    const last = await publishMixed(runId, next);
    await publish(resultSubject(runId), JSON.stringify(result(runId)), runId, last, 'result');
    expect(await cli.exited).toBe(0);
    expect(summary(cli.lines)).toEqual(['good 1', ...HOSTILE_AS_UNKNOWN, 'good 7', 'good 8', ...HOSTILE_AS_UNKNOWN, 'good 14', 'result']);
    const warnings = cli.stderr().trim().split('\n');
    expect(warnings).toHaveLength(10);
    expect(warnings[0]).toBe(`tcab: the message on ${eventSubject(runId, 'unknown')} (run ${runId}, seq 2) is not a valid event: the payload nests deeper than 512 levels; shown as an unknown event`);
    expect(warnings[1]).toContain('the payload is not valid UTF-8');
    expect(warnings[4]).toContain('exit_code: Invalid input: expected int');
    expect(Math.max(...warnings.map((w) => w.length))).toBeLessThan(1000);
  });

  it('finding 3: tail prints every good event in order, hostile ones as unknown with their subject, and keeps running', async () => {
    const cli = startCli(['events', 'tail', '--nats', server.url]);
    // tail reads only what is published after its consumer exists: a probe every 200 ms until it prints one.
    let probes = 0;
    await pollUntil('tail to print a probe', async () => {
      if (cli.lines.length > 0) return true;
      await publish(eventSubject('tail-probe', 'agent'), JSON.stringify(good(0)), 'tail-probe', ++probes);
      return false;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    const runId = 'hostile-tail';
    const last = await publishMixed(runId, 1);
    await publish(resultSubject(runId), JSON.stringify(result(runId)), runId, last, 'result');
    await pollUntil('the result of the hostile run', () => cli.lines.some((l) => l.type === 'result' && l.run_id === runId), { timeoutMs: 30_000, intervalMs: 50 });
    expect(cli.child.exitCode).toBeNull();
    const ofRun = cli.lines.filter((l) => l.run_id === runId);
    expect(summary(ofRun)).toEqual(['good 1', ...HOSTILE_AS_UNKNOWN, 'good 7', 'result']);
    expect(ofRun.filter((l) => l.type === 'unknown').map((l) => [l.subject, l.seq])).toEqual(hostile(runId).map((h, i) => [h.subject, i + 2]));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('finding 11: a malformed result record ends follow with one line naming the run and the field, exit 3, not cancelled', async () => {
    const runId = 'bad-result';
    await publish(eventSubject(runId, 'agent'), JSON.stringify(good(1)), runId, 1);
    await publish(resultSubject(runId), JSON.stringify(result(runId, 'exploded')), runId, 2, 'result');
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', server.url]);
    expect(await cli.exited).toBe(3);
    expect(summary(cli.lines)).toEqual(['good 1']);
    expect(cli.stderr()).toBe(
      `tcab: run ${runId}: its result record (${resultSubject(runId)}) is invalid: outcome: Invalid option: expected one of "succeeded"|"harness_failed"|"infrastructure_failed"|"timed_out"|"cancelled"|"budget_exceeded"\n`,
    );
  });

  it('finding 11: follow with no NATS reachable names the URL (without its credentials) and the reason, exit 3', async () => {
    const port = REFUSING_PORT;
    const cli = startCli(['events', 'follow', 'some-run', '--nats', `nats://tcab:sk-fake-canary-nats-pw@127.0.0.1:${port}`]);
    expect(await cli.exited).toBe(3);
    expect(cli.stderr()).toBe(`tcab: cannot connect to NATS at nats://127.0.0.1:${port}: connection refused (connect ECONNREFUSED 127.0.0.1:${port})\n`);
  });
});

describe('tcab events follow across attempts (issue 35)', () => {
  const publishAttempt = async (runId: string, attempt: number, of: number, outcome: string, retryable: boolean) => {
    for (const seq of [1, 2]) {
      const h = natsHeaders();
      h.set(HEADER.runId, runId);
      h.set(HEADER.seq, String(seq));
      h.set(HEADER.kind, 'event');
      h.set(HEADER.attempt, String(attempt));
      await js.publish(eventSubject(runId, 'agent'), JSON.stringify({ type: 'agent', timestamp: t, message: `attempt ${attempt} event ${seq}` }), { headers: h, msgID: `${runId}:u-${attempt}:${seq}` });
    }
    const h = natsHeaders();
    h.set(HEADER.runId, runId);
    h.set(HEADER.kind, 'result');
    h.set(HEADER.attempt, String(attempt));
    await js.publish(resultSubject(runId), JSON.stringify({ ...result(runId, outcome), attempt: { number: attempt, of }, ...(retryable ? { retryable: true } : {}) }), { headers: h, msgID: `${runId}:u-${attempt}:result` });
  };

  it('reads on past a result another attempt may follow, stops at the last attempt\'s, and exits with its outcome', async () => {
    const runId = 'attempts-follow';
    await publishAttempt(runId, 1, 3, 'infrastructure_failed', true);
    const cli = startCli(['events', 'follow', runId, '--json', '--nats', server.url]);
    await pollUntil('attempt 1 and its result', () => cli.lines.length >= 3, { timeoutMs: 30_000, intervalMs: 50 });
    expect(cli.child.exitCode).toBeNull(); // attempt 1 of 3 failed on the registry: the Run goes again
    await publishAttempt(runId, 2, 3, 'succeeded', false);
    expect(await cli.exited).toBe(0);
    expect(cli.lines.map((l) => (l.type === 'result' ? `result ${String(l.outcome)} ${JSON.stringify(l.attempt)}` : l.message))).toEqual([
      'attempt 1 event 1', 'attempt 1 event 2', 'result infrastructure_failed {"number":1,"of":3}',
      'attempt 2 event 1', 'attempt 2 event 2', 'result succeeded {"number":2,"of":3}',
    ]);
  });

  it('a retryable failure of the last attempt, or one that is not retryable, ends follow (exit 3)', async () => {
    for (const [runId, attempt, of, retryable] of [['attempts-last', 3, 3, true], ['attempts-final', 1, 3, false]] as const) {
      await publishAttempt(runId, attempt, of, 'infrastructure_failed', retryable);
      const cli = startCli(['events', 'follow', runId, '--json', '--nats', server.url]);
      expect(await cli.exited).toBe(3);
      expect(cli.lines.filter((l) => l.type === 'result')).toHaveLength(1);
    }
  });
});
