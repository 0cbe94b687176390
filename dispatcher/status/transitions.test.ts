import { describe, expect, it } from 'vitest';
import { nextStatus } from './transitions.ts';
import { POD_DELETED } from './pod-disruption.ts';
import type { Observation } from './transitions.ts';
import { lifecycleEvent } from './lifecycle-events.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { RunResult } from '../../shared/run.ts';

const at = '2026-12-02T12:00:00.000Z';
const fold = (observations: Observation[], start: RunStatus = { phase: 'Pending' }) => observations.reduce(nextStatus, start);
const result = (over: Partial<RunResult>): RunResult => ({
  run_id: 'r', harness_slug: 'claude', harness_version: '2.1.332', model: 'm', canonical_model: 'anthropic/claude-sonnet-4.5', outcome: 'succeeded', message: 'ok', auth_mode: 'api-key',
  sessions: [], session_ids: ['s1'], exit_code: 0, stages: [], tokens: { input: 1, output: 2, cache_read: 0, cache_write: 0, reasoning: null }, raw_usage: null,
  reported_cost_usd: 0.5, actual_cost_usd: 0.5, comparable_cost_usd: 0.4, catalog_version: 'v1', cost_warnings: [], started_at: at, finished_at: at, event_count: 3, ...over,
});

describe('nextStatus', () => {
  it('walks Pending -> Dispatched -> Starting -> Running -> Succeeded with the driver result in status', () => {
    const s = fold([
      { kind: 'claimed', pod: 'tcab-run-a', eventsSubject: 'tcab.run.ns-a.>', at },
      { kind: 'pod', phase: 'Pending', at },
      { kind: 'pod', phase: 'Running', at },
      { kind: 'result', result: result({}), at },
    ]);
    expect(s).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', pod: 'tcab-run-a', harnessVersion: '2.1.332', sessionIds: ['s1'], actualCostUsd: 0.5, comparableCostUsd: 0.4, usage: { input: 1 }, startTime: at, completionTime: at });
  });

  it.each([
    ['harness_failed', 'Failed'],
    ['infrastructure_failed', 'Failed'],
    ['timed_out', 'Failed'],
    ['cancelled', 'Cancelled'],
  ] as const)('a %s result ends the Run %s', (outcome, phase) => {
    expect(fold([{ kind: 'result', result: result({ outcome }), at }])).toMatchObject({ phase, outcome });
  });

  it("issue 39: the test case's check verdict goes into the status (without its output); none when it did not run", () => {
    const check = { passed: false, exit_code: 1, reward: 0.25, duration_ms: 1200, output_tail: '1 failed' };
    const s = fold([{ kind: 'result', result: result({ check }), at }]);
    expect(s).toMatchObject({ phase: 'Succeeded', check: { passed: false, exitCode: 1, reward: 0.25, durationMs: 1200 } });
    expect(s.check).not.toHaveProperty('outputTail');
    expect(fold([{ kind: 'result', result: result({ check: null }), at }])).not.toHaveProperty('check');
  });

  it("issue 39: Checking while the check runs (after Running, with its condition), then the result ends it; never backwards", () => {
    const later = '2026-12-02T12:00:05.000Z';
    const claimed: Observation = { kind: 'claimed', pod: 'tcab-run-a', eventsSubject: 'tcab.run.ns-a.>', at };
    const checking = fold([claimed, { kind: 'pod', phase: 'Running', node: 'n1', at }, { kind: 'checking', node: 'n1', at: later }]);
    expect(checking).toMatchObject({ phase: 'Checking', startTime: at, attempts: [{ number: 1, node: 'n1', startTime: at }] });
    expect(checking.conditions).toContainEqual({ type: 'Checking', status: 'True', reason: 'CheckStarted', message: "the agent's sessions are over; the test case's check runs", lastTransitionTime: later });
    // A later look at the Pod (still Running) does not move it back; a second word of the check changes nothing.
    expect(nextStatus(checking, { kind: 'pod', phase: 'Running', at: later })).toBe(checking);
    expect(nextStatus(checking, { kind: 'checking', at: later })).toBe(checking);
    const done = nextStatus(checking, { kind: 'result', result: result({ check: { passed: true, exit_code: 0, reward: null, duration_ms: 5, output_tail: '' } }), at: later });
    expect(done).toMatchObject({ phase: 'Succeeded', check: { passed: true } });
    expect(done.conditions?.map((c) => c.type)).toEqual(['Dispatched', 'Checking', 'Finished']);
    // A look that missed Running: Checking starts the Run (its start time is when it was seen).
    expect(fold([claimed, { kind: 'checking', at: later }])).toMatchObject({ phase: 'Checking', startTime: later, attempts: [{ startTime: later }] });
    // Final Runs and Pending ones (between attempts, before a claim) are not Checking.
    expect(nextStatus(done, { kind: 'checking', at: later })).toBe(done);
    const queued: RunStatus = { phase: 'Pending' };
    expect(nextStatus(queued, { kind: 'checking', at: later })).toBe(queued);
  });

  it('a result through the model gateway: wire usage, cost and requests in the status, and whether the harness\'s usage agrees with the wire (issue 34)', () => {
    const wire = { requests: 2, tokens: { input: 1, output: 2, cache_read: 0, cache_write: 0, reasoning: null }, cost_usd: 0.01, unmetered: 0, throttled: 0, refused: 0 };
    const agrees = fold([{ kind: 'result', result: result({ wire }), at }]);
    expect(agrees).toMatchObject({ wireUsage: wire.tokens, wireCostUsd: 0.01, wireRequests: 2 });
    expect(agrees.conditions).toContainEqual(expect.objectContaining({ type: 'UsageAgreesWithWire', status: 'True', reason: 'Agrees' }));
    const under = fold([{ kind: 'result', result: result({ wire: { ...wire, tokens: { ...wire.tokens, output: 200 } } }), at }]);
    expect(under.conditions).toContainEqual(expect.objectContaining({ type: 'UsageAgreesWithWire', status: 'False', reason: 'Disagrees', message: 'output: the harness reported 2, the wire 200' }));
    // No gateway, no wire fields and no condition.
    const none = fold([{ kind: 'result', result: result({ wire: null }), at }]);
    expect(none).not.toHaveProperty('wireUsage');
    expect(none.conditions!.map((c) => c.type)).not.toContain('UsageAgreesWithWire');
    // budget_exceeded is a failure.
    expect(fold([{ kind: 'result', result: result({ outcome: 'budget_exceeded', message: 'budget' }), at }])).toMatchObject({ phase: 'Failed', outcome: 'budget_exceeded' });
  });

  it('records the egress profile the Run\'s Pod was made with, and keeps it to the end', () => {
    const egress = { profile: 'registries', hosts: ['registry.npmjs.org'] };
    const claimed = fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', egress, at }]);
    expect(claimed.egress).toEqual(egress);
    expect(fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', egress, at }, { kind: 'pod', phase: 'Running', at }, { kind: 'result', result: result({}), at }]).egress).toEqual(egress);
    expect(fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', at }])).not.toHaveProperty('egress');
  });

  it('stays Dispatched while its Pod waits for a node, Starting once it has one', () => {
    const claimed = fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', at }]);
    expect(nextStatus(claimed, { kind: 'pod', phase: 'Pending', scheduled: false, at }).phase).toBe('Dispatched');
    expect(nextStatus(claimed, { kind: 'pod', phase: 'Pending', scheduled: true, at }).phase).toBe('Starting');
  });

  it('a Run waiting for a serialised login stays Pending with a LoginBusy condition, released when started', () => {
    const waits: Observation = { kind: 'login-busy', waiting: true, message: 'waiting for login codex-login', at };
    const s = fold([waits]);
    expect(s).toEqual({ phase: 'Pending', conditions: [{ type: 'LoginBusy', status: 'True', reason: 'LoginInUse', message: 'waiting for login codex-login', lastTransitionTime: at }] });
    expect(nextStatus(s, waits)).toBe(s);
    expect(nextStatus(s, { kind: 'login-busy', waiting: false, message: 'free', at }).conditions).toEqual([{ type: 'LoginBusy', status: 'False', reason: 'Released', message: 'free', lastTransitionTime: at }]);
    expect(nextStatus(s, { kind: 'claimed', pod: 'p', eventsSubject: 'e', at }).conditions?.map((c) => [c.type, c.status])).toEqual([['LoginBusy', 'False'], ['Dispatched', 'True']]);
  });

  it('a Run held for provider back-pressure stays Pending with a Throttled condition, written once per message, released when started', () => {
    const held: Observation = { kind: 'throttled', held: true, message: 'held: anthropic is throttling claude-x', at };
    const s = fold([held]);
    expect(s.phase).toBe('Pending');
    expect(s.conditions).toEqual([{ type: 'Throttled', status: 'True', reason: 'ProviderThrottled', message: 'held: anthropic is throttling claude-x', lastTransitionTime: at }]);
    expect(nextStatus(s, { ...held, at: '2026-12-02T12:00:05.000Z' })).toBe(s); // the same hold again: no write
    const released = nextStatus(s, { kind: 'throttled', held: false, message: 'released', at });
    expect(released).toMatchObject({ phase: 'Pending', conditions: [{ type: 'Throttled', status: 'False', reason: 'Released' }] });
    expect(nextStatus(released, { kind: 'throttled', held: false, message: 'released again', at })).toBe(released);
    expect(nextStatus({ phase: 'Pending' }, { kind: 'throttled', held: false, message: 'never held', at })).toEqual({ phase: 'Pending' });
    const claimed = nextStatus(s, { kind: 'claimed', pod: 'p', eventsSubject: 'e', at });
    expect(claimed.phase).toBe('Dispatched');
    expect(claimed.conditions?.map((c) => [c.type, c.status])).toEqual([['Throttled', 'False'], ['Dispatched', 'True']]);
  });

  it('never moves backwards, and a finished Run never changes', () => {
    const running = fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', at }, { kind: 'pod', phase: 'Running', at }]);
    expect(nextStatus(running, { kind: 'pod', phase: 'Pending', at }).phase).toBe('Running');
    const done = nextStatus(running, { kind: 'cancel', at });
    expect(done.phase).toBe('Cancelled');
    expect(nextStatus(done, { kind: 'result', result: result({}), at })).toBe(done);
  });

  it('a driver stopped by the deletion, eviction or deadline of its Pod ends the Run with the Pod reason, keeping the spend', () => {
    const running = fold([{ kind: 'claimed', pod: 'p', eventsSubject: 's', at }, { kind: 'pod', phase: 'Running', at }]);
    const cancelled = result({ outcome: 'cancelled', message: 'cancelled during the session' });
    const evicted = { outcome: 'infrastructure_failed', message: 'the driver pod was evicted (EvictionByEvictionAPI: Eviction API: evicting) before the run finished' } as const;
    expect(nextStatus(running, { kind: 'result', result: cancelled, disruption: { ...evicted, reason: 'PodEvicted' }, at })).toMatchObject({ phase: 'Failed', ...evicted, actualCostUsd: 0.5, usage: { input: 1, output: 2 }, sessionIds: ['s1'] });
    const deadline = { outcome: 'timed_out', message: 'the driver pod reached its activeDeadlineSeconds (DeadlineExceeded)' } as const;
    expect(nextStatus(running, { kind: 'result', result: cancelled, disruption: { ...deadline, reason: 'DeadlineExceeded' }, at })).toMatchObject({ phase: 'Failed', ...deadline });
    // Without a disruption the driver's word stands; a result that is not "cancelled" is never rewritten.
    expect(nextStatus(running, { kind: 'result', result: cancelled, at })).toMatchObject({ phase: 'Cancelled', outcome: 'cancelled', message: 'cancelled during the session' });
    expect(nextStatus(running, { kind: 'result', result: result({}), disruption: POD_DELETED, at })).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', message: 'ok' });
    expect(nextStatus(running, { kind: 'result', result: result({ outcome: 'harness_failed', message: 'exit 1' }), disruption: POD_DELETED, at })).toMatchObject({ phase: 'Failed', outcome: 'harness_failed', message: 'exit 1' });
  });

  it.each([
    [{ kind: 'pod', phase: 'Failed', reason: 'DeadlineExceeded', at } as Observation, 'timed_out', 'driver pod failed (DeadlineExceeded)'],
    [{ kind: 'pod', phase: 'Failed', reason: 'OOMKilled', exitCode: 137, at } as Observation, 'infrastructure_failed', 'driver pod failed (OOMKilled: exit code 137)'],
    [{ kind: 'pod', phase: 'Failed', reason: 'Evicted', message: 'node low on memory', at } as Observation, 'infrastructure_failed', 'driver pod failed (Evicted: node low on memory)'],
    [{ kind: 'pod-gone', at } as Observation, 'infrastructure_failed', 'the driver pod was deleted before the run finished'],
    [{ kind: 'pod-gone', disruption: { outcome: 'infrastructure_failed', reason: 'PodPreempted', message: 'the driver pod was preempted (PreemptionByScheduler: p) before the run finished' }, at } as Observation, 'infrastructure_failed', 'the driver pod was preempted (PreemptionByScheduler: p) before the run finished'],
    [{ kind: 'unavailable', reason: 'configure a Secret key for ANTHROPIC_API_KEY', at } as Observation, 'infrastructure_failed', 'configure a Secret key for ANTHROPIC_API_KEY'],
  ])('fails the Run with the reason: %j', (observation, outcome, message) => {
    expect(fold([observation])).toMatchObject({ phase: 'Failed', outcome, message });
  });
});

describe('lifecycleEvent', () => {
  it.each([
    ['Pulling', 'Pulling image "tcab/driver"', 'pull_image', 'started'],
    ['Pulled', 'Successfully pulled image', 'pull_image', 'completed'],
    ['ErrImagePull', 'failed to pull', 'pull_image', 'failed'],
    ['Failed', 'Failed to pull image "x": not found', 'pull_image', 'failed'],
    ['Created', 'Created container driver', 'start_container', 'started'],
    ['Started', 'Started container driver', 'start_container', 'completed'],
    ['Failed', 'Error: failed to start container', 'start_container', 'failed'],
  ])('%s (%s) -> %s %s', (reason, message, stage, status) => {
    expect(lifecycleEvent({ reason, message, time: at })).toEqual({ type: 'system', timestamp: at, stage, status, message });
  });
  it('ignores events that are not about starting the container', () => {
    expect(lifecycleEvent({ reason: 'Scheduled', message: 'assigned', time: at })).toBeUndefined();
  });
});
