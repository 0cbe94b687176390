// The console server against a real nats-server (JetStream) with synthetic Runs: the run feed resumes after a
// disconnect with no gap and no duplicate, the runs table carries each run's latest event as its activity (also
// for events stored before the server started), and the cancel route needs the API's bearer token.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_PATHS, RUNS_MESSAGES, RUN_MESSAGES } from '../../shared/console.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { ConsoleNats } from '../../nats/console-reader.ts';
import { eventEnvelope, resultEnvelope } from '../../nats/envelope.ts';
import { RunPublisher } from '../../nats/publisher.ts';
import { natsSettings } from '../../nats/settings.ts';
import { NatsServer } from '../../test/support/nats-server.ts';
import { AtifTrajectory } from '../../export/atif/index.ts';
import { mountConsole } from './mount.ts';
import { installReadAuth } from './read-auth.ts';
import type { MountedConsole } from './mount.ts';
import { natsSources } from './nats-sources.ts';
import type { ConsoleRun, ConsoleSources, RunChange } from './sources.ts';
import { SseClient } from './sse-client.test-support.ts';

const TOKEN = 'fake-console-token-for-tests';
const now = () => new Date().toISOString();
const command = (text: string): HarnessEvent => ({ type: 'command', timestamp: now(), command: text });

class SyntheticRuns {
  readonly runs = new Map<string, ConsoleRun>();
  private listeners = new Set<(c: RunChange) => void>();
  readonly cancelled: string[] = [];
  put(run: ConsoleRun): void {
    this.runs.set(`${run.metadata.namespace}/${run.metadata.name}`, run);
    this.listeners.forEach((l) => l({ type: 'upsert', run }));
  }
  sources(): Omit<ConsoleSources, 'activity' | 'feed'> {
    return {
      runs: { list: () => this.runs.values(), subscribe: (l) => (this.listeners.add(l), () => this.listeners.delete(l)) },
      runDetail: { watch: (ns, name, cb) => (cb(this.runs.get(`${ns}/${name}`)), () => undefined) },
      kubeEvents: { watch: (_t, cb) => (cb([{ type: 'Normal', reason: 'Claimed', message: 'claimed', count: 1 }]), () => undefined) },
      writer: {
        cancel: async (ns, name) => {
          if (!this.runs.has(`${ns}/${name}`)) return 'not-found';
          this.cancelled.push(`${ns}/${name}`);
          return 'cancelled';
        },
      },
      harnesses: { list: () => [{ slug: 'gg' }], readiness: () => ({ ready: true, missing: [] }) },
      configs: { list: () => new Map(), subscribe: () => () => undefined },
    };
  }
}

const runObject = (name: string, phase: 'Pending' | 'Running' = 'Running'): ConsoleRun => ({
  metadata: { namespace: 'evals', name, uid: `uid-${name}`, creationTimestamp: now() },
  spec: { harness: 'gg', model: 'gg-model', prompt: 'do it' },
  status: { phase },
});

let nats: NatsServer;
let publisher: RunPublisher;
let consoleNats: ConsoleNats;
let app: FastifyInstance;
let mounted: MountedConsole;
let base: string;
const synthetic = new SyntheticRuns();
const runSeqs = new Map<string, number>();

async function publish(runId: string, events: HarnessEvent[]): Promise<void> {
  for (const event of events) {
    const seq = (runSeqs.get(runId) ?? 0) + 1;
    runSeqs.set(runId, seq);
    await publisher.publish(eventEnvelope(runId, 'attempt-1', seq, event), JSON.stringify(event));
  }
}

beforeAll(async () => {
  nats = await NatsServer.start();
  publisher = await RunPublisher.connect(natsSettings(nats.url));
  await publisher.ensureStream();
  // Stored before the console starts: the activity consumer's last-per-subject replay must find it.
  synthetic.put(runObject('early'));
  await publish('evals_early', [command('npm ci'), command('npm test')]);
  consoleNats = await ConsoleNats.connect(natsSettings(nats.url));
  app = Fastify();
  // The streams' NATS side is under test here; who may read them is read-auth.test.ts's.
  installReadAuth(app, { mode: 'open', readToken: () => '', writeToken: () => TOKEN });
  mounted = mountConsole(app, { sources: { ...synthetic.sources(), ...natsSources(consoleNats) }, token: () => TOKEN, stalledAfterSeconds: 120 });
  await mounted.started;
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterEach(() => SseClient.closeAll());

afterAll(async () => {
  await mounted?.stop();
  await app?.close();
  await consoleNats?.close();
  await publisher?.close();
  await nats?.dispose();
});

describe('run stream', () => {
  it('replays, goes live, and after a disconnect resumes from Last-Event-ID with no gap and no duplicate', async () => {
    synthetic.put(runObject('r1'));
    await publish('evals_r1', Array.from({ length: 5 }, (_, i) => command(`step ${i + 1}`)));
    const url = `${base}${CONSOLE_PATHS.runStream('evals', 'r1')}`;

    const first = await SseClient.open(url);
    await first.waitFor((f) => f.event === 'caught-up');
    expect(RUN_MESSAGES.run.parse(first.data('run')[0]).row).toMatchObject({ key: 'evals/r1', phase: 'Running' });
    expect(RUN_MESSAGES['kube-events'].parse(first.data('kube-events')[0]).items[0]!.reason).toBe('Claimed');
    await publish('evals_r1', [command('step 6'), command('step 7')]);
    await first.waitFor(() => first.feedItems().length >= 7);
    const lastId = first.lastId()!;
    first.close();

    // Published while nobody listened.
    await publish('evals_r1', [command('step 8'), command('step 9'), command('step 10')]);
    const second = await SseClient.open(url, { 'last-event-id': String(lastId) });
    await second.waitFor((f) => f.event === 'caught-up');
    await publish('evals_r1', [command('step 11')]);
    await second.waitFor(() => second.feedItems().length >= 4);

    const seen = [...first.feedItems(), ...second.feedItems()];
    const runSeqOrder = seen.map((i) => i.runSeq);
    expect(runSeqOrder).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    const streamSeqs = seen.map((i) => i.seq);
    expect(new Set(streamSeqs).size).toBe(streamSeqs.length);
    expect([...streamSeqs].sort((a, b) => a - b)).toEqual(streamSeqs);
    expect(seen.map((i) => (i.event.type === 'command' ? i.event.command : ''))).toEqual(Array.from({ length: 11 }, (_, i) => `step ${i + 1}`));
    second.close();
  });

  it('?after=<n> resumes the same way as the header, and the result arrives after the last event', async () => {
    synthetic.put(runObject('r2'));
    await publish('evals_r2', [command('a'), command('b'), command('c')]);
    const all = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('evals', 'r2')}`);
    await all.waitFor((f) => f.event === 'caught-up');
    const [, second] = all.feedItems();
    all.close();
    const result = { run_id: 'evals_r2', harness_slug: 'gg', harness_version: '1', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok', auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: now(), finished_at: now(), event_count: 3 } satisfies RunResult;
    await publisher.publish(resultEnvelope(result, 'attempt-1'), JSON.stringify(result));
    const resumed = await SseClient.open(`${base}${CONSOLE_PATHS.runStream('evals', 'r2')}?after=${second!.seq}`);
    await resumed.waitFor((f) => f.event === 'result');
    expect(resumed.feedItems().map((i) => i.event.type === 'command' && i.event.command)).toEqual(['c']);
    const res = RUN_MESSAGES.result.parse(resumed.data('result')[0]);
    expect(res.result.message).toBe('ok');
    expect(res.seq).toBeGreaterThan(resumed.feedItems()[0]!.seq);
    resumed.close();
  });
});

describe('atif', () => {
  it('a run as an ATIF trajectory from its stream and its Run (the prompt too); 404 for a Run with nothing', async () => {
    const res = await fetch(`${base}/api/console/runs/evals/r2/atif`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="evals_r2.atif.json"');
    const trajectory = AtifTrajectory.parse(await res.json());
    expect(trajectory.trajectory_id).toBe('evals_r2');
    expect(JSON.stringify(trajectory.steps)).toContain('do it');
    expect(trajectory.steps.length).toBeGreaterThanOrEqual(2); // the prompt, then the agent step with the three commands
    expect(trajectory.final_metrics?.total_steps).toBe(trajectory.steps.length);
    expect((await fetch(`${base}/api/console/runs/evals/nothing-here/atif`)).status).toBe(404);
  });
});

describe('runs stream', () => {
  it('the snapshot has every Run with its latest event as activity (stored before start too), then live upserts', async () => {
    const client = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`);
    await client.waitFor((f) => f.event === 'snapshot');
    const snapshot = RUNS_MESSAGES.snapshot.parse(client.data('snapshot')[0]);
    expect(snapshot.stalledAfterSeconds).toBe(120);
    const early = snapshot.rows.find((r) => r.key === 'evals/early');
    expect(early?.activity).toMatchObject({ text: 'command: npm test', type: 'command' });
    // When JetStream stored the event: before this snapshot was made, and not long before (the suite published it).
    const storedAgoMs = Date.parse(snapshot.serverTime) - Date.parse(early!.lastEventAt!);
    expect(storedAgoMs).toBeGreaterThanOrEqual(0);
    expect(storedAgoMs).toBeLessThan(120_000);

    synthetic.put(runObject('late', 'Pending'));
    await client.waitFor(() => client.data('upsert').some((d) => RUNS_MESSAGES.upsert.parse(d).rows.some((r) => r.key === 'evals/late')));
    await publish('evals_late', [command('make build')]);
    await client.waitFor(() => client.data('upsert').some((d) => RUNS_MESSAGES.upsert.parse(d).rows.some((r) => r.key === 'evals/late' && r.activity?.text === 'command: make build')));
    client.close();
  });
});

describe('cancel', () => {
  const cancel = (name: string, headers: Record<string, string> = {}) => fetch(`${base}${CONSOLE_PATHS.cancel('evals', name)}`, { method: 'POST', headers });

  it('refuses a request without a token or with a wrong one (401), and patches with the right one', async () => {
    synthetic.put(runObject('victim'));
    expect((await cancel('victim')).status).toBe(401);
    expect((await cancel('victim', { authorization: 'Bearer not-the-token' })).status).toBe(401);
    expect((await cancel('victim', { authorization: TOKEN })).status).toBe(401);
    expect(synthetic.cancelled).toEqual([]);
    const ok = await cancel('victim', { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ key: 'evals/victim', cancel: true });
    expect(synthetic.cancelled).toEqual(['evals/victim']);
    expect((await cancel('nobody', { authorization: `Bearer ${TOKEN}` })).status).toBe(404);
  });
});
