// The claim pass holding Runs back (issue 34), over fakes (no cluster). Provider back-pressure: a gateway reporting
// 429 for one model holds that model's Runs (queued, a Throttled condition saying why), the Runs of another model
// keep starting, and the held Runs start when the hold ends (the pass asks to run again then), with the figures as
// metrics. A serialised login: one Run at a time, the others waiting with a LoginBusy condition.
import { describe, expect, it } from 'vitest';
import type { CoreV1Api } from '@kubernetes/client-node';
import { createLogger } from '../../shared/log.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { ThrottleReport } from '../../shared/gateway.ts';
import { dispatcherConfig } from '../config.ts';
import { ThrottleBook } from '../claims/throttle.ts';
import type { RunObject } from '../../kube/resources.ts';
import { nextStatus } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import { ClaimPass } from './claim-pass.ts';
import type { Caches } from './informers.ts';
import { dispatcherMetrics } from './metrics.ts';
import { RunMemory } from './run-memory.ts';
import { objectKey } from './run-view.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const runOf = (name: string, model: string, createdAt: number): RunObject =>
  ({
    apiVersion: 'tcab.dev/v1alpha1',
    kind: 'Run',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: new Date(createdAt), resourceVersion: '1' },
    spec: { harness: 'claude', model, prompt: 'do it', authMode: 'api-key' },
  }) as unknown as RunObject;

const list = <T,>(items: () => T[]) => ({ list: items, get: () => undefined }) as never;

function setup(runs: RunObject[], env: Record<string, string> = {}, secrets = ['keys']) {
  const settings = dispatcherConfig({ TCAB_NAMESPACE: 'ns', TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'keys', key: 'anthropic' }]), ...env });
  const statuses = new Map<string, RunStatus>();
  const created: string[] = [];
  const core = { createNamespacedPod: async ({ body }: { body: { metadata: { name: string } } }) => void created.push(body.metadata.name) } as unknown as CoreV1Api;
  const caches = { runs: list(() => runs), configs: list(() => []), pods: list(() => []), kubeEvents: list(() => []), secrets: list(() => secrets.map((name) => ({ metadata: { name } }))) } as unknown as Caches;
  const metrics = dispatcherMetrics();
  const book = new ThrottleBook();
  let now = T0;
  const pass = new ClaimPass({
    core,
    caches,
    memory: new RunMemory(),
    settings,
    metrics,
    statusOf: (r) => statuses.get(objectKey(r)) ?? {},
    write: async (r: RunObject, o: Observation) => {
      const before = statuses.get(objectKey(r)) ?? {};
      const after = nextStatus(before, o);
      if (after === before) return 'unchanged';
      statuses.set(objectKey(r), after);
      return 'written';
    },
    forgetRun: async () => undefined,
    log: createLogger({ component: 'test', level: 'silent' }),
    throttles: { book, now: () => now },
  });
  // A claimed Run's status, as its reconcile would write it after the claim (the pass only creates the Pod).
  const settle = () => {
    for (const r of runs) if (created.some((p) => p.includes(r.metadata!.name!))) statuses.set(objectKey(r), nextStatus(statuses.get(objectKey(r)) ?? {}, { kind: 'claimed', pod: 'p', eventsSubject: 'e', at: iso(now) }));
  };
  return { pass, book, statuses, created, metrics, settle, setNow: (t: number) => (now = t) };
}

const report = (now: number, retryAfter: number, okSince = 0): ThrottleReport => ({
  now: iso(now),
  window_s: 600,
  throttles: [{ provider: 'anthropic', model: 'claude-busy', status: 429, count: 5, ok_since: okSince, last_at: iso(T0 - 500), retry_after_s: retryAfter }],
});

describe('ClaimPass with provider back-pressure', () => {
  it('holds the throttled model\'s Runs, starts the others, and resumes the held ones when the hold ends', async () => {
    const runs = [runOf('busy-1', 'claude-busy', T0 - 3000), runOf('busy-2', 'anthropic/claude-busy', T0 - 2000), runOf('free-1', 'claude-free', T0 - 1000)];
    const t = setup(runs);
    t.book.observe(report(T0, 20), T0);
    const first = await t.pass.run();
    expect(t.created.map((p) => p.includes('free-1'))).toEqual([true]);
    // Held: still queued, the Throttled condition says why; not failed.
    for (const name of ['busy-1', 'busy-2']) {
      const status = t.statuses.get(`ns/${name}`)!;
      expect(status.phase).toBeUndefined();
      expect(status.conditions).toEqual([expect.objectContaining({ type: 'Throttled', status: 'True', reason: 'ProviderThrottled' })]);
      expect(status.conditions![0]!.message).toContain('anthropic throttling claude-busy (HTTP 429)');
    }
    // Asks to look again when the hold ends (last_at + retry-after).
    expect(first).toEqual({ requeueAfterMs: 20_000 - 500 });
    expect(await t.metrics.registry.getSingleMetricAsString('tcab_dispatcher_throttle_held_runs')).toContain('tcab_dispatcher_throttle_held_runs{provider="anthropic",model="claude-busy"} 2');
    t.settle();
    // Before the end, a pass (a Run ended elsewhere) still holds them.
    t.setNow(T0 + 10_000);
    t.book.observe(report(T0 + 10_000, 20), T0 + 10_000);
    await t.pass.run();
    expect(t.created).toHaveLength(1);
    // At the end the held Runs start, oldest first; time to resume is measured.
    t.setNow(T0 + 19_500);
    t.book.observe(report(T0 + 19_500, 20), T0 + 19_500);
    expect(await t.pass.run()).toBeUndefined();
    expect(t.created.slice(1).map((p) => p.replace(/^.*?(busy-\d).*$/, '$1'))).toEqual(['busy-1', 'busy-2']);
    const hist = await t.metrics.registry.getSingleMetricAsString('tcab_dispatcher_throttle_hold_seconds');
    expect(hist).toContain('tcab_dispatcher_throttle_hold_seconds_count 2');
    expect(hist).toContain('tcab_dispatcher_throttle_hold_seconds_sum 39');
    expect(await t.metrics.registry.getSingleMetricAsString('tcab_dispatcher_throttle_held_runs')).not.toContain('claude-busy');
  });

  it('a gateway reporting good answers since the throttle releases the Runs at once, and their condition says so', async () => {
    const runs = [runOf('busy-1', 'claude-busy', T0 - 3000), runOf('free-1', 'claude-free', T0 - 1000)];
    const t = setup(runs);
    t.book.observe(report(T0, 120), T0);
    await t.pass.run();
    expect(t.created).toHaveLength(1);
    t.settle();
    t.setNow(T0 + 5000);
    t.book.observe(report(T0 + 5000, 120, 3), T0 + 5000);
    await t.pass.run();
    expect(t.created).toHaveLength(2);
    t.settle();
    expect(t.statuses.get('ns/busy-1')).toMatchObject({ phase: 'Dispatched', conditions: [expect.objectContaining({ type: 'Throttled', status: 'False', reason: 'Released' }), expect.objectContaining({ type: 'Dispatched' })] });
  });

  it('stale throttles (no report for a minute) hold nothing', async () => {
    const t = setup([runOf('busy-1', 'claude-busy', T0 - 3000)]);
    t.book.observe(report(T0, 300), T0);
    t.setNow(T0 + 61_000);
    await t.pass.run();
    expect(t.created).toHaveLength(1);
  });
});

describe('ClaimPass with a serialised login', () => {
  it('one Codex subscription Run at a time per login: the others wait Pending with LoginBusy, released when it is free', async () => {
    const codex = (name: string, createdAt: number): RunObject => {
      const run = runOf(name, 'gpt-5.1-codex', createdAt);
      run.spec = { harness: 'codex', model: 'gpt-5.1-codex', prompt: 'do it', authMode: 'subscription' } as never;
      return run;
    };
    const runs = [codex('login-1', T0 - 3000), codex('login-2', T0 - 2000)];
    const t = setup(runs, { TCAB_SUBSCRIPTION_SECRETS: JSON.stringify({ codex: 'codex-login' }) }, ['keys', 'codex-login']);
    await t.pass.run();
    expect(t.created.map((p) => p.includes('login-1'))).toEqual([true]);
    t.settle();
    const waiting = t.statuses.get('ns/login-2')!;
    expect(waiting.phase ?? 'Pending').toBe('Pending');
    expect(waiting.conditions?.find((c) => c.type === 'LoginBusy')).toMatchObject({ status: 'True', reason: 'LoginInUse' });
    expect(waiting.conditions!.find((c) => c.type === 'LoginBusy')!.message).toContain('codex-login');
    // The first is final: the second is claimed, and its claim releases it.
    t.statuses.set('ns/login-1', { phase: 'Succeeded' });
    await t.pass.run();
    expect(t.created.filter((p) => p.includes('login-2'))).toHaveLength(1);
    t.settle();
    expect(t.statuses.get('ns/login-2')!.conditions?.map((c) => [c.type, c.status])).toEqual([['LoginBusy', 'False'], ['Dispatched', 'True']]);
  });
});

describe('ClaimPass refusing a protocol the harness does not speak', () => {
  it('refuses ACP for a harness without [acp], and ACP with several sessions, naming the field; no Pod is made', async () => {
    const acp = (name: string, spec: object) => ({ ...runOf(name, 'claude-sonnet-4-5', T0), spec: { ...runOf(name, 'claude-sonnet-4-5', T0).spec, ...spec } }) as RunObject;
    const runs = [acp('claude-acp', { protocol: 'acp' }), acp('gemini-acp-2', { harness: 'gemini', model: 'gemini-2.5-pro', protocol: 'acp', sessions: 2 })];
    const t = setup(runs, { TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'keys', key: 'anthropic' }, { env: 'GEMINI_API_KEY', secret: 'keys', key: 'gemini' }]) });
    await t.pass.run();
    expect(t.created).toEqual([]);
    const messages = runs.map((r) => JSON.stringify(t.statuses.get(objectKey(r))));
    expect(messages[0]).toContain('invalid spec.protocol: \\"acp\\": claude does not speak the Agent Client Protocol');
    expect(messages[1]).toContain('invalid spec.sessions: 2: a run over ACP drives one session');
  });
});
