import { describe, expect, it } from 'vitest';
import type { RunObject } from '../../../kube/resources.ts';
import type { RunStatus } from '../../../shared/run-status.ts';
import { fc, test } from '@fast-check/vitest';
import { evaluationNameArg, namespaceArg, runsToRunAgain } from './cluster.ts';
import { InvalidInputError } from '../../../shared/errors.ts';

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

describe('NAME and --namespace (they go into a field selector and a URL path)', () => {
  it.each(['nightly', 'gg-two-models', 'a.b-c', 'a'.repeat(253)])('accepts the Evaluation name %s', (name) => {
    expect(evaluationNameArg(name)).toBe(name);
  });
  it.each(['', 'Nightly', 'a,metadata.namespace=other', '../runs', 'a/b', 'a b', '-a', 'a-', 'a..b', 'a'.repeat(254), 'x\u0000', '%2e%2e'])('refuses the Evaluation name %j, naming NAME', (name) => {
    expect(() => evaluationNameArg(name)).toThrow(InvalidInputError);
    expect(() => evaluationNameArg(name)).toThrow(/NAME/);
  });
  it.each(['..', 'kube-system/evaluations', 'A', 'a'.repeat(64), 'a.b'])('refuses the namespace %j, naming --namespace', (ns) => {
    expect(() => namespaceArg(ns)).toThrow(/--namespace/);
  });
  test.prop([fc.string({ maxLength: 300 })])('what it accepts has no character with a meaning in a selector or a path', (name) => {
    let accepted: string | undefined;
    try {
      accepted = evaluationNameArg(name);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
    }
    if (accepted !== undefined) expect(accepted).toMatch(/^[a-z0-9.-]{1,253}$/);
  });
});
