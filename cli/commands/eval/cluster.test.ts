import { describe, expect, it } from 'vitest';
import type { RunObject } from '../../../kube/resources.ts';
import type { RunStatus } from '../../../shared/run-status.ts';
import { runsToRunAgain } from './cluster.ts';

const run = (name: string, status?: RunStatus): RunObject => ({ metadata: { name }, spec: {}, ...(status ? { status } : {}) });

describe('runsToRunAgain (tcab eval resume)', () => {
  it('only final Runs without a standing result: ended on infrastructure, cancelled, or final with no outcome', () => {
    const runs = [
      run('queued'),
      run('pending', { phase: 'Pending' }),
      run('running', { phase: 'Running' }),
      run('passed', { phase: 'Succeeded', outcome: 'succeeded', check: { passed: true, exitCode: 0, reward: null, durationMs: 1 } }),
      run('failed-check', { phase: 'Succeeded', outcome: 'succeeded', check: { passed: false, exitCode: 1, reward: null, durationMs: 1 } }),
      run('harness-failed', { phase: 'Failed', outcome: 'harness_failed' }),
      run('timed-out', { phase: 'Failed', outcome: 'timed_out' }),
      run('over-budget', { phase: 'Failed', outcome: 'budget_exceeded' }),
      run('infra', { phase: 'Failed', outcome: 'infrastructure_failed' }),
      run('cancelled', { phase: 'Cancelled', outcome: 'cancelled' }),
      run('no-outcome', { phase: 'Failed' }),
    ];
    expect(runsToRunAgain(runs).map((r) => r.metadata!.name)).toEqual(['infra', 'cancelled', 'no-outcome']);
  });
});
