// The process kubelet (test code): registers a Ready Node, watches the pods bound to it and runs each as local
// processes (pod-worker.ts). Stops every pod on SIGTERM/SIGINT.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { KubeletApi } from './api.ts';
import { loadImageMap } from './images.ts';
import { registerNode, startHeartbeat } from './node.ts';
import { PodWorker } from './pod-worker.ts';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string' }, node: { type: 'string' }, root: { type: 'string' }, images: { type: 'string' }, 'api-server': { type: 'string' }, ca: { type: 'string' } },
});
const required = (name: keyof typeof values) => {
  const v = values[name];
  if (!v) throw new Error(`--${name} is required`);
  return v;
};
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

const config = new KubeConfig();
config.loadFromFile(required('kubeconfig'));
const api = new KubeletApi(config, required('node'));
const server = new URL(required('api-server'));
const root = required('root');
mkdirSync(join(root, 'pods'), { recursive: true });
const images = loadImageMap(required('images'), { node: process.execPath, root: join(import.meta.dirname, '..', '..', '..') });
const workers = new Map<string, PodWorker>();
const repository = join(import.meta.dirname, '..', '..', '..');
const deps = { api, images, root, apiServer: { host: server.hostname, port: Number(server.port) }, log, imageRoots: [repository, dirname(dirname(process.execPath))] };

function observe(pod: V1Pod): void {
  const uid = pod.metadata?.uid;
  if (!uid) return;
  const existing = workers.get(uid);
  if (existing) {
    existing.update(pod);
    return;
  }
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return;
  if (pod.metadata?.deletionTimestamp) {
    void api.deletePodNow(pod); // never started here: nothing to stop
    return;
  }
  const worker = new PodWorker(pod, deps);
  workers.set(uid, worker);
  void worker.done.then(() => log(`pod ${pod.metadata!.namespace}/${pod.metadata!.name} cleaned up`));
  worker.run().catch((error: unknown) => log(`pod ${pod.metadata!.namespace}/${pod.metadata!.name}: ${(error as Error).stack}`));
}

function forget(pod: V1Pod): void {
  const worker = workers.get(pod.metadata?.uid ?? '');
  if (!worker) return;
  workers.delete(worker.uid);
  void worker.kill();
}

await registerNode(api);
const stopHeartbeat = startHeartbeat(api);
log(`node ${api.nodeName} registered`);

// List, then watch from the list's resourceVersion; on a watch end, list again (the informer pattern).
let watchAbort: AbortController | undefined;
let shuttingDown = false;
async function listAndWatch(): Promise<void> {
  const fieldSelector = `spec.nodeName=${api.nodeName}`;
  const list = await api.core.listPodForAllNamespaces({ fieldSelector });
  const seen = new Set(list.items.map((p) => p.metadata?.uid));
  for (const [uid, worker] of workers) if (!seen.has(uid)) forget({ metadata: { uid: worker.uid } });
  for (const pod of list.items) observe(pod);
  watchAbort = await new Watch(config).watch(
    '/api/v1/pods',
    { fieldSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
    (type, pod: V1Pod) => {
      if (type === 'ADDED' || type === 'MODIFIED') observe(pod);
      else if (type === 'DELETED') forget(pod);
    },
    (error: unknown) => {
      if (shuttingDown) return;
      // An idle watch ends after client-node's request timeout: list and watch again, quietly.
      if (error && (error as Error).name !== 'TimeoutError') log(`pod watch ended: ${(error as Error).message}`);
      setTimeout(() => void listAndWatch().catch((e: unknown) => log(`relist: ${(e as Error).message}`)), error ? 1000 : 0);
    },
  );
}
await listAndWatch();
log('watching pods');

async function shutdown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  stopHeartbeat();
  watchAbort?.abort();
  await Promise.all([...workers.values()].map((w) => w.kill()));
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
