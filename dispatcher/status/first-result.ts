// First result wins: what the dispatcher does with a driver result, given the Run's status as it stands. Pure.
// Subject permissions already keep another run's driver (and the agent) off a run's result subject; this is the
// dispatcher's own guard behind them: once a Run is final, no message changes it, and a result that tries is
// refused where an operator sees it (a Kubernetes Event on the Run and a metric), not silently dropped.
//   write       the Run is not final: the result settles it.
//   redelivery  the Run is final from this very result (JetStream's at-least-once delivery, a copy published again
//               by the driver's retry): nothing to write and nothing wrong.
//   duplicate   the Run is final from another result: refused.
//   late        the Run ended without a result (cancelled, failed NoResult, its Pod gone or failed): refused; the
//               status says how the Run ended and a result arriving afterwards does not rewrite that.
//   stale       the result is of an attempt that is over (it ended on infrastructure and another followed) or that
//               the Run never made: refused, whatever the current attempt's state. First result wins per attempt.
import { isDeepStrictEqual } from 'node:util';
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { isFinal, resultFields } from './transitions.ts';

export const REJECTION_REASONS = ['duplicate', 'late', 'stale'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export type ResultVerdict = { kind: 'write' } | { kind: 'redelivery' } | { kind: 'rejected'; reason: RejectionReason; message: string };

/** The Kubernetes Event reason a refused result is recorded under. */
export const RESULT_REJECTED = 'ResultRejected';

/** Whether a status was written from a driver result: only a result sets sessionIds (transitions.ts resultFields). */
export function hasResult(status: RunStatus): boolean {
  return status.sessionIds !== undefined;
}

/** JSON's view of a value: what the apiserver stores and gives back (no undefined members). */
const asStored = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

/**
 * Whether the status is what this result wrote. Every field the result put there must match. Outcome and message
 * are exempt for a "cancelled" result when the status shows another outcome: a disruption (the Pod deleted,
 * evicted, past its deadline) replaced them when it was written (transitions.ts).
 */
export function recordedFrom(status: RunStatus, result: RunResult): boolean {
  const fields = resultFields(result);
  const replacedByDisruption = result.outcome === 'cancelled' && status.outcome !== 'cancelled';
  return Object.entries(fields).every(([field, value]) => {
    if (replacedByDisruption && (field === 'outcome' || field === 'message')) return true;
    return isDeepStrictEqual(asStored(status[field as keyof RunStatus]), asStored(value));
  });
}

/** The attempt a result is of: the number it carries (1 when it carries none: a driver from before attempts). */
export const attemptOfResult = (result: RunResult): number => result.attempt?.number ?? 1;

export function judgeResult(status: RunStatus, result: RunResult): ResultVerdict {
  const attempts = status.attempts ?? [];
  if (attempts.length > 0) {
    const number = attemptOfResult(result);
    const current = attempts.at(-1)!;
    const of = attempts.find((a) => a.number === number);
    if (!of) return { kind: 'rejected', reason: 'stale', message: `a result (outcome ${result.outcome}) of attempt ${number}, which this Run never made, was refused` };
    if (of !== current || of.retried === true) {
      return { kind: 'rejected', reason: 'stale', message: `a result (outcome ${result.outcome}) of attempt ${number} arrived after that attempt ended (${of.reason ?? of.outcome ?? 'ended'}) and another followed; refused` };
    }
  }
  if (!isFinal(status)) return { kind: 'write' };
  const ended = `${status.phase}${status.outcome ? ` (${status.outcome})` : ''}`;
  if (hasResult(status)) {
    if (recordedFrom(status, result)) return { kind: 'redelivery' };
    return { kind: 'rejected', reason: 'duplicate', message: `a second, different result (outcome ${result.outcome}) was refused: the Run is already ${ended} from its first result, which stands` };
  }
  return { kind: 'rejected', reason: 'late', message: `a result (outcome ${result.outcome}) arrived after the Run ended ${ended} without one and was refused` };
}
