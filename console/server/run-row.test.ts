import { describe, expect, it } from 'vitest';
import { RunRow } from '../../shared/console.ts';
import { rowOf, slimRun, withActivity } from './run-row.ts';

const run = {
  metadata: { namespace: 'evals', name: 'r1', uid: 'u-1', creationTimestamp: new Date('2026-12-05T04:00:00Z'), resourceVersion: '7', managedFields: [{}] },
  spec: { harness: 'claude', model: 'sonnet', prompt: 'p'.repeat(100_000), testCase: { source: { files: [{ path: 'a', content: 'b' }] } } },
  status: {
    phase: 'Succeeded' as const,
    outcome: 'succeeded' as const,
    startTime: '2026-12-05T04:00:05Z',
    completionTime: '2026-12-05T04:01:00Z',
    usage: { input: 10, output: 20, cache_read: null, cache_write: null, reasoning: 5 },
    actualCostUsd: null,
    comparableCostUsd: 0.01,
    harnessVersion: '1.2.3',
    message: 'done',
    conditions: [{ type: 'Finished', status: 'True' as const, lastTransitionTime: '2026-12-05T04:01:00Z' }],
  },
};

describe('rowOf', () => {
  it('keeps the row fields only, valid against the wire schema', () => {
    const row = rowOf(run);
    expect(RunRow.parse(row)).toEqual({
      key: 'evals/r1', namespace: 'evals', name: 'r1', uid: 'u-1', harness: 'claude', model: 'sonnet', phase: 'Succeeded', outcome: 'succeeded',
      createdAt: '2026-12-05T04:00:00.000Z', startedAt: '2026-12-05T04:00:05Z', finishedAt: '2026-12-05T04:01:00Z',
      tokens: run.status.usage, actualCostUsd: null, comparableCostUsd: 0.01, harnessVersion: '1.2.3', message: 'done',
    });
  });

  it('a Run without status is Pending with no optional fields', () => {
    const row = rowOf({ metadata: { namespace: 'n', name: 'x', uid: 'u', creationTimestamp: '2026-12-05T04:00:00Z' }, spec: { harness: 'gg', model: 'm' } });
    expect(RunRow.parse(row)).toEqual({ key: 'n/x', namespace: 'n', name: 'x', uid: 'u', harness: 'gg', model: 'm', phase: 'Pending', createdAt: '2026-12-05T04:00:00Z' });
  });

  it('carries the egress profile by name (its hosts stay on the run page), and a slim Run keeps it', () => {
    const egress = { ...run, status: { ...run.status, egress: { profile: 'registries', hosts: ['registry.npmjs.org', 'pypi.org'] } } };
    expect(RunRow.parse(rowOf(egress)).egress).toBe('registries');
    expect(rowOf(slimRun(egress)).egress).toBe('registries');
    expect(rowOf(run)).not.toHaveProperty('egress');
  });

  it("carries the check's verdict when it ran (a slim Run keeps it), none when the Run has no check", () => {
    const check = { passed: true, exitCode: 0, reward: 0.75, durationMs: 1234 };
    const checked = { ...run, status: { ...run.status, check } };
    expect(RunRow.parse(rowOf(checked)).check).toEqual(check);
    expect(rowOf(slimRun(checked)).check).toEqual(check);
    const killed = { passed: false, exitCode: null, reward: null, durationMs: 60_000 };
    expect(RunRow.parse(rowOf({ ...run, status: { ...run.status, check: killed } })).check).toEqual(killed);
    expect(rowOf(run)).not.toHaveProperty('check');
  });

  it('says the attempt a Run is on once it is past its first (issue 35), and the one that comes next while it waits', () => {
    const attempt = (n: number, closed: boolean) => ({ number: n, pod: `p${n}`, dispatchedTime: '2026-12-05T04:00:00Z', ...(closed ? { outcome: 'infrastructure_failed' as const, retried: true } : {}) });
    const on = (attempts: ReturnType<typeof attempt>[], nextAttemptTime?: string) => ({ ...run, status: { ...run.status, phase: 'Running' as const, attempts, ...(nextAttemptTime ? { nextAttemptTime } : {}) } });
    expect(rowOf(on([attempt(1, false)]))).not.toHaveProperty('attempt');
    expect(RunRow.parse(rowOf(on([attempt(1, true), attempt(2, false)]))).attempt).toBe(2);
    expect(rowOf(on([attempt(1, true)], '2026-12-05T04:00:10Z')).attempt).toBe(2);
    expect(rowOf(slimRun(on([attempt(1, true), attempt(2, true), attempt(3, false)]))).attempt).toBe(3);
  });

  it("names the Evaluation, cell and test case of an Evaluation's slot from its labels (a slim Run keeps them), nothing for a plain Run", () => {
    const labels = { 'tcab.dev/evaluation': 'nightly', 'tcab.dev/cell': '0123456789abcdef', 'tcab.dev/test-case': 'fizzbuzz', 'tcab.dev/repeat': '2', 'app.kubernetes.io/part-of': 'x' };
    const slot = { ...run, metadata: { ...run.metadata, labels } };
    expect(RunRow.parse(rowOf(slot))).toMatchObject({ evaluation: 'nightly', cell: '0123456789abcdef', testCase: 'fizzbuzz' });
    expect(rowOf(slimRun(slot))).toEqual(rowOf(slot));
    expect(slimRun(slot).metadata.labels).toEqual({ 'tcab.dev/evaluation': 'nightly', 'tcab.dev/cell': '0123456789abcdef', 'tcab.dev/test-case': 'fizzbuzz' });
    expect(rowOf(run)).not.toHaveProperty('evaluation');
    expect((slimRun(run).metadata as { labels?: unknown }).labels).toBeUndefined();
  });

  it('withActivity adds the activity and its time', () => {
    const activity = { text: 'agent', type: 'agent' as const, at: '2026-12-05T04:00:30Z' };
    expect(withActivity(rowOf(run), { activity, at: '2026-12-05T04:00:31Z' })).toMatchObject({ activity, lastEventAt: '2026-12-05T04:00:31Z' });
    expect(withActivity(rowOf(run), undefined)).not.toHaveProperty('activity');
  });
});

describe('slimRun', () => {
  it('drops the prompt, the test case, the conditions and managedFields, and gives the same row', () => {
    const slim = slimRun(run);
    expect(JSON.stringify(slim).length).toBeLessThan(1000);
    expect(slim.spec).toEqual({ harness: 'claude', model: 'sonnet' });
    expect(slim.status?.conditions).toBeUndefined();
    expect(slim.metadata).not.toHaveProperty('managedFields');
    expect(slim.metadata.resourceVersion).toBe('7');
    expect(rowOf(slim)).toEqual(rowOf(run));
  });
});
