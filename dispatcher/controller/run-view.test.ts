import { describe, expect, it } from 'vitest';
import type { RunObject } from '../../kube/resources.ts';
import { currentVersion, runKeyOfRunId, writtenStatus } from './run-view.ts';

describe('runKeyOfRunId', () => {
  it.each([
    ['ns1_hello', 'ns1/hello'],
    ['ns1_my_run', 'ns1/my.run'], // a later "_" was a "." (names have no "_")
    ['other_hello', undefined], // another namespace's run
    ['ns1', undefined],
    ['workstation-run', undefined],
  ])('%s -> %s', (runId, key) => {
    expect(runKeyOfRunId('ns1', runId)).toBe(key);
  });
});

describe('writtenStatus / currentVersion', () => {
  const run = (rv: string, phase?: 'Running'): RunObject => ({ metadata: { name: 'r', namespace: 'n', uid: 'u', resourceVersion: rv }, spec: {}, status: phase ? { phase } : undefined });
  const memo = { uid: 'u', lastWrite: { baseRv: '10', rv: '11', status: { phase: 'Succeeded' as const } } };

  it('the cache still at the version the write replaced: the write counts, with its new version', () => {
    expect(writtenStatus(run('10', 'Running'), memo)).toEqual({ phase: 'Succeeded' });
    expect(currentVersion(run('10', 'Running'), memo)).toBe('11');
  });

  it('the cache moved on (caught up or someone else wrote): the cache counts', () => {
    expect(writtenStatus(run('12', 'Running'), memo)).toEqual({ phase: 'Running' });
    expect(currentVersion(run('12'), memo)).toBe('12');
    expect(writtenStatus(run('12'), undefined)).toEqual({});
  });
});
