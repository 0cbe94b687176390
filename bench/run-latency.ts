// From `kubectl apply` of a Run to its first event on NATS and to Run Succeeded, split by stage, for a stub
// session: the chart helm-installed on the test control plane (dispatcher replicas and driver Pods run by the
// process kubelet), an external NATS, gg against the stub model. Runs go one after another so that each one's
// figures are its own; the first Run also pays for the driver's first start on this machine (page cache).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { up } from '../test/cluster/control-plane.ts';
import { watchAll } from '../test/cluster/watch-all.ts';
import { NatsServer, freePort } from '../test/support/nats-server.ts';
import { startStubModelServer } from '../driver/stub-models/server.ts';
import { readRunStream } from '../cli/nats-reader.ts';
import type { StreamItem } from '../cli/nats-reader.ts';
import type { RunObject } from '../dispatcher/kube/resources.ts';
import { FINAL_PHASES } from '../shared/run-status.ts';
import { NETWORK_PASSTHROUGH } from '../driver/child-env.ts';
import { driverPodName } from '../dispatcher/pods/driver-pod.ts';

const ROOT = join(import.meta.dirname, '..');
const exec = promisify(execFile);
const STAGES = ['pull_image', 'start_container', 'install_harness', 'probe_harness', 'init_test_case', 'teardown'] as const;

/** A bench that stops making progress fails, saying what it waited for, instead of hanging. */
function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench stalled for ${ms / 1000} s: ${what()}`)), ms);
  });
  return Promise.race([promise, stalled]).finally(() => clearTimeout(timer));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function benchRunLatency(runs = 5, log: (m: string) => void = () => undefined): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'tcab-bench-e2e-'));
  const plane = await up({ dir, dieWithParent: true });
  const nats = await NatsServer.start();
  const stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } }, { text: 'Wrote hello.txt.' }] } });
  try {
    const kubectl = (args: string[]) => exec(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, ...args], { encoding: 'utf8' });
    const ns = 'bench-e2e';
    await kubectl(['create', 'namespace', ns]);
    await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, '--from-literal=anthropic=sk-ant-fake-bench']);
    log('helm install (external NATS, stub model for gg)');
    const values = {
      dispatcher: { api: { port: await freePort() } },
      nats: { url: nats.url, bundled: { enabled: false } },
      credentials: { apiKeys: [{ env: 'ANTHROPIC_API_KEY', secret: 'provider-keys', key: 'anthropic' }] },
      // As in the end-to-end test: npm's cache in the Pod's scratch space, and this machine's CA/proxy settings.
      driver: { env: { TCAB_BASE_URL_GG: stub.url, TCAB_NPM_CACHE: '/tmp/npm-cache', ...Object.fromEntries(NETWORK_PASSTHROUGH.filter((name) => process.env[name]).map((name) => [name, process.env[name]!])) } },
    };
    await exec(join(plane.binDir, 'helm'), ['--kubeconfig', plane.kubeconfig, 'install', 'tcab', join(ROOT, 'charts', 'tcab'), '-n', ns, ...Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]), '--wait', '--timeout', '180s'], { encoding: 'utf8' });
    const config = new KubeConfig();
    config.loadFromFile(plane.kubeconfig);
    const custom = config.makeApiClient(CustomObjectsApi);
    // When this process first saw each driver Pod and each Run phase, on one clock: the objects' own timestamps
    // (creationTimestamp, kubelet Events) have one-second resolution, too coarse for these figures.
    const firstSeen = new Map<string, number>();
    const waiters = new Map<string, () => void>();
    const see = (key: string) => {
      if (firstSeen.has(key)) return;
      firstSeen.set(key, Date.now());
      waiters.get(key)?.();
    };
    const seen = (key: string) => (firstSeen.has(key) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(key, resolve)));
    // Watches that resume when the apiserver ends them (right after the CRDs are installed it answers 429 while
    // their watch cache starts).
    const watches = await Promise.all([
      watchAll<KubernetesObject>(config, `/api/v1/namespaces/${ns}/pods`, {}, (type, pod) => type === 'ADDED' && see(`pod:${pod.metadata!.name}`)),
      watchAll<RunObject>(config, `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, {}, (_type, run) => {
        const phase = run.status?.phase;
        if (phase) see(`run:${run.metadata!.name}:${FINAL_PHASES.has(phase) ? 'final' : phase}`);
      }),
    ]);

    const samples: Record<string, number>[] = [];
    for (let i = 0; i < runs; i++) {
      const name = `latency-${i}`;
      // The subscriber is live before the Run exists: "first event" is when any subscriber could have seen it.
      const abort = new AbortController();
      const arrivals: { at: number; item: StreamItem }[] = [];
      const reading = (async () => {
        for await (const item of readRunStream({ servers: nats.url, runId: `${ns}_${name}`, replay: true, untilResult: true, signal: abort.signal })) arrivals.push({ at: Date.now(), item });
      })();
      const applied = Date.now(); // the apiserver create is what `kubectl apply` does
      await custom.createNamespacedCustomObject({ group: 'tcab.dev', version: 'v1alpha1', namespace: ns, plural: 'runs', body: { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120 } } });
      const progress = () => `seen ${[...firstSeen.keys()].filter((k) => k.includes(name)).join(', ') || 'nothing'} of ${name}; ${arrivals.length} NATS messages`;
      await within(seen(`run:${name}:final`), 120_000, () => `waiting for ${name} to end; ${progress()}`);
      const finished = firstSeen.get(`run:${name}:final`)!;
      const run = (await custom.getNamespacedCustomObject({ group: 'tcab.dev', version: 'v1alpha1', namespace: ns, plural: 'runs', name })) as RunObject;
      if (run.status?.phase !== 'Succeeded') throw new Error(`${name} ended ${run.status?.phase}: ${run.status?.message}`);
      await within(reading, 60_000, () => `waiting for the result of ${name} on NATS; ${progress()}`);
      abort.abort();
      const events = arrivals.flatMap(({ at, item }) => (item.kind === 'event' ? [{ at, event: item.event }] : []));
      const stageTime = (stage: string, status: string) => {
        const e = events.find(({ event }) => event.type === 'system' && event.stage === stage && event.status === status);
        return e ? Date.parse(e.event.timestamp) : undefined;
      };
      const sample: Record<string, number> = {
        apply_to_first_event_ms: (events[0]?.at ?? finished) - applied,
        apply_to_succeeded_ms: finished - applied,
        apply_to_claim_ms: firstSeen.get(`pod:${driverPodName({ namespace: ns, name, uid: '' })}`)! - applied,
      };
      for (const stage of STAGES) {
        const started = stageTime(stage, 'started');
        const completed = stageTime(stage, 'completed');
        if (started !== undefined && completed !== undefined) sample[`${stage}_ms`] = completed - started;
      }
      const sessionEvents = events.filter(({ event }) => event.type !== 'system');
      if (sessionEvents.length > 0) sample.session_ms = Date.parse(sessionEvents.at(-1)!.event.timestamp) - Date.parse(sessionEvents[0]!.event.timestamp);
      const result = arrivals.find(({ item }) => item.kind === 'result');
      if (result) sample.result_to_succeeded_ms = finished - result.at;
      samples.push(sample);
      log(`${name}: ${JSON.stringify(sample)}`);
    }
    for (const w of watches) w.stop();
    const keys = [...new Set(samples.flatMap((s) => Object.keys(s)))];
    return {
      runs,
      harness: 'gg (stub model: one write_file call and a reply)',
      median_ms: Object.fromEntries(keys.map((k) => [k, median(samples.flatMap((s) => (s[k] === undefined ? [] : [s[k]!])))])),
      per_run_ms: samples,
      what: 'wall times on one machine; stage figures from the system events (started -> completed); apply_to_claim = the driver Pod appears; result_to_succeeded = driver result on NATS -> Run Succeeded seen; apply, Pod, Run phases and NATS arrivals all timed by this process (pull_image/start_container come from kubelet Events, one-second resolution)',
    };
  } finally {
    await stub.close();
    await nats.stop();
    await plane.down();
    rmSync(dir, { recursive: true, force: true });
  }
}
