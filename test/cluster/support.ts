// Helpers for tests against the test control plane: kubectl from the pinned build, a namespace per test file,
// and waits that follow a watch (list, then watch from its resourceVersion) rather than sleeping.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, NetworkingV1Api, Watch } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { readRunStream } from '../../nats/reader.ts';
import { natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { getJson, watchAll as watchAllOf } from './watch-all.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { driverNetworkPolicy } from './driver-network-policy.ts';
import { pollUntil } from '../support/poll.ts';

const run = promisify(execFile);

export function clusterConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfig'));
  return config;
}

/** Runs a program to its end, capturing both streams and the exit code instead of throwing on failure. */
export async function runCaptured(bin: string, args: string[], input?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const child = run(bin, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (input !== undefined) child.child.stdin!.end(input);
  try {
    const { stdout, stderr } = await child;
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** The pinned kubectl, as the cluster admin. */
export function kubectl(args: string[], input?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return runCaptured(join(inject('clusterBinDir'), 'kubectl'), ['--kubeconfig', inject('kubeconfig'), ...args], input);
}

/**
 * A fresh namespace (deleted by the returned cleanup), with the chart's driver NetworkPolicy in it
 * (driver-network-policy.ts) unless `driverPolicy: false`: a test that installs the chart there brings the chart's
 * own policies instead.
 */
export async function createNamespace(prefix: string, options: { driverPolicy?: boolean } = {}): Promise<{ name: string; remove: () => Promise<void> }> {
  const config = clusterConfig();
  const core = config.makeApiClient(CoreV1Api);
  const ns = await core.createNamespace({ body: { metadata: { generateName: `${prefix}-` } } });
  const name = ns.metadata!.name!;
  if (options.driverPolicy !== false) {
    const policy = await driverNetworkPolicy(inject('clusterBinDir'), name);
    await config.makeApiClient(NetworkingV1Api).createNamespacedNetworkPolicy({ namespace: name, body: policy });
  }
  // Pods need the namespace's default ServiceAccount, which the controller-manager creates.
  await waitFor<KubernetesObject>(`/api/v1/namespaces/${name}/serviceaccounts`, (items) => items.some((sa) => sa.metadata?.name === 'default'), 30_000);
  return { name, remove: async () => void (await core.deleteNamespace({ name }).catch(() => undefined)) };
}

/**
 * Resolves with the current items of a collection once `done(items)` is true: lists, then watches from the
 * list's resourceVersion, re-evaluating on every change (and listing again when an idle watch times out). One
 * pollUntil (test/support/poll.ts) whose probe is that list and watch; an error of either ends the wait at once.
 */
export async function waitFor<T extends KubernetesObject>(path: string, done: (items: T[]) => boolean, timeoutMs: number, query: Record<string, string> = {}): Promise<T[]> {
  const config = clusterConfig();
  let items = new Map<string, T>();
  const current = () => [...items.values()];
  return pollUntil(path, async (poll) => {
    const list = (await getJson(config, path, query)) as { items: T[]; metadata: { resourceVersion: string } };
    items = new Map(list.items.map((item) => [item.metadata!.uid!, item]));
    if (done(current())) return current();
    const finished = await new Promise<boolean>((resolve, reject) => {
      let abort: AbortController | undefined;
      const timer = setTimeout(() => {
        abort?.abort();
        resolve(false);
      }, poll.remainingMs());
      void new Watch(config)
        .watch(path, { ...query, resourceVersion: list.metadata.resourceVersion }, (type, obj: T) => {
          if (type === 'DELETED') items.delete(obj.metadata!.uid!);
          else if (type === 'ADDED' || type === 'MODIFIED') items.set(obj.metadata!.uid!, obj);
          else return;
          if (done(current())) {
            clearTimeout(timer);
            abort?.abort();
            resolve(true);
          }
        }, (error: unknown) => {
          clearTimeout(timer);
          const name = (error as Error | undefined)?.name;
          if (error && name !== 'AbortError' && name !== 'TimeoutError') reject(error as Error);
          else resolve(false);
        })
        .then((a) => (abort = a), reject);
    });
    return finished ? current() : undefined;
  }, {
    timeoutMs,
    intervalMs: 0,
    retryIf: () => false,
    detail: () => JSON.stringify(current().map((i) => ({ name: i.metadata?.name, status: (i as { status?: unknown }).status }))),
  });
}

/** watchAll (watch-all.ts) against the test control plane. */
export function watchAll<T extends KubernetesObject>(path: string, query: Record<string, string>, onEvent: (type: string, obj: T) => void): Promise<{ stop: () => void }> {
  return watchAllOf<T>(clusterConfig(), path, query, onEvent);
}

/** Reads a run's NATS subjects from the first message until `done(items)` holds (or fails after timeoutMs). */
/** `servers`: a NATS URL (no credentials), or settings (a credential: the chart's reader.creds). */
export async function readRunUntil(servers: string | NatsSettings, runId: string, done: (items: StreamItem[]) => boolean, timeoutMs: number): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    for await (const item of readRunStream({ settings: typeof servers === 'string' ? natsSettings(servers) : servers, runId, replay: true, untilResult: false, signal: abort.signal })) {
      items.push(item);
      if (done(items)) return items;
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  throw new Error(`timed out after ${timeoutMs}ms reading run ${runId}: ${JSON.stringify(items.map((i) => (i.kind === 'event' ? i.event.type : i.kind)))}`);
}
