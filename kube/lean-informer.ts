// A list+watch cache that keeps only what its user reads, for caches of many objects (the dispatcher's Runs and
// driver Pods: 100,000 of each under a burst). A drop-in for client-node's makeInformer (on/off/start/stop/get/list)
// with three differences, each about memory:
//   - the initial list (and a relist after 410 Gone) comes in pages (limit + continue), so no single response holds
//     the whole collection: client-node lists it in one response, parsed into one giant object graph at once;
//   - every object passes through a transform as it arrives (controller-runtime's cache TransformFunc): the cache
//     holds the slim result, the full object (a Pod's spec, managedFields) becomes garbage at once;
//   - the watch asks for bookmarks, so a quiet watch that reconnects resumes from a recent resourceVersion
//     instead of one the apiserver may have compacted away (410, then a full relist).
// Semantics otherwise follow client-node's ListWatch: callbacks get the cached (transformed) object; 'update' only
// when the resourceVersion changed; a relist reports what vanished as 'delete'; an error other than 410 or the
// watch's own inactivity timeout goes to the 'error' callbacks and stops the informer until start() is called.
import { Watch } from '@kubernetes/client-node';
import type { ErrorCallback, Informer, KubeConfig, KubernetesObject, ObjectCache, ObjectCallback } from '@kubernetes/client-node';
import { ObjectStore } from './lean-store.ts';

/** One page of a list, as the generated clients answer (typed lists say `_continue`, custom objects `continue`). */
export interface ListPage<T> {
  items?: T[] | null;
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}
/** Lists one page: the generated client's list call with `limit` and `_continue` passed through. */
export type ListPageFn<T> = (page: { limit: number; _continue?: string }) => Promise<ListPage<T>>;

export interface LeanInformerOptions<T> {
  labelSelector?: string;
  fieldSelector?: string;
  /** Keeps what the cache's user reads; must keep metadata.name, namespace and resourceVersion. Default: as is. */
  transform?: (object: T) => T;
  /** Objects per list page (client-go's reflector uses 500). */
  pageSize?: number;
  /** Waits before a watch reconnects after one that ended without an event (default: real time). */
  delay?: (ms: number) => Promise<void>;
}

const statusCode = (error: unknown): number | undefined => {
  const e = error as { statusCode?: number; code?: number } | undefined;
  return e?.statusCode ?? (typeof e?.code === 'number' ? e.code : undefined);
};
/** 410 Gone: the resourceVersion (or a list's continue token) is older than the apiserver keeps. */
export const isGone = (error: unknown) => statusCode(error) === 410;
export const continueToken = (page: ListPage<unknown>) => page.metadata?._continue || page.metadata?.continue || undefined;

const MAX_RECONNECT_DELAY_MS = 30_000;

/**
 * What to do when a watch ends: 'relist' after 410 Gone (its resourceVersion is compacted away), 'resume-now'
 * after the watch's own inactivity timeout, 'resume' after the server closed it (from the last resourceVersion,
 * after a back-off), 'fail' on any other error (the 'error' callbacks decide, as with client-node's informer).
 */
export function afterWatch(error: unknown): 'relist' | 'resume' | 'resume-now' | 'fail' {
  if (isGone(error)) return 'relist';
  if (!error) return 'resume';
  return (error as Error).name === 'TimeoutError' ? 'resume-now' : 'fail';
}

/**
 * Lists a whole collection a page at a time, each item transformed as its page arrives, so no more than one page
 * of full objects is alive at once. A continue token that expires mid-list (410: the list outlived the snapshot
 * the apiserver keeps) restarts the list from the start, which is the only way to get a consistent one.
 */
export async function listAllPages<T>(listPage: ListPageFn<T>, limit: number, transform: (object: T) => T, stopped: () => boolean = () => false): Promise<{ items: T[]; resourceVersion: string }> {
  for (;;) {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    try {
      do {
        const page = await listPage({ limit, _continue: token });
        for (const item of page.items ?? []) items.push(transform(item));
        resourceVersion = page.metadata?.resourceVersion;
        token = continueToken(page);
      } while (token && !stopped());
    } catch (error) {
      if (isGone(error) && token) continue;
      throw error;
    }
    return { items, resourceVersion: resourceVersion ?? '' };
  }
}
type Verb = 'add' | 'update' | 'delete' | 'error' | 'connect';

export class LeanInformer<T extends KubernetesObject> implements Informer<T>, ObjectCache<T> {
  private readonly store = new ObjectStore<T>();
  private readonly callbacks: Record<Verb, ((object?: T) => void)[]> = { add: [], update: [], delete: [], error: [], connect: [] };
  private readonly watch: Watch;
  private resourceVersion = '';
  private request: AbortController | undefined;
  private stopped = true;
  private reconnectDelayMs = 0;

  private readonly path: string;
  private readonly listPage: ListPageFn<T>;
  private readonly options: LeanInformerOptions<T>;

  constructor(config: KubeConfig, path: string, listPage: ListPageFn<T>, options: LeanInformerOptions<T> = {}) {
    this.watch = new Watch(config);
    this.path = path;
    this.listPage = listPage;
    this.options = options;
  }

  on(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<T>): void;
  on(verb: 'error' | 'connect', cb: ErrorCallback): void;
  on(verb: string, cb: ObjectCallback<T> | ErrorCallback): void {
    for (const v of verb === 'change' ? (['add', 'update', 'delete'] as const) : [verb as Verb]) {
      if (!this.callbacks[v]) throw new Error(`Unknown verb: ${verb}`);
      this.callbacks[v].push(cb as (object?: T) => void);
    }
  }

  off(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<T>): void;
  off(verb: 'error' | 'connect', cb: ErrorCallback): void;
  off(verb: string, cb: ObjectCallback<T> | ErrorCallback): void {
    for (const v of verb === 'change' ? (['add', 'update', 'delete'] as const) : [verb as Verb]) {
      const at = this.callbacks[v]?.indexOf(cb as (object?: T) => void) ?? -1;
      if (at >= 0) this.callbacks[v].splice(at, 1);
    }
  }

  get(name: string, namespace?: string): T | undefined {
    return this.store.get(name, namespace);
  }

  list(namespace?: string): T[] {
    return this.store.list(namespace);
  }

  /** The resourceVersion the next watch resumes from ('' = the next connect lists first). */
  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Resolves once the cache is listed and the watch is open (as client-node's ListWatch.start). */
  async start(): Promise<void> {
    this.stopped = false;
    this.reconnectDelayMs = 0;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.request?.abort();
    this.request = undefined;
  }

  private emit(verb: Verb, object?: T): void {
    for (const cb of this.callbacks[verb].slice()) cb(object);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.emit('connect');
    if (!this.resourceVersion) {
      try {
        await this.relist();
      } catch (error) {
        this.emit('error', error as never);
        return;
      }
    }
    if (this.stopped) return;
    const params: Record<string, string | boolean> = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true };
    if (this.options.labelSelector !== undefined) params.labelSelector = this.options.labelSelector;
    if (this.options.fieldSelector !== undefined) params.fieldSelector = this.options.fieldSelector;
    this.request = await this.watch.watch(this.path, params, (type, object) => this.onWatchEvent(type, object as T), (error) => void this.onWatchDone(error));
  }

  /** The whole collection, a page at a time (listAllPages); what changed since the last list goes to callbacks. */
  private async relist(): Promise<void> {
    const { items, resourceVersion } = await listAllPages(this.listPage, this.options.pageSize ?? 500, (o) => this.slim(o), () => this.stopped);
    const { added, updated, deleted } = this.store.replace(items);
    this.resourceVersion = resourceVersion;
    for (const o of deleted) this.emit('delete', o);
    for (const o of added) this.emit('add', o);
    for (const o of updated) this.emit('update', o);
  }

  private slim(object: T): T {
    return this.options.transform ? this.options.transform(object) : object;
  }

  private onWatchEvent(type: string, object: T & { code?: number }): void {
    if (type === 'ERROR') {
      // The resourceVersion is gone: the watch ends, and the next connect lists again.
      if (object.code === 410) this.resourceVersion = '';
      return;
    }
    this.reconnectDelayMs = 0;
    if (type === 'ADDED' || type === 'MODIFIED') {
      const slim = this.slim(object);
      const change = this.store.upsert(slim);
      if (change) this.emit(change, slim);
    } else if (type === 'DELETED') {
      const gone = this.store.remove(object);
      if (gone) this.emit('delete', gone);
    }
    // BOOKMARK carries only a resourceVersion: nothing changed, but the next reconnect may resume from here.
    this.resourceVersion = object.metadata?.resourceVersion ?? this.resourceVersion;
  }

  private async onWatchDone(error: unknown): Promise<void> {
    this.request = undefined;
    const action = afterWatch(error);
    if (action === 'fail') {
      if (!this.stopped) this.emit('error', error as never);
      return;
    }
    if (action === 'relist') this.resourceVersion = '';
    if (this.stopped) return;
    // The watch's own inactivity timeout already waited: resume at once (a quiet collection stays watched).
    if (action === 'resume-now') this.reconnectDelayMs = 0;
    // A watch that closes again and again without an event must not spin: back off, as client-node does.
    if (this.reconnectDelayMs > 0) await (this.options.delay ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))))(this.reconnectDelayMs);
    // Reset by the next event: only a run of empty watches grows the wait.
    if (action !== 'resume-now') this.reconnectDelayMs = Math.min(Math.max(this.reconnectDelayMs * 2, 1000), MAX_RECONNECT_DELAY_MS);
    await this.connect();
  }
}

/** makeInformer's signature, with a paged list and the options above. */
export function makeLeanInformer<T extends KubernetesObject>(config: KubeConfig, path: string, listPage: ListPageFn<T>, options: LeanInformerOptions<T> = {}): LeanInformer<T> {
  return new LeanInformer(config, path, listPage, options);
}
