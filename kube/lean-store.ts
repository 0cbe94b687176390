// The lean informer's cache (lean-informer.ts): objects by namespace and name, and what each change did, so the
// informer knows which callbacks to call. Pure.
import type { KubernetesObject } from '@kubernetes/client-node';

export interface Replaced<T> {
  added: T[];
  updated: T[];
  deleted: T[];
}

const nameOf = (o: KubernetesObject) => o.metadata?.name ?? '';
const namespaceOf = (o: KubernetesObject) => o.metadata?.namespace ?? '';

export class ObjectStore<T extends KubernetesObject> {
  private objects = new Map<string, Map<string, T>>();

  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace ?? '')?.get(name);
  }

  list(namespace?: string): T[] {
    if (namespace) return [...(this.objects.get(namespace)?.values() ?? [])];
    const all: T[] = [];
    for (const byName of this.objects.values()) for (const o of byName.values()) all.push(o);
    return all;
  }

  get size(): number {
    let n = 0;
    for (const byName of this.objects.values()) n += byName.size;
    return n;
  }

  /** Stores the object: 'add' if new, 'update' if its resourceVersion changed, undefined if it is the one cached. */
  upsert(object: T): 'add' | 'update' | undefined {
    const namespace = namespaceOf(object);
    let byName = this.objects.get(namespace);
    if (!byName) this.objects.set(namespace, (byName = new Map()));
    const cached = byName.get(nameOf(object));
    const version = object.metadata?.resourceVersion;
    if (cached && version !== undefined && cached.metadata?.resourceVersion === version) return undefined;
    byName.set(nameOf(object), object);
    return cached ? 'update' : 'add';
  }

  /** Forgets the object; returns the cached one (what a delete callback gets), undefined if it was not cached. */
  remove(object: KubernetesObject): T | undefined {
    const namespace = namespaceOf(object);
    const byName = this.objects.get(namespace);
    const cached = byName?.get(nameOf(object));
    if (!byName || !cached) return undefined;
    byName.delete(nameOf(object));
    if (byName.size === 0) this.objects.delete(namespace);
    return cached;
  }

  /** A full list replaces the cache: what it lacks was deleted while nobody watched. */
  replace(fresh: readonly T[]): Replaced<T> {
    const previous = this.objects;
    this.objects = new Map();
    const result: Replaced<T> = { added: [], updated: [], deleted: [] };
    for (const object of fresh) {
      const before = previous.get(namespaceOf(object))?.get(nameOf(object));
      previous.get(namespaceOf(object))?.delete(nameOf(object));
      const unchanged = before !== undefined && before.metadata?.resourceVersion === object.metadata?.resourceVersion;
      // Unchanged: keep the object callers already hold (they may have amended it, as the dispatcher does).
      this.upsert(unchanged ? before : object);
      if (!before) result.added.push(object);
      else if (!unchanged) result.updated.push(object);
    }
    for (const byName of previous.values()) result.deleted.push(...byName.values());
    return result;
  }
}
