// The bounded wait for a next attempt, as a table: which message starts, ends or leaves the wait, and when it is over.
import { describe, expect, it } from 'vitest';
import { attemptNumberOf, nextAttemptOverdue, nextAttemptWait, noNextAttemptMessage } from './next-attempt.ts';
import type { NextAttemptWait } from './next-attempt.ts';
import type { StreamItem } from './stream-message.ts';
import { attemptResult } from '../test/support/run-attempts.ts';
import type { RunResult } from '../shared/run.ts';

const runId = 'ns_run';
const event = (attempt?: number): StreamItem => ({ kind: 'event', runId, seq: 1, event: { type: 'agent', timestamp: 't', message: 'm' }, ...(attempt ? { attempt } : {}) });
const result = (number: number, of: number, outcome: RunResult['outcome'], retryable: boolean): StreamItem => ({ kind: 'result', runId, result: attemptResult(runId, number, of, outcome, retryable), attempt: `uid-${number}` });
const invalid: StreamItem = { kind: 'invalid', subject: 's', runId, seq: 0, isResult: false, reason: 'r', event: { type: 'unknown', timestamp: 't', raw: null } };
const retryable = (number: number, of = 3) => result(number, of, 'infrastructure_failed', true);
const waitAfter = (number: number, deadline: number, of = 3): NextAttemptWait => ({ result: attemptResult(runId, number, of, 'infrastructure_failed', true) as NextAttemptWait['result'], deadline });
const BOUND = 600_000;

describe('nextAttemptWait', () => {
  const cases: [string, NextAttemptWait | undefined, StreamItem, NextAttemptWait | undefined][] = [
    ['no wait, an event: none', undefined, event(1), undefined],
    ['a retryable result with attempts left starts one, from now', undefined, retryable(1), waitAfter(1, 1000 + BOUND)],
    ['a retryable result of the last attempt: none (nothing may follow)', undefined, retryable(3), undefined],
    ['a result that is not retryable: none', undefined, result(1, 3, 'infrastructure_failed', false), undefined],
    ['a succeeded result: none', undefined, result(1, 3, 'succeeded', false), undefined],
    ['a later attempt\'s event ends the wait', waitAfter(1, 50), event(2), undefined],
    ['a later attempt\'s final result ends the wait', waitAfter(1, 50), result(2, 3, 'succeeded', false), undefined],
    ['a later attempt\'s retryable result restarts it, for that attempt', waitAfter(1, 50), retryable(2), waitAfter(2, 1000 + BOUND)],
    ['the same attempt\'s late event leaves it (the bound counts from the result)', waitAfter(1, 50), event(1), waitAfter(1, 50)],
    ['a cluster event (no attempt) leaves it', waitAfter(1, 50), event(), waitAfter(1, 50)],
    ['an invalid message leaves it', waitAfter(1, 50), invalid, waitAfter(1, 50)],
    ['an earlier attempt\'s late retryable result leaves the wait for the later one', waitAfter(2, 50), retryable(1), waitAfter(2, 50)],
    ['an earlier attempt\'s event leaves it', waitAfter(2, 50), event(1), waitAfter(2, 50)],
  ];
  it.each(cases)('%s', (_name, wait, item, expected) => {
    expect(nextAttemptWait(wait, item, 1000, BOUND)).toEqual(expected);
  });
});

describe('nextAttemptOverdue', () => {
  it.each([
    ['not waiting', undefined, 10_000, false],
    ['before the deadline', waitAfter(1, 5000), 4999, false],
    ['at the deadline', waitAfter(1, 5000), 5000, true],
    ['past it', waitAfter(1, 5000), 9_999_999, true],
  ] as const)('%s', (_name, wait, now, expected) => {
    expect(nextAttemptOverdue(wait, now)).toBe(expected);
  });
});

describe('attemptNumberOf and the message', () => {
  it('takes an event\'s Tcab-Attempt, a result\'s attempt, nothing from the cluster or an invalid message', () => {
    expect([event(2), event(), retryable(3), invalid].map(attemptNumberOf)).toEqual([2, undefined, 3, undefined]);
  });

  it('says which attempt nothing followed, and the bound in seconds', () => {
    expect(noNextAttemptMessage(attemptResult(runId, 1, 3, 'infrastructure_failed', true), 600_000)).toBe('no attempt after attempt 1 of 3 within 600 s; the last result stands');
  });
});
