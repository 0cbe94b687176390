// CacheSet readiness: every cache listed and watching, except one whose CRD the apiserver does not serve (404) and
// that the dispatcher can do without (Evaluations: Helm never installs a CRD at `helm upgrade`).
import { EventEmitter } from 'node:events';
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/log.ts';
import { CacheSet } from './informers.ts';
import type { Caches } from './informers.ts';

/** An informer whose initial list answers as told: ok, or an error with that HTTP status. */
class FakeInformer extends EventEmitter {
  answer: 'ok' | number;
  constructor(answer: 'ok' | number) {
    super();
    this.answer = answer;
  }
  async start(): Promise<void> {
    if (this.answer !== 'ok') this.emit('error', new ApiException(this.answer, 'failed', {}, {}));
  }
  async stop(): Promise<void> {}
}

function cacheSet(answers: Partial<Record<keyof Caches, 'ok' | number>>) {
  const names = ['runs', 'configs', 'pods', 'kubeEvents', 'secrets', 'evaluations', 'testCaseConfigMaps'] as const;
  const informers = Object.fromEntries(names.map((n) => [n, new FakeInformer(answers[n] ?? 'ok')])) as unknown as Caches;
  const lines: string[] = [];
  const log = createLogger({ component: 'test', destination: { write: (line: string) => lines.push(line) } });
  return { set: new CacheSet(informers, log), lines };
}

describe('CacheSet.synced', () => {
  it.each<[string, Partial<Record<keyof Caches, 'ok' | number>>, boolean]>([
    ['every cache up', {}, true],
    ['no Evaluation CRD (404): ready without it', { evaluations: 404 }, true],
    ['Evaluations forbidden (403): not ready', { evaluations: 403 }, false],
    ['Evaluations failing (500): not ready', { evaluations: 500 }, false],
    ['no Run CRD (404): never ready', { runs: 404 }, false],
    ['test-case ConfigMaps forbidden (403): not ready (a core resource, never absent)', { testCaseConfigMaps: 403 }, false],
  ])('%s', async (_, answers, ready) => {
    const { set, lines } = cacheSet(answers);
    await set.start();
    expect(set.synced()).toBe(ready);
    if (answers.evaluations === 404) expect(lines.join('\n')).toContain('the apiserver does not serve evaluations (its CRD is not installed');
    await set.stop();
  });
});
