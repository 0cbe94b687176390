// ATIF from the command line, as a user gets it: `tcab run --atif` of a real gg run against the stub model that
// also publishes to a real nats-server, `tcab export atif` of that run from JetStream, and `tcab translate --atif`
// of a recorded claude transcript. Every trajectory is checked with our schema and with Harbor's own models.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsServer } from '../../test/support/nats-server.ts';
import { AuthNats, agentEvent, runResult } from '../../test/support/nats-auth.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { connect } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ensureRunStream } from '../../nats/stream.ts';
import { HEADER, eventSubject, resultSubject } from '../../nats/envelope.ts';
import { harborPython, validateWithHarbor } from '../../test/support/harbor-venv.ts';
import { AtifTrajectory } from '../../export/atif/schema.ts';
import type { AtifTrajectory as Trajectory } from '../../export/atif/schema.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let dir: string;
let server: NatsServer;
beforeAll(async () => {
  harborPython(); // the first time on a machine: downloads harbor, under the hook's timeout
  dir = mkdtempSync(join(tmpdir(), 'tcab-atif-cli-'));
  server = await NatsServer.start();
});
afterAll(async () => {
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function tcab(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The run root is the mkdtemp directory itself, which the driver opens for the run user to traverse.
    const env = { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), TCAB_RUN_ROOT: dir };
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

function readTrajectory(file: string): Trajectory {
  const parsed = AtifTrajectory.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data;
}

describe('ATIF on the command line', () => {
  it('tcab run --atif writes the run; tcab export atif reads the same run back from JetStream; Harbor accepts both', async () => {
    const runId = 'atif-gg-stub';
    const local = join(dir, 'run.atif.json');
    const run = await tcab(['run', '--harness', 'gg', '--stub', '--model', 'claude-sonnet-4-5', '--prompt', 'Create hello.txt', '--json', '--run-id', runId, '--nats', server.url, '--atif', local, '--result', join(dir, 'result.json')]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const fromRun = readTrajectory(local);
    expect(fromRun.trajectory_id).toBe(runId);
    expect(fromRun.agent).toEqual({ name: 'gg', version: '0.1.0', model_name: 'claude-sonnet-4-5', extra: { canonical_model: 'anthropic/claude-sonnet-4.5' } });
    expect(fromRun.steps.map((s) => [s.source, s.message, s.tool_calls?.map((c) => c.function_name)])).toEqual([
      ['user', 'Create hello.txt', undefined],
      ['agent', 'I will create hello.txt and show its content.', ['shell', 'read_file']],
      ['agent', 'Created hello.txt containing "hello".', undefined],
    ]);
    expect(fromRun.steps[1]!.reasoning_content).toMatch(/^The task wants a file named hello.txt/);
    expect(fromRun.final_metrics).toMatchObject({ total_prompt_tokens: 2700 + 900 + 150, total_cached_tokens: 900, total_completion_tokens: 240, total_steps: 3 });

    const exported = join(dir, 'export.atif.json');
    const exp = await tcab(['export', 'atif', runId, '--nats', server.url, '--out', exported]);
    expect(exp.stderr).toBe('');
    expect(exp.code).toBe(0);
    const fromStream = readTrajectory(exported);
    // The stream holds every event and the result but not the spec: the same trajectory without the prompt step.
    expect(fromStream.steps).toEqual(fromRun.steps.slice(1).map((s) => ({ ...s, step_id: s.step_id - 1 })));
    expect({ ...fromStream, steps: [], final_metrics: { ...fromStream.final_metrics, total_steps: 0 } }).toEqual({ ...fromRun, steps: [], final_metrics: { ...fromRun.final_metrics, total_steps: 0 } });

    const stdout = await tcab(['export', 'atif', runId, '--nats', server.url]);
    expect(stdout.code).toBe(0);
    expect(JSON.parse(stdout.stdout)).toEqual(fromStream);

    const verdicts = validateWithHarbor({ run: fromRun, export: fromStream });
    expect(verdicts).toEqual({ run: { ok: true, errors: [], roundtrip: true }, export: { ok: true, errors: [], roundtrip: true } });
  });

  it('tcab export atif refuses at once a run with no result, and a run id that is not one', async () => {
    const unknown = await tcab(['export', 'atif', 'never-ran', '--nats', server.url]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/run never-ran has no result on NATS at .*: it is still running or was never run/);
    expect(unknown.stdout).toBe('');
    const bad = await tcab(['export', 'atif', 'a.b', '--nats', server.url]);
    expect(bad.code).toBe(2);
  });

  it('tcab translate --atif writes a recorded session with its subagent, usage and reported cost', async () => {
    const file = join(dir, 'translate.atif.json');
    const { code } = await tcab(['translate', '--harness', 'claude', '--json', '--atif', file, '--result', join(dir, 'r.json'), join(ROOT, 'harnesses/claude/fixtures/claude-2.1.332-tools.jsonl')]);
    expect(code).toBe(0);
    const t = readTrajectory(file);
    expect(t).toMatchObject({ session_id: '763c9809-83c4-4968-bba5-7d3252df7bb0', agent: { name: 'claude', version: 'unknown', model_name: 'claude-sonnet-4-5' } });
    expect(t).not.toHaveProperty('trajectory_id');
    expect(t.final_metrics).toMatchObject({ total_prompt_tokens: 8100 + 2700 + 450, total_completion_tokens: 720, total_cached_tokens: 2700, total_cost_usd: 0.037597500000000006 });
    expect(t.steps.flatMap((s) => s.tool_calls ?? []).map((c) => c.function_name)).toEqual(['Bash', 'Write', 'Read', 'Edit', 'Skill', 'subagent', 'Bash']);
    expect(validateWithHarbor({ t }).t).toEqual({ ok: true, errors: [], roundtrip: true });
  });

  it("with the chart's NATS auth, a reader credential (--creds) is all tcab export atif needs; none is refused", async () => {
    const nats = await AuthNats.start();
    const dispatcher = await RunStream.connect(await nats.dispatcherSettings());
    try {
      const sink = new NatsSink({ settings: (await nats.runSettings('r-auth')).settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
      sink.event({ runId: 'r-auth', seq: 1, event: agentEvent('hello from an authorized run') });
      sink.result(runResult('r-auth', 'done', 1));
      await sink.close();
      const creds = (await nats.readerSettings()).credsFile!;
      const ok = await tcab(['export', 'atif', 'r-auth', '--nats', nats.server.url, '--creds', creds]);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ trajectory_id: 'r-auth', agent: { name: 'gg' }, steps: [{ step_id: 1, source: 'agent', message: 'hello from an authorized run' }] });
      const refused = await tcab(['export', 'atif', 'r-auth', '--nats', nats.server.url]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/^tcab: cannot connect to NATS at /);
    } finally {
      await dispatcher.close();
      await nats.dispose();
    }
  });

  it('a hostile message on the stream costs only itself (left out, counted, warned about); an invalid result is exit 3', async () => {
    const nc = await connect({ servers: server.url });
    try {
      await ensureRunStream(await jetstreamManager(nc));
      const js = jetstream(nc);
      const publish = async (subject: string, payload: string | Uint8Array, runId: string, seq: number | 'result') => {
        const h = natsHeaders();
        h.set(HEADER.runId, runId);
        h.set(HEADER.seq, String(seq === 'result' ? 0 : seq));
        h.set(HEADER.kind, seq === 'result' ? 'result' : 'event');
        await js.publish(subject, payload, { headers: h, msgID: `${runId}:${seq}` });
      };
      const t = '2026-12-05T10:00:00.000Z';
      const result = (runId: string) => JSON.stringify({ run_id: runId, harness_slug: 'claude', harness_version: '1', model: 'm', canonical_model: null, outcome: 'succeeded', message: '', auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: t, finished_at: t, event_count: 3 });
      await publish(eventSubject('hostile', 'agent'), JSON.stringify({ type: 'agent', timestamp: t, message: 'before' }), 'hostile', 1);
      await publish(eventSubject('hostile', 'agent'), new Uint8Array([0xff, 0xfe, 0x48, 0x49]), 'hostile', 2);
      await publish(eventSubject('hostile', 'command'), JSON.stringify({ type: 'command', timestamp: t, command: 'HOSTILE-PAYLOAD', exit_code: 1.5 }), 'hostile', 3);
      await publish(eventSubject('hostile', 'agent'), JSON.stringify({ type: 'agent', timestamp: t, message: 'after' }), 'hostile', 4);
      await publish(resultSubject('hostile'), result('hostile'), 'hostile', 'result');
      const out = await tcab(['export', 'atif', 'hostile', '--nats', server.url]);
      expect(out.code).toBe(0);
      expect(out.stderr.trim().split('\n')).toEqual([expect.stringMatching(/is not a valid event \(the payload is not valid UTF-8\); left out/), expect.stringMatching(/is not a valid event \(.*exit_code.*\); left out/)]);
      const trajectory = JSON.parse(out.stdout) as Trajectory;
      expect(trajectory.steps.map((s) => s.message)).toEqual(['before', 'after']);
      expect(trajectory.extra).toMatchObject({ tcab: { event_count: 4, left_out: { unknown: 2, system: 0 } } });
      expect(out.stdout).not.toContain('HOSTILE-PAYLOAD');

      await publish(eventSubject('bad-result', 'agent'), JSON.stringify({ type: 'agent', timestamp: t, message: 'x' }), 'bad-result', 1);
      await publish(resultSubject('bad-result'), JSON.stringify({ run_id: 'bad-result', outcome: 'maybe' }), 'bad-result', 'result');
      const bad = await tcab(['export', 'atif', 'bad-result', '--nats', server.url]);
      expect(bad.code).toBe(3);
      expect(bad.stderr).toMatch(/run bad-result: its result record \(tcab\.run\.bad-result\.result\) is invalid/);
      expect(bad.stdout).toBe('');
    } finally {
      await nc.close();
    }
  });
});
