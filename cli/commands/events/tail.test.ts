// `tcab events tail` as a process against a real nats-server: it prints runs published after it started, live.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsServer } from '../../../test/support/nats-server.ts';
import { pollUntil } from '../../../test/support/poll.ts';
import { NatsSink } from '../../../driver/sinks/nats.ts';
import { natsSettings } from '../../../nats/settings.ts';
import type { RunResult } from '../../../shared/run.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let server: NatsServer;
beforeAll(async () => {
  server = await NatsServer.start();
});
afterAll(async () => {
  await server?.dispose();
});

const t = '2026-12-02T12:00:00.000Z';
const result = (runId: string): RunResult => ({
  run_id: runId, harness_slug: 'claude', harness_version: '1', model: 'm', canonical_model: null, outcome: 'succeeded', message: '', auth_mode: 'api-key', sessions: [], session_ids: [],
  exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: t, finished_at: t, event_count: 2,
});

async function publish(runId: string) {
  const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 30_000 });
  sink.event({ runId, seq: 1, event: { type: 'agent', timestamp: t, message: `hello from ${runId}` } });
  sink.event({ runId, seq: 2, event: { type: 'command', timestamp: t, command: 'ls', is_success: true } });
  sink.result(result(runId));
  await sink.close();
}

describe('tcab events tail', () => {
  it('prints every run’s new events live with run id and sequence, not the ones stored before it started', async () => {
    await publish('before-tail');
    const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), 'events', 'tail', '--nats', server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    const seen: Record<string, unknown>[] = [];
    const done = (async () => {
      for await (const line of lines) {
        seen.push(JSON.parse(line) as Record<string, unknown>);
        if (seen.length === 3) break;
      }
    })();
    // The consumer exists once tail has connected; a run every 200 ms until it has seen something.
    let n = 0;
    await pollUntil('tail to print a run published after it started', async () => {
      if (seen.length > 0) return true;
      await publish(`live-${++n}`);
      return false;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    await done;
    child.kill('SIGINT');
    expect(seen.map((e) => e.run_id)).toEqual(Array(3).fill(seen[0]!.run_id));
    expect(String(seen[0]!.run_id)).toMatch(/^live-\d+$/);
    expect(seen.map((e) => [e.type, e.seq])).toEqual([['agent', 1], ['command', 2], ['result', undefined]]);
  });
});
