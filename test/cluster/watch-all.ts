// List + watch of one collection that survives the watch ending: client-node's idle timeout, a server close, or
// an error such as "429 storage is (re)initializing" right after a CRD is installed. Each new watch resumes from
// the last resourceVersion seen, so no change in between is missed. Takes its KubeConfig, so the benches (which
// start their own control plane) use it as the tests do.
import { request } from 'node:https';
import type { RequestOptions } from 'node:https';
import { Watch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { pollUntil } from '../support/poll.ts';

export async function getJson(config: KubeConfig, path: string, query: Record<string, string> = {}): Promise<unknown> {
  const url = new URL(config.getCurrentCluster()!.server + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const options: RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(Object.assign(new Error(`GET ${path}: ${res.statusCode} ${body}`), { statusCode: res.statusCode }))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every change to a collection until `stop()`: the current items first (as ADDED), then each change. */
export async function watchAll<T extends KubernetesObject>(config: KubeConfig, path: string, query: Record<string, string>, onEvent: (type: string, obj: T) => void): Promise<{ stop: () => void }> {
  let resourceVersion = '';
  let stopped = false;
  let expired = true; // the first start lists
  let abort: AbortController | undefined;
  let retry: NodeJS.Timeout | undefined;
  const relist = async () => {
    // 429 "storage is (re)initializing": a CRD's watch cache starting (right after install); it answers soon.
    const list = (await pollUntil(`the list of ${path}`, () => getJson(config, path, query), {
      timeoutMs: 30_000,
      intervalMs: 250,
      retryIf: (error) => (error as { statusCode?: number }).statusCode === 429,
    })) as { items: T[]; metadata: { resourceVersion: string } };
    for (const item of list.items) onEvent('ADDED', item);
    resourceVersion = list.metadata.resourceVersion;
    expired = false;
  };
  const restart = (error: unknown) => {
    if (stopped) return;
    // An ended watch resumes at once; a failing one (429 while the watch cache starts) after a breath.
    retry = setTimeout(() => void start().catch(restart), error ? 250 : 0);
  };
  const start = async () => {
    // 410 Gone (resourceVersion compacted away): list again; the items come as ADDED with their current state.
    if (expired) await relist();
    abort = await new Watch(config).watch(path, { ...query, resourceVersion, allowWatchBookmarks: 'true' }, (type, obj: T) => {
      if (type === 'ERROR') {
        if ((obj as { code?: number }).code === 410) expired = true;
        return;
      }
      resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
      if (type !== 'BOOKMARK') onEvent(type, obj);
    }, restart);
  };
  await start();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(retry);
      abort?.abort();
    },
  };
}
