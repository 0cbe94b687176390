// Which attempt ends are tried again (status/retry.ts), and the status a Run walks through attempts (transitions.ts).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RunStatus } from '../../shared/run-status.ts';
import type { RunResult } from '../../shared/run.ts';
import { POD_DELETED, podDisruption } from './pod-disruption.ts';
import type { Disruption } from './pod-disruption.ts';
import { backoffMs, decideRetry, retryableReason } from './retry.ts';
import type { AttemptEnd } from './retry.ts';
import { nextStatus } from './transitions.ts';
import type { Observation } from './transitions.ts';
import { judgeResult } from './first-result.ts';

const at = '2026-12-06T12:00:00.000Z';
const result = (over: Partial<RunResult>): RunResult => ({
  run_id: 'ns_r', harness_slug: 'gg', harness_version: '1.0.0', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok', auth_mode: 'api-key',
  sessions: [], session_ids: [], exit_code: null, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null,
  catalog_version: null, cost_warnings: [], started_at: at, finished_at: at, event_count: 1, ...over,
});
const session = { index: 0, session_id: 's', exit_code: 0, signal: null, tokens: null, reported_cost_usd: null, is_error: null, duration_ms: 1, counts: {} };
const disruption = (reason: Disruption['reason'], outcome: Disruption['outcome'] = 'infrastructure_failed'): AttemptEnd => ({ kind: 'disruption', disruption: { outcome, reason, message: 'x' } });
const target = (reason: string) => podDisruption({ metadata: { name: 'p', deletionTimestamp: new Date(at) }, status: { phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason }] } })!;

describe('retryableReason: only infrastructure is tried again', () => {
  it.each<[string, AttemptEnd, string | undefined]>([
    ['node lost: the taint manager deleted the Pod', { kind: 'disruption', disruption: target('DeletionByTaintManager') }, 'NodeLost'],
    ['node gone: the Pod GC deleted the Pod', { kind: 'disruption', disruption: target('DeletionByPodGC') }, 'NodeLost'],
    ['drained: the Eviction API', { kind: 'disruption', disruption: target('EvictionByEvictionAPI') }, 'PodEvicted'],
    ['preempted', { kind: 'disruption', disruption: target('PreemptionByScheduler') }, 'PodPreempted'],
    ['graceful node shutdown', { kind: 'disruption', disruption: target('TerminationByKubelet') }, 'PodTerminatedByKubelet'],
    ['a DisruptionTarget reason not known yet', { kind: 'disruption', disruption: target('SomethingNew') }, 'PodDisrupted'],
    ['the Pod deleted by someone (not the Run)', { kind: 'disruption', disruption: POD_DELETED }, 'PodDeleted'],
    ['the deadline (a timeout, never retried)', disruption('DeadlineExceeded', 'timed_out'), undefined],
    ['the node stopped reporting the Pod (phase Unknown)', { kind: 'pod-failed', phase: 'Unknown' }, 'NodeLost'],
    ['the kubelet evicted it for node pressure', { kind: 'pod-failed', phase: 'Failed', reason: 'Evicted' }, 'PodEvicted'],
    ['the node shut down', { kind: 'pod-failed', phase: 'Failed', reason: 'NodeShutdown' }, 'NodeLost'],
    ['its image did not come', { kind: 'pod-failed', phase: 'Failed', reason: 'ImagePullFailed' }, 'ImagePullFailed'],
    ['the Pod deadline', { kind: 'pod-failed', phase: 'Failed', reason: 'DeadlineExceeded' }, undefined],
    ['the driver exited 3 without a result (may have run sessions)', { kind: 'pod-failed', phase: 'Failed', reason: 'NoResult', exitCode: 3 }, undefined],
    ['OOMKilled driver (not guessed to be the cluster\'s)', { kind: 'pod-failed', phase: 'Failed', reason: 'OOMKilled', exitCode: 137 }, undefined],
    ['a reason named like an Object property', { kind: 'pod-failed', phase: 'Failed', reason: 'constructor' }, undefined],
    ['install failed on the registry, before any session', { kind: 'result', result: result({ outcome: 'infrastructure_failed', retryable: true }) }, 'InstallFailed'],
    ['install failed on a missing package (not transient)', { kind: 'result', result: result({ outcome: 'infrastructure_failed' }) }, undefined],
    ['a retryable flag after a session ran (the agent worked)', { kind: 'result', result: result({ outcome: 'infrastructure_failed', retryable: true, sessions: [session] }) }, undefined],
    ['a harness failure, whatever its flag', { kind: 'result', result: result({ outcome: 'harness_failed', retryable: true }) }, undefined],
    ['a timeout', { kind: 'result', result: result({ outcome: 'timed_out' }) }, undefined],
    ['a budget', { kind: 'result', result: result({ outcome: 'budget_exceeded' }) }, undefined],
    ['a cancel', { kind: 'result', result: result({ outcome: 'cancelled' }) }, undefined],
    ['a success', { kind: 'result', result: result({}) }, undefined],
  ])('%s', (_, end, reason) => {
    expect(retryableReason(end)).toBe(reason);
  });
});

describe('decideRetry', () => {
  const policy = { retries: 2, backoffBaseMs: 10_000, backoffMaxMs: 300_000 };
  const onAttempt = (n: number): RunStatus => ({ phase: 'Running', attempts: Array.from({ length: n }, (_, i) => ({ number: i + 1, pod: `p${i + 1}`, dispatchedTime: at, ...(i + 1 < n ? { outcome: 'infrastructure_failed' as const, retried: true } : {}) })) });

  it('retries attempts 1 and 2 of 3 with a doubling back-off, and says so when the third fails too', () => {
    expect(decideRetry(onAttempt(1), disruption('NodeLost'), policy, false)).toEqual({ retry: true, reason: 'NodeLost', attempt: 1, of: 3, backoffMs: 10_000 });
    expect(decideRetry(onAttempt(2), disruption('NodeLost'), policy, false)).toEqual({ retry: true, reason: 'NodeLost', attempt: 2, of: 3, backoffMs: 20_000 });
    expect(decideRetry(onAttempt(3), disruption('NodeLost'), policy, false)).toEqual({ retry: false, reason: 'NodeLost', attempt: 3, of: 3, why: 'no attempts left (3 of 3 used)' });
  });

  it('retries 0: one attempt, and the Run says retries are off; a cancel wins over a retry; an agent failure is never retried', () => {
    expect(decideRetry(onAttempt(1), disruption('PodEvicted'), { ...policy, retries: 0 }, false)).toMatchObject({ retry: false, reason: 'PodEvicted', why: 'retries are off (spec.retries 0)' });
    expect(decideRetry(onAttempt(1), disruption('PodEvicted'), policy, true)).toMatchObject({ retry: false, why: 'the Run was cancelled' });
    expect(decideRetry(onAttempt(1), { kind: 'result', result: result({ outcome: 'harness_failed' }) }, policy, false)).toEqual({ retry: false, attempt: 1, of: 3 });
  });

  it('a Run dispatched before attempts were recorded is on its first', () => {
    expect(decideRetry({ phase: 'Running' }, disruption('NodeLost'), policy, false)).toMatchObject({ retry: true, attempt: 1 });
  });

  it('the back-off doubles from the base and never passes the cap (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 1_000_000 }), (attempt, base, max) => {
        const wait = backoffMs(attempt, { backoffBaseMs: base, backoffMaxMs: max });
        expect(wait).toBeLessThanOrEqual(max);
        expect(wait).toBe(Math.min(max, base * 2 ** (attempt - 1)));
      }),
    );
  });
});

describe('a Run through its attempts (nextStatus)', () => {
  const fold = (observations: Observation[]) => observations.reduce(nextStatus, { phase: 'Pending' } as RunStatus);
  const claimed = (pod: string): Observation => ({ kind: 'claimed', pod, eventsSubject: 'tcab.run.ns_r.>', at });
  const retry = (attempt: number, reason: string): Observation => ({ kind: 'retry', outcome: 'infrastructure_failed', reason, message: `${reason} happened`, attempt, of: 3, nextAttemptAt: '2026-12-06T12:00:10.000Z', node: 'node-b', at });

  it('each attempt is recorded (pod, node, times, how it ended); the Run is Pending between them and ends as its last did', () => {
    const status = fold([
      claimed('tcab-run-r'),
      { kind: 'pod', phase: 'Running', node: 'node-a', at },
      retry(1, 'NodeLost'),
    ]);
    expect(status).toMatchObject({ phase: 'Pending', nextAttemptTime: '2026-12-06T12:00:10.000Z' });
    expect(status.pod).toBeUndefined();
    expect(status.attempts).toEqual([{ number: 1, pod: 'tcab-run-r', node: 'node-a', dispatchedTime: at, startTime: at, completionTime: at, outcome: 'infrastructure_failed', reason: 'NodeLost', message: 'NodeLost happened', retried: true }]);
    expect(status.conditions?.find((c) => c.type === 'Retrying')).toMatchObject({ status: 'True', reason: 'NodeLost', message: expect.stringMatching(/^attempt 1 of 3 failed on infrastructure \(NodeLost: NodeLost happened\); attempt 2 starts at 2026-12-06T12:00:10.000Z at the earliest$/) });

    const second = fold([claimed('tcab-run-r'), { kind: 'pod', phase: 'Running', node: 'node-a', at }, retry(1, 'NodeLost'), claimed('tcab-run-r-a2'), { kind: 'pod', phase: 'Running', node: 'node-b', at }, { kind: 'result', result: result({ attempt: { number: 2, of: 3 } }), at }]);
    expect(second).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', pod: 'tcab-run-r-a2' });
    expect(second.nextAttemptTime).toBeUndefined();
    expect(second.attempts!.map((a) => [a.number, a.pod, a.node, a.outcome, a.reason, a.retried])).toEqual([
      [1, 'tcab-run-r', 'node-a', 'infrastructure_failed', 'NodeLost', true],
      [2, 'tcab-run-r-a2', 'node-b', 'succeeded', 'Succeeded', undefined],
    ]);
    expect(second.conditions?.find((c) => c.type === 'Retrying')).toMatchObject({ status: 'False', reason: 'AttemptStarted' });
    // Every status on the way is one the CRD schema takes.
    expect(RunStatus.safeParse(second).success).toBe(true);
    expect(RunStatus.safeParse(status).success).toBe(true);
  });

  it('a Run whose attempts are used up says so in a condition, and its last attempt carries the class', () => {
    const status = nextStatus(fold([claimed('p')]), { kind: 'pod-gone', disruption: { outcome: 'infrastructure_failed', reason: 'PodEvicted', message: 'evicted' }, noRetry: { reason: 'PodEvicted', why: 'no attempts left (3 of 3 used)' }, at });
    expect(status).toMatchObject({ phase: 'Failed', outcome: 'infrastructure_failed', message: 'evicted' });
    expect(status.attempts?.at(-1)).toMatchObject({ outcome: 'infrastructure_failed', reason: 'PodEvicted' });
    expect(status.conditions?.find((c) => c.type === 'Retrying')).toMatchObject({ status: 'False', reason: 'NotRetried', message: 'PodEvicted is retried, but not this time: no attempts left (3 of 3 used)' });
    expect(RunStatus.safeParse(status).success).toBe(true);
  });

  it('a Run tried again whose last attempt failed in a way never retried (a harness failure) says so in its Retrying condition', () => {
    const retried = [claimed('p'), retry(1, 'InstallFailed'), claimed('p-a2')];
    const status = fold([...retried, { kind: 'result', result: result({ attempt: { number: 2, of: 3 }, outcome: 'harness_failed', message: 'session 1 exited with 1' }), at }]);
    expect(status).toMatchObject({ phase: 'Failed', outcome: 'harness_failed' });
    expect(status.conditions?.find((c) => c.type === 'Retrying')).toMatchObject({ status: 'False', reason: 'NotRetryable', message: expect.stringMatching(/^attempt 2 ended harness_failed, which is never retried: only an infrastructure failure of a retried class is \(NodeLost, .*InstallFailed\)$/) });
    expect(RunStatus.safeParse(status).success).toBe(true);
    // A Pod failure of no retried class names it; a Run never tried again gets no Retrying condition.
    const noResult = fold([...retried, { kind: 'pod', phase: 'Failed', reason: 'NoResult', message: 'no result', at }]);
    expect(noResult.conditions?.find((c) => c.type === 'Retrying')?.message).toMatch(/^attempt 2 ended infrastructure_failed \(NoResult\), which is never retried/);
    const once = fold([claimed('p'), { kind: 'result', result: result({ attempt: { number: 1, of: 3 }, outcome: 'harness_failed' }), at }]);
    expect(once.conditions?.some((c) => c.type === 'Retrying')).toBe(false);
  });

  it('first result wins per attempt: an earlier attempt\'s result is stale, whatever the current attempt\'s state', () => {
    const waiting = fold([claimed('p'), retry(1, 'NodeLost')]);
    const late = result({ attempt: { number: 1, of: 3 }, outcome: 'succeeded' });
    expect(judgeResult(waiting, late)).toMatchObject({ kind: 'rejected', reason: 'stale' });
    const second = nextStatus(waiting, claimed('p-a2'));
    expect(judgeResult(second, late)).toMatchObject({ kind: 'rejected', reason: 'stale', message: expect.stringContaining('attempt 1 arrived after that attempt ended (NodeLost)') });
    expect(judgeResult(second, result({ attempt: { number: 2, of: 3 } }))).toEqual({ kind: 'write' });
    expect(judgeResult(second, result({ attempt: { number: 7, of: 9 } }))).toMatchObject({ kind: 'rejected', reason: 'stale', message: expect.stringContaining('never made') });
  });
});
