import { describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ObjectStore } from './lean-store.ts';

const obj = (name: string, resourceVersion: string, namespace = 'ns'): KubernetesObject => ({ metadata: { name, namespace, resourceVersion } });
const names = (objects: KubernetesObject[]) => objects.map((o) => o.metadata!.name).sort();

describe('ObjectStore', () => {
  it('adds, updates only on a new resourceVersion, and removes', () => {
    const store = new ObjectStore();
    expect(store.upsert(obj('a', '1'))).toBe('add');
    expect(store.upsert(obj('a', '1'))).toBeUndefined();
    expect(store.upsert(obj('a', '2'))).toBe('update');
    expect(store.get('a', 'ns')!.metadata!.resourceVersion).toBe('2');
    expect(store.remove(obj('a', '3'))!.metadata!.resourceVersion).toBe('2');
    expect(store.remove(obj('a', '3'))).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('lists per namespace and across all', () => {
    const store = new ObjectStore();
    store.upsert(obj('a', '1', 'one'));
    store.upsert(obj('b', '1', 'two'));
    store.upsert(obj('c', '1'));
    expect(names(store.list())).toEqual(['a', 'b', 'c']);
    expect(names(store.list('two'))).toEqual(['b']);
    expect(store.list('none')).toEqual([]);
    expect(store.get('a')).toBeUndefined();
    expect(store.get('a', 'one')).toEqual(obj('a', '1', 'one'));
  });

  it('a relist reports what was added, changed and deleted, and keeps the cached object of an unchanged one', () => {
    const store = new ObjectStore();
    const kept = obj('kept', '1');
    store.upsert(kept);
    store.upsert(obj('changed', '1'));
    store.upsert(obj('gone', '1'));
    store.upsert(obj('gone-too', '1', 'other'));
    const result = store.replace([obj('kept', '1'), obj('changed', '2'), obj('new', '5')]);
    expect(names(result.added)).toEqual(['new']);
    expect(names(result.updated)).toEqual(['changed']);
    expect(names(result.deleted)).toEqual(['gone', 'gone-too']);
    expect(store.get('kept', 'ns')).toBe(kept);
    expect(store.get('changed', 'ns')!.metadata!.resourceVersion).toBe('2');
    expect(store.get('gone', 'ns')).toBeUndefined();
    expect(store.list('other')).toEqual([]);
    expect(store.size).toBe(3);
  });
});
