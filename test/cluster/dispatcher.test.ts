// The dispatcher against the test control plane and a real NATS server: a gg Run goes Pending -> Dispatched ->
// Running -> Succeeded through a real driver Pod (the driver image built from deploy/images, pulled and run by the
// real node's kubelet, containerd and runc) against the stub model; caps hold when sampled from the apiserver; a
// canary key never leaves the driver's harness process. The dispatcher runs in this process; NATS and the stub
// models on the host's loopback, reached by Pods through the node (exposeHostPort).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import { dispatcherMetrics } from '../../dispatcher/controller/metrics.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { electDispatcher } from '../../dispatcher/leadership.ts';
import type { RunObject } from '../../kube/resources.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { natsSettings } from '../../nats/settings.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { NatsServer } from '../support/nats-server.ts';
import { RUN_LABEL } from '../../dispatcher/pods/driver-pod.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { createLogger } from '../../shared/log.ts';
import { copyImageInRegistry, podUrl, realNode } from './real-node-context.ts';
import { clusterConfig, createNamespace, kubectl, readRunUntil, waitFor, watchAll } from './support.ts';
import { ggDriverEnv } from './gg-driver-env.ts';

interface Change {
  revision: number;
  kind: 'run' | 'pod';
  run: string;
  gone: boolean;
  phase?: string;
}

/**
 * Replays Run and Pod changes in revision order. A Run holds a slot of its harness while it is not finished and
 * its status says Dispatched/Starting/Running or its driver Pod exists (the claim is the Pod's create).
 */
function replayOccupancy(changes: Change[], harnessOf: Map<string, string>) {
  const phase = new Map<string, string>();
  const pods = new Set<string>();
  const holding = new Set<string>();
  const occupied: Record<string, number> = {};
  const queued = new Set<string>();
  const peak: Record<string, number> = {};
  const firstSlotAt: Record<string, number> = {};
  const starved: Record<string, number> = {};
  let peakTotal = 0;
  let acquired = 0;
  let counted = 0;
  const sorted = [...changes].sort((a, b) => a.revision - b.revision);
  sorted.forEach((change) => {
    const harness = harnessOf.get(change.run)!;
    if (change.kind === 'run') phase.set(change.run, change.gone ? 'Gone' : change.phase ?? 'Pending');
    else if (change.gone) pods.delete(change.run);
    else pods.add(change.run);
    const p = phase.get(change.run) ?? 'Pending';
    const holds = !['Succeeded', 'Failed', 'Cancelled', 'Gone'].includes(p) && (['Dispatched', 'Starting', 'Running'].includes(p) || pods.has(change.run));
    if (!holds && p === 'Pending') queued.add(change.run);
    else queued.delete(change.run);
    if (holds !== holding.has(change.run)) {
      if (holds && firstSlotAt[harness] === undefined) firstSlotAt[harness] = acquired;
      if (holds) acquired += 1;
      occupied[harness] = (occupied[harness] ?? 0) + (holds ? 1 : -1);
      if (holds) holding.add(change.run);
      else holding.delete(change.run);
    }
    peak[harness] = Math.max(peak[harness] ?? 0, occupied[harness] ?? 0);
    peakTotal = Math.max(peakTotal, holding.size);
    if (acquired === 0) return; // the queue is still being filled
    counted += 1;
    const waiting = new Set([...queued].map((r) => harnessOf.get(r)!));
    for (const h of waiting) if ((occupied[h] ?? 0) === 0) starved[h] = (starved[h] ?? 0) + 1;
  });
  const revisions = counted;
  const starvedShare = Object.fromEntries([...new Set(harnessOf.values())].map((h) => [h, (starved[h] ?? 0) / revisions]));
  /** firstSlotAt: slots handed out (any harness) before the harness's first; starvedShare: of the revisions since the first claim, those where it had queued Runs and no slot. */
  return { peak, peakTotal, firstSlotAt, starvedShare, revisions };
}

const CANARY = 'sk-ant-fake-canary-7c1d9e0b5a';
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let stub: StubModelServer;
/** NATS as driver Pods reach it (the dispatcher itself uses nats.url). */
let natsForPods: string;
const logs: string[] = [];
const stops: (() => Promise<void>)[] = [];

async function startDispatcher(identity: string, overrides: Record<string, string> = {}, resultGraceSeconds = 2) {
  const settings = dispatcherConfig({
    ...(await ggDriverEnv({ namespace: ns, natsUrl: natsForPods, stubUrl: stub.url, natsReachable: true })),
    ...overrides,
  });
  const stream = await RunStream.connect(natsSettings(nats.url));
  // The dispatcher's pino lines, kept for failure messages and the canary check.
  const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', bindings: { identity }, destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
  const metrics = dispatcherMetrics();
  const dispatcher = new Dispatcher({ config: clusterConfig(), settings: { ...settings, TCAB_RESULT_GRACE_SECONDS: resultGraceSeconds }, events: stream, metrics, log });
  await dispatcher.start();
  const elector = electDispatcher(clusterConfig(), { dispatcher, stream, namespace: ns, name: 'tcab-dispatcher', identity, leaseDurationSeconds: 10, retryMs: 1000, log });
  const stop = async () => {
    await elector.stop();
    await dispatcher.stop();
    await stream.close();
  };
  stops.push(stop);
  return { dispatcher, elector, metrics, stop };
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('dispatch'));
  expect((await kubectl(['apply', '-f', join(import.meta.dirname, '..', '..', 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  natsForPods = await podUrl(nats.url);
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'echo hi from the pod' } } }, { text: 'All done.' }] } });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, `--from-literal=anthropic=${CANARY}`]);
});

afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  await stub?.close();
  await nats?.stop();
  await removeNs();
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
const run = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec });

describe('dispatcher (test control plane + NATS)', () => {
  it('runs a gg Run end to end through a driver Pod: status, system events, result, teardown; the key stays secret', async () => {
    const { metrics } = await startDispatcher('dispatcher-a');
    await kubectl(['apply', '-f', '-'], JSON.stringify(run('gg-hello', { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120 })));
    const [done] = await waitFor<RunObject>(runsPath(), (runs) => runs.some((r) => r.metadata?.name === 'gg-hello' && ['Succeeded', 'Failed'].includes(r.status?.phase ?? '')), 120_000);
    expect(done!.status, logs.join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', harnessVersion: '0.1.0', authMode: 'api-key', canonicalModel: 'anthropic/claude-sonnet-4.5', pod: 'tcab-run-gg-hello' });
    expect(done!.status!.usage!.output).toBeGreaterThan(0);
    expect(done!.status!.conditions!.map((c) => c.type)).toEqual(expect.arrayContaining(['Dispatched', 'Finished']));

    // The Pod goes away after the end (teardown) and the run's subjects carry the whole story.
    await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => !pods.some((p) => p.metadata?.name === 'tcab-run-gg-hello'), 60_000);
    const stageOf = (i: StreamItem) => (i.kind === 'event' && i.event.type === 'system' ? `${i.event.stage}:${i.event.status}` : '');
    // teardown twice: the driver's own (run home and workspace) and the dispatcher's (the Pod deleted).
    const podDeleted = (i: StreamItem) => i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'teardown' && i.event.status === 'completed' && /driver pod .* deleted/.test(i.event.message ?? '');
    const events = await readRunUntil(nats.url, `${ns}_gg-hello`, (all) => all.some(podDeleted), 30_000);
    expect(events.map(stageOf)).toEqual(expect.arrayContaining(['pull_image:completed', 'start_container:started', 'start_container:completed', 'probe_harness:completed', 'teardown:started', 'teardown:completed']));
    // The real kubelet reports Pulling only when it pulls: an image an earlier test left on the node is one Pulled
    // event ("already present on machine"), so pull_image:started appears exactly when the pull was real.
    const pulled = events.find((i) => stageOf(i) === 'pull_image:completed');
    const cached = pulled?.kind === 'event' && pulled.event.type === 'system' && /already present on machine/.test(pulled.event.message ?? '');
    expect(events.some((i) => stageOf(i) === 'pull_image:started'), JSON.stringify(pulled)).toBe(!cached);
    // The Pod's start (published by the dispatcher) precedes everything the driver published (it held its messages).
    const firstDriverEvent = events.findIndex((i) => i.kind === 'event' && i.seq > 0);
    expect(events.findIndex((i) => stageOf(i) === 'start_container:completed')).toBeLessThan(firstDriverEvent);
    expect(events.some((e) => e.kind === 'event' && e.event.type === 'command')).toBe(true);
    expect(events.some((e) => e.kind === 'result' && e.result.outcome === 'succeeded' && e.result.harness_slug === 'gg')).toBe(true);
    // Writes over the Run's life: status (claim, Starting/Running as seen, final) plus the Pod's create and delete.
    const writes = (await metrics.statusWrites.get()).values[0]!.value + (await metrics.podWrites.get()).values[0]!.value;
    expect(writes).toBeGreaterThanOrEqual(4);
    expect(writes).toBeLessThanOrEqual(6);

    // The canary key: not in the Run, its Events, the NATS messages or the dispatcher's log lines.
    const everything = [JSON.stringify(done), (await kubectl(['get', 'events', '-n', ns, '-o', 'json'])).stdout, JSON.stringify(events), logs.join('\n')].join('\n');
    expect(everything).not.toContain(CANARY);
    expect(stub.requests.some((r) => r.headers['x-api-key'] === CANARY)).toBe(true); // it did reach the model
  }, 300_000);

  it('1,000 Runs over 3 harnesses, caps 2 / 5 / unlimited and a global 20: occupancy never exceeds a cap at any apiserver revision, every Run ends, no harness starves', async () => {
    // Short jobs (busybox: sleep 0.3) instead of drivers: the caps are the dispatcher's, whatever the Pod does; the
    // Pods are real all the same (sandbox, CNI, container, exit, deletion on the node).
    for (const stop of stops.splice(0)) await stop();
    const caps: Record<string, number | null> = { claude: 2, codex: 5, gemini: null };
    const share: Record<string, number> = { claude: 100, codex: 200, gemini: 700 };
    for (const [slug, cap] of Object.entries(caps)) {
      await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'HarnessConfig', metadata: { name: slug }, spec: { maxParallelism: cap } }));
    }
    // Every change of the Runs and their Pods, as the apiserver ordered them: the occupancy is replayed afterwards
    // from these (both kinds share etcd's revision counter), not taken from the dispatcher's memory.
    const changes: Change[] = [];
    const record = (kind: Change['kind']) => (type: string, obj: RunObject | V1Pod) => {
      const run = kind === 'run' ? obj.metadata!.name! : obj.metadata!.labels?.[RUN_LABEL];
      if (run?.startsWith('cap-')) changes.push({ revision: Number(obj.metadata!.resourceVersion), kind, run, gone: type === 'DELETED', phase: (obj as RunObject).status?.phase });
    };
    const watches = [await watchAll<RunObject>(runsPath(), {}, record('run')), await watchAll<V1Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: RUN_LABEL }, record('pod'))];
    const harnessOf = new Map<string, string>();
    const runs = Object.entries(share).flatMap(([harness, n]) => Array.from({ length: n }, (_, i) => ({ harness, name: `cap-${harness}-${i}` })));
    for (const r of runs) harnessOf.set(r.name, r.harness);
    // gemini's 700 first, so they are the oldest: oldest-first alone would make codex and claude wait for all of them.
    for (const harness of ['gemini', 'codex', 'claude']) {
      const items = runs.filter((r) => r.harness === harness).map((r) => run(r.name, { harness, model: 'm', prompt: 'p', maxRuntimeSeconds: 60 }));
      expect((await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }))).code).toBe(0);
    }
    await kubectl(['create', 'secret', 'generic', 'fake-keys', '-n', ns, '--from-literal=anthropic=sk-fake-a', '--from-literal=openai=sk-fake-o', '--from-literal=gemini=fake-g']);
    await startDispatcher('dispatcher-caps', {
      TCAB_DRIVER_IMAGE: realNode().images.shortJob,
      TCAB_DRIVER_CPU: '10m',
      TCAB_DRIVER_MEMORY: '32Mi',
      TCAB_DISPATCHER_MAX_INFLIGHT: '20',
      TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'fake-keys', key: 'anthropic' }, { env: 'OPENAI_API_KEY', secret: 'fake-keys', key: 'openai' }, { env: 'GEMINI_API_KEY', secret: 'fake-keys', key: 'gemini' }]),
    }, 0);
    const started = Date.now();
    // 1,000 real Pods (sandbox, CNI, runc, exit, deletion) through one 2-core node: 305 s on a quiet machine,
    // 954-983 s with load 64-75 from other cluster runs (611-759 s before the node's CNI lost its per-Pod iptables
    // calls); the margin is for a busier machine, not expected.
    const finished = await waitFor<RunObject>(runsPath(), (all) => {
      const mine = all.filter((r) => r.metadata?.name?.startsWith('cap-'));
      return mine.length === runs.length && mine.every((r) => isFinal(r.status ?? {}));
    }, 1_500_000);
    for (const w of watches) w.stop();

    const replay = replayOccupancy(changes, harnessOf);
    console.log('1,000 Runs, occupancy replayed from the apiserver:', JSON.stringify({ ...replay, seconds: Math.round((Date.now() - started) / 1000) }));
    // The caps held and were reached; gemini (unlimited) takes whatever global room the capped two leave.
    expect(replay.peak).toMatchObject({ claude: 2, codex: 5 });
    expect(replay.peak.gemini).toBeGreaterThanOrEqual(20 - 2 - 5);
    expect(replay.peak.gemini).toBeLessThanOrEqual(20);
    expect(replay.peakTotal).toBe(20);
    // No harness starves: each got a slot among the first 20 claims, and while it had queued Runs it held a slot
    // nearly always (the moments between a Run's end and its successor's claim are the rest).
    for (const harness of Object.keys(caps)) {
      expect(replay.firstSlotAt[harness]!, harness).toBeLessThan(20);
      expect(replay.starvedShare[harness]!, harness).toBeLessThan(0.05);
    }
    // Every Run ended; the short job publishes no result, so the dispatcher says that.
    const mine = finished.filter((r) => r.metadata?.name?.startsWith('cap-'));
    expect(mine).toHaveLength(1000);
    expect(mine.filter((r) => !r.status?.message?.includes('without publishing a result'))).toEqual([]);
  }, 1_600_000);

  it('spec.cancel stops the Pod and ends the Run Cancelled; a deleted Pod is another attempt (or, retries 0, fails its Run with the reason); a deleted Run takes its Pod with it', async () => {
    for (const stop of stops.splice(0)) await stop();
    await kubectl(['delete', 'harnessconfigs', '--all']);
    await startDispatcher('dispatcher-cancel', { TCAB_DRIVER_IMAGE: realNode().images.longJob, TCAB_DRIVER_CPU: '10m', TCAB_DRIVER_MEMORY: '32Mi', TCAB_RETRY_BACKOFF_SECONDS: '1' });
    const spec = { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'p', maxRuntimeSeconds: 300 };
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [run('to-cancel', spec), run('pod-lost', { ...spec, retries: 0 }), run('pod-retried', spec), run('run-deleted', spec)] }));
    const podsPath = `/api/v1/namespaces/${ns}/pods`;
    await waitFor<V1Pod>(podsPath, (pods) => ['tcab-run-to-cancel', 'tcab-run-pod-lost', 'tcab-run-pod-retried', 'tcab-run-run-deleted'].every((n) => pods.some((p) => p.metadata?.name === n && p.status?.phase === 'Running')), 60_000);

    // A Pod deleted under a Run that may retry: attempt 2 on a Pod of its own, attempt 1 closed with how it went.
    await kubectl(['delete', 'pod', 'tcab-run-pod-retried', '-n', ns, '--wait=false']);
    await waitFor<V1Pod>(podsPath, (pods) => pods.some((p) => p.metadata?.name === 'tcab-run-pod-retried-a2' && p.status?.phase === 'Running'), 60_000);
    const [retried] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'pod-retried' && r.status?.attempts?.length === 2 && r.status.phase === 'Running'), 60_000, { fieldSelector: 'metadata.name=pod-retried' });
    expect(retried!.status!.attempts![0]).toMatchObject({ number: 1, pod: 'tcab-run-pod-retried', node: expect.any(String), outcome: 'infrastructure_failed', reason: 'PodDeleted', message: 'the driver pod was deleted before the run finished', retried: true });
    expect(retried!.status!.attempts![1]).toMatchObject({ number: 2, pod: 'tcab-run-pod-retried-a2' });
    expect(retried!.status!.attempts![1]!.outcome).toBeUndefined();
    expect(retried!.status!.pod).toBe('tcab-run-pod-retried-a2');
    await kubectl(['patch', 'run', 'pod-retried', '-n', ns, '--type=merge', '-p', '{"spec":{"cancel":true}}']);

    // `kubectl delete run`: the Pod goes with it (owner reference, garbage collector), so the driver is stopped.
    await kubectl(['delete', 'run', 'run-deleted', '-n', ns, '--wait=false']);
    await waitFor<V1Pod>(podsPath, (pods) => !pods.some((p) => p.metadata?.name === 'tcab-run-run-deleted'), 60_000);

    await kubectl(['patch', 'run', 'to-cancel', '-n', ns, '--type=merge', '-p', '{"spec":{"cancel":true}}']);
    await kubectl(['delete', 'pod', 'tcab-run-pod-lost', '-n', ns, '--wait=false']);
    const runs = await waitFor<RunObject>(runsPath(), (all) => ['to-cancel', 'pod-lost'].every((n) => ['Cancelled', 'Failed'].includes(all.find((r) => r.metadata?.name === n)?.status?.phase ?? '')), 60_000);
    const byName = (n: string) => runs.find((r) => r.metadata?.name === n)!.status!;
    expect(byName('to-cancel')).toMatchObject({ phase: 'Cancelled', outcome: 'cancelled' });
    expect(byName('pod-lost')).toMatchObject({ phase: 'Failed', outcome: 'infrastructure_failed', message: 'the driver pod was deleted before the run finished' });
    expect(byName('pod-lost').conditions).toContainEqual(expect.objectContaining({ type: 'Retrying', status: 'False', reason: 'NotRetried', message: 'PodDeleted is retried, but not this time: retries are off (spec.retries 0)' }));
    expect(byName('pod-lost').attempts).toEqual([expect.objectContaining({ number: 1, outcome: 'infrastructure_failed', reason: 'PodDeleted' })]);
    const [cancelledAfterRetry] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'pod-retried' && r.status?.phase === 'Cancelled'), 60_000, { fieldSelector: 'metadata.name=pod-retried' });
    expect(cancelledAfterRetry!.status!.attempts!.map((a) => [a.number, a.outcome, a.reason])).toEqual([[1, 'infrastructure_failed', 'PodDeleted'], [2, 'cancelled', 'Cancelled']]);
    await waitFor<V1Pod>(podsPath, (pods) => !pods.some((p) => p.metadata?.name?.startsWith('tcab-run-pod-retried')), 60_000);
    await waitFor<V1Pod>(podsPath, (pods) => !pods.some((p) => p.metadata?.name === 'tcab-run-to-cancel'), 60_000);
    const reasons = (await kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=to-cancel', '-o', 'jsonpath={.items[*].reason}'])).stdout.split(' ');
    expect(reasons).toEqual(expect.arrayContaining(['Dispatched', 'Cancelled']));
  }, 300_000);

  it('a real driver stopped mid-session by an eviction or a Pod deletion reports "cancelled"; an evicted Run goes again until its attempts are used up, a deleted one (retries 0) ends Failed with how the Pod went', async () => {
    for (const stop of stops.splice(0)) await stop();
    // The model asks for a command that outlasts the test: the driver is inside the session when its Pod goes.
    const sleepy = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'sleep 600' } } }, { text: 'never' }] } });
    try {
      await startDispatcher('dispatcher-disrupted', { TCAB_DRIVER_ENV: JSON.stringify({ TCAB_BASE_URL_GG: await podUrl(sleepy.url) }), TCAB_RETRY_BACKOFF_SECONDS: '1' });
      const prompts = { 'driver-evicted': 'evict me', 'driver-deleted': 'delete me' };
      const spec = (prompt: string, retries: number) => ({ harness: 'gg', model: 'claude-sonnet-4-5', prompt, maxRuntimeSeconds: 300, retries });
      await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [run('driver-evicted', spec(prompts['driver-evicted'], 1)), run('driver-deleted', spec(prompts['driver-deleted'], 0))] }));
      // In the session: the stub has answered each driver's model calls with the command (n: calls made with the prompt).
      const inSession = (prompt: string, n: number) => expect(sleepy.requests.filter((r) => JSON.stringify(r.body).includes(prompt)).length).toBeGreaterThanOrEqual(n);
      await vi.waitFor(() => Object.values(prompts).forEach((prompt) => inSession(prompt, 1)), { timeout: 120_000, interval: 100 });

      const core = clusterConfig().makeApiClient(CoreV1Api);
      const evict = (name: string) => core.createNamespacedPodEviction({ name, namespace: ns, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } } });
      await evict('tcab-run-driver-evicted');
      await kubectl(['delete', 'pod', 'tcab-run-driver-deleted', '-n', ns, '--wait=false']);
      // Attempt 2 of the evicted Run: its own Pod, in its own session (the model called again); evicted too, it is the last.
      await vi.waitFor(() => inSession(prompts['driver-evicted'], 2), { timeout: 120_000, interval: 100 });
      await evict('tcab-run-driver-evicted-a2');
      const runs = await waitFor<RunObject>(runsPath(), (all) => Object.keys(prompts).every((n) => isFinal(all.find((r) => r.metadata?.name === n)?.status ?? {})), 120_000);
      const byName = (n: string) => runs.find((r) => r.metadata?.name === n)!.status!;
      const evictedMessage = /^the driver pod was evicted \(EvictionByEvictionAPI: .+\) before the run finished$/;
      expect(byName('driver-evicted'), logs.join('\n')).toMatchObject({ phase: 'Failed', outcome: 'infrastructure_failed', message: expect.stringMatching(evictedMessage), harnessVersion: '0.1.0', pod: 'tcab-run-driver-evicted-a2' });
      expect(byName('driver-evicted').attempts!.map((a) => [a.number, a.pod, a.outcome, a.reason, a.retried ?? false])).toEqual([
        [1, 'tcab-run-driver-evicted', 'infrastructure_failed', 'PodEvicted', true],
        [2, 'tcab-run-driver-evicted-a2', 'infrastructure_failed', 'PodEvicted', false],
      ]);
      expect(byName('driver-evicted').conditions).toContainEqual(expect.objectContaining({ type: 'Retrying', status: 'False', reason: 'NotRetried', message: 'PodEvicted is retried, but not this time: no attempts left (2 of 2 used)' }));
      expect(byName('driver-deleted')).toMatchObject({ phase: 'Failed', outcome: 'infrastructure_failed', message: 'the driver pod was deleted before the run finished', harnessVersion: '0.1.0' });
      expect(byName('driver-deleted').attempts).toHaveLength(1);
      // The drivers themselves said "cancelled" (SIGTERM): the dispatcher is the one that knows better. Each attempt
      // published its own result (exactly one), its events numbered from 1 without a gap, all on the Run's stream.
      const expectedAttempts = { 'driver-evicted': 2, 'driver-deleted': 1 };
      for (const [name, attempts] of Object.entries(expectedAttempts)) {
        const items = await readRunUntil(nats.url, `${ns}_${name}`, (all) => all.filter((i) => i.kind === 'result').length >= attempts, 30_000);
        const results = items.flatMap((i) => (i.kind === 'result' ? [i.result] : []));
        expect(results.map((r) => [r.outcome, r.attempt])).toEqual(Array.from({ length: attempts }, (_, i) => ['cancelled', { number: i + 1, of: attempts }]));
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const seqs = items.flatMap((i) => (i.kind === 'event' && i.attempt === attempt && i.seq > 0 ? [i.seq] : []));
          expect(seqs, `${name} attempt ${attempt}`).toEqual(Array.from({ length: results[attempt - 1]!.event_count }, (_, i) => i + 1));
        }
      }
    } finally {
      await sleepy.close();
    }
  }, 300_000);

  it('an image the registry does not serve ends the attempt after the pull grace: tried again until the registry has it (then the Run succeeds), or, retries 0, the Run fails ImagePullFailed; each attempt fenced', async () => {
    for (const stop of stops.splice(0)) await stop();
    // A driver image the node's registry does not have yet: every pull fails until the test copies the driver there.
    const late = `${realNode().registry}/driver-late-${ns}:1`;
    await startDispatcher('dispatcher-pull', { TCAB_DRIVER_IMAGE: late, TCAB_IMAGE_PULL_GRACE_SECONDS: '2', TCAB_RETRY_BACKOFF_SECONDS: '1' });
    const spec = (retries: number) => ({ harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 300, retries });
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [run('pull-retried', spec(6)), run('pull-once', spec(0))] }));

    const [once] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'pull-once' && isFinal(r.status ?? {})), 90_000, { fieldSelector: 'metadata.name=pull-once' });
    expect(once!.status, logs.join('\n')).toMatchObject({ phase: 'Failed', outcome: 'infrastructure_failed', message: expect.stringMatching(/^driver pod failed \(ImagePullFailed: the driver image was not pulled within 2s \((ErrImagePull|ImagePullBackOff): /) });
    expect(once!.status!.message).toContain(late); // the kubelet's words name the image
    expect(once!.status!.attempts).toEqual([expect.objectContaining({ number: 1, outcome: 'infrastructure_failed', reason: 'ImagePullFailed', node: expect.any(String) })]);
    expect(once!.status!.conditions).toContainEqual(expect.objectContaining({ type: 'Retrying', status: 'False', reason: 'NotRetried' }));

    // Two attempts failed to pull: the registry "comes back" with the image, and the next attempt runs.
    await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'pull-retried' && (r.status?.attempts?.filter((a) => a.reason === 'ImagePullFailed').length ?? 0) >= 2), 90_000, { fieldSelector: 'metadata.name=pull-retried' });
    await copyImageInRegistry(realNode().images.driver, late);
    const [retried] = await waitFor<RunObject>(runsPath(), (all) => all.some((r) => r.metadata?.name === 'pull-retried' && isFinal(r.status ?? {})), 180_000, { fieldSelector: 'metadata.name=pull-retried' });
    const status = retried!.status!;
    expect(status, logs.join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
    const attempts = status.attempts!;
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.slice(0, -1).every((a) => a.reason === 'ImagePullFailed' && a.retried === true && a.outcome === 'infrastructure_failed')).toBe(true);
    expect(attempts.at(-1)).toMatchObject({ number: attempts.length, outcome: 'succeeded', pod: `tcab-run-pull-retried-a${attempts.length}` });
    expect(status.pod).toBe(`tcab-run-pull-retried-a${attempts.length}`);
    // Back-off between attempts: each started no earlier than the one before ended plus the (doubling) wait.
    for (let i = 1; i < attempts.length; i++) expect(Date.parse(attempts[i]!.dispatchedTime) - Date.parse(attempts[i - 1]!.completionTime!)).toBeGreaterThanOrEqual(1000 * 2 ** (i - 1) - 1000);
    // The stream holds the one attempt that ran: one result, of the last attempt.
    const items = await readRunUntil(nats.url, `${ns}_pull-retried`, (all) => all.some((i) => i.kind === 'result'), 30_000);
    expect(items.filter((i) => i.kind === 'result').map((i) => i.kind === 'result' && i.result.attempt)).toEqual([{ number: attempts.length, of: 7 }]);
    // Every failed attempt's Pod was deleted when it was fenced; the last one at teardown.
    await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => !pods.some((p) => p.metadata?.name?.startsWith('tcab-run-pull-')), 60_000);
  }, 400_000);
});
