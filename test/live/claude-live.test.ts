// The real Claude Code CLI (newest release from the npm registry) driven offline against the built-in stub model:
// the README's main job, the probe's no-cost guarantee, key injection, and NATS replay from another process.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import type { EventSink, SequencedEvent } from '../../driver/sinks/sink.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { natsSettings } from '../../nats/settings.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { startOfflineStub, STUB_API_KEY } from '../../driver/offline-stub.ts';
import { getHarness } from '../../harnesses/registry.ts';
import { RunSpec } from '../../shared/run.ts';
import { NatsServer } from '../support/nats-server.ts';
import { startStubModelServer } from '../../driver/stub-models/index.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
let base: string;
let nats: NatsServer;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'tcab-live-'));
  nats = await NatsServer.start();
});
afterAll(async () => {
  await nats?.dispose();
  rmSync(base, { recursive: true, force: true });
});

/** Notes how many model requests the stub had seen when the probe completed. */
class ProbeWatch implements EventSink {
  requestsAtProbe = -1;
  private readonly stub: { requests: unknown[] };
  constructor(stub: { requests: unknown[] }) {
    this.stub = stub;
  }
  event(record: SequencedEvent): void {
    const e = record.event;
    if (e.type === 'system' && e.stage === 'probe_harness' && e.status === 'completed') this.requestsAtProbe = this.stub.requests.length;
  }
  result(): void {}
  async close(): Promise<void> {}
}

describe('claude (real CLI) against the stub model', () => {
  it('runs the offline session end to end, publishes it to NATS, and `tcab events follow` replays it completely', async () => {
    const spec = RunSpec.parse({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Create hello.txt containing hello, then show it.' });
    const runId = `live-claude-${Date.now()}`;
    const env = { ...process.env, TCAB_RUN_ROOT: base };
    const stub = await startOfflineStub(getHarness('claude').manifest, spec, base, runId);
    const memory = new MemorySink();
    const stubRequests = stub.server.requests;
    const watch = new ProbeWatch(stub.server);
    try {
      const result = await executeRun(spec, {
        runId,
        env,
        sinks: [memory, watch, new NatsSink({ settings: natsSettings(nats.url), deliverBy: Date.now() + 120_000 })],
        user: resolveRunUser(env, process.getuid!()),
        credentialSource: { kind: 'home', home: join(base, 'nobody') },
        stub: { baseUrl: stub.baseUrl, apiKey: stub.apiKey },
      });
      expect(result).toMatchObject({ outcome: 'succeeded', exit_code: 0, auth_mode: 'api-key', canonical_model: 'anthropic/claude-sonnet-4.5' });
      expect(result.harness_version).toMatch(/^\d+\.\d+\.\d+/);
      expect(result.tokens).toMatchObject({ input: 2700, output: 240, cache_read: 900, cache_write: 150, reasoning: null });
      expect(result.comparable_cost_usd).toBeCloseTo((2700 * 3 + 240 * 15 + 900 * 0.3 + 150 * 3.75) / 1e6, 10);
      const types = memory.events.map((e) => e.event.type);
      expect(types).toEqual(['system', 'system', 'system', 'system', 'reasoning', 'agent', 'command', 'read', 'agent', 'system', 'system']);
      expect(memory.events.find((e) => e.event.type === 'command')?.event).toMatchObject({ command: "printf 'hello\\n' > hello.txt && cat hello.txt", is_success: true });

      // The probe never reached the model; the session authenticated with the injected key.
      expect(watch.requestsAtProbe).toBe(0);
      const messages = stubRequests.filter((r) => r.path.endsWith('/messages'));
      expect(messages.length).toBeGreaterThanOrEqual(3);
      expect(messages.every((r) => r.headers['x-api-key'] === STUB_API_KEY)).toBe(true);

      // Another process replays the run from NATS: same events, same order, then the result.
      const { stdout } = await run(process.execPath, [join(ROOT, 'cli/main.ts'), 'events', 'follow', runId, '--nats', nats.url, '--json'], { timeout: 60_000 });
      const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
      expect(lines.slice(0, -1)).toEqual(memory.events.map((e) => e.event));
      expect(lines.at(-1)).toMatchObject({ type: 'result', run_id: runId, outcome: 'succeeded' });
    } finally {
      await stub.close();
    }
  });

  it('an HTTP 400 from the model is a harness failure carrying the API error', async () => {
    const stub = await startStubModelServer({ script: { steps: [{ error: { status: 400, message: 'mock bad request' } }] } });
    try {
      const spec = RunSpec.parse({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'anything' });
      const memory = new MemorySink();
      const env = { ...process.env, TCAB_RUN_ROOT: base };
      const result = await executeRun(spec, {
        runId: `live-claude-400-${Date.now()}`,
        env,
        sinks: [memory],
        user: resolveRunUser(env, process.getuid!()),
        credentialSource: { kind: 'home', home: join(base, 'nobody') },
        stub: { baseUrl: stub.url, apiKey: STUB_API_KEY },
      });
      expect(result.outcome).toBe('harness_failed');
      const errors = memory.events.map((e) => e.event).filter((e) => e.type === 'error');
      expect(errors[0]).toMatchObject({ message: expect.stringContaining('400') });
    } finally {
      await stub.close();
    }
  });
});
