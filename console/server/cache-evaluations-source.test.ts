// cacheEvaluationsSource: the adapter the dispatcher (its Evaluation informer) and `tcab console` (its own
// list+watch) hand the console: a list, and add/update as upserts, delete as a delete, until unsubscribed.
import { describe, expect, it } from 'vitest';
import { cacheEvaluationsSource } from './kube-sources.ts';
import type { WatchedCache } from './kube-sources.ts';
import { cell, evaluation } from './evaluation-fixtures.test-support.ts';
import type { ConsoleEvaluation, EvaluationChange } from './sources.ts';

type Verb = 'add' | 'update' | 'delete';

/** A list+watch cache a test drives: emit() plays an informer's event to the callbacks registered now. */
class Cache implements WatchedCache<ConsoleEvaluation> {
  readonly items: ConsoleEvaluation[] = [];
  private readonly callbacks = new Map<Verb, Set<(o: ConsoleEvaluation) => void>>();
  list = () => this.items;
  on(verb: Verb, cb: (o: ConsoleEvaluation) => void) {
    this.callbacks.set(verb, (this.callbacks.get(verb) ?? new Set()).add(cb));
  }
  off(verb: Verb, cb: (o: ConsoleEvaluation) => void) {
    this.callbacks.get(verb)?.delete(cb);
  }
  emit(verb: Verb, o: ConsoleEvaluation) {
    this.callbacks.get(verb)?.forEach((cb) => cb(o));
  }
}

describe('cacheEvaluationsSource', () => {
  it('lists the cache and reports its events until unsubscribed', () => {
    const cache = new Cache();
    const nightly = evaluation('nightly', [cell('claude', 'sonnet')]);
    cache.items.push(nightly);
    const source = cacheEvaluationsSource(cache);
    expect([...source.list()]).toEqual([nightly]);
    const seen: [EvaluationChange['type'], string | undefined][] = [];
    const off = source.subscribe((change) => seen.push([change.type, change.evaluation.metadata.name]));
    const weekly = evaluation('weekly', []);
    cache.emit('add', weekly);
    cache.emit('update', nightly);
    cache.emit('delete', weekly);
    off();
    cache.emit('update', nightly);
    expect(seen).toEqual([
      ['upsert', 'weekly'],
      ['upsert', 'nightly'],
      ['delete', 'weekly'],
    ]);
  });
});
