// After a result another attempt may follow (shared/run.ts anotherAttemptMayFollow), a reader of a run reads on for
// that attempt. The dispatcher may not start it after all (the Run cancelled or deleted during the back-off, the
// dispatcher reconfigured): the wait is bounded, and when the bound passes with no message of a later attempt, the
// last result stands. Pure: the reader (nats/reader.ts) keeps the clock and the timer.
import { anotherAttemptMayFollow } from '../shared/run.ts';
import type { RunResult } from '../shared/run.ts';
import type { StreamItem } from './stream-message.ts';

/** Waiting, since a result another attempt may follow, for a message of a later attempt until `deadline` (ms). */
export interface NextAttemptWait {
  result: RunResult & { attempt: { number: number; of: number } };
  deadline: number;
}

/**
 * The attempt a message says it is of: an event's Tcab-Attempt header (the driver's, and the dispatcher's on the
 * cluster events of an attempt's Pod: its pull, start, teardown), a result's `attempt`. None for cluster events of
 * a dispatcher from before attempts, and for invalid messages, which therefore prove nothing.
 */
export function attemptNumberOf(item: StreamItem): number | undefined {
  if (item.kind === 'event') return item.attempt;
  if (item.kind === 'result') return item.result.attempt?.number;
  return undefined;
}

/**
 * The wait after reading `item` at `now` (ms). A result another attempt may follow starts one, bounded by `withinMs`
 * (an older attempt's late result does not replace the wait for a newer one's successor); any message of a later
 * attempt than the awaited result's ends it; anything else (the cluster's events, the same attempt's late messages,
 * an invalid message) leaves it as it was: the bound counts from the result, not from the last message.
 */
export function nextAttemptWait(wait: NextAttemptWait | undefined, item: StreamItem, now: number, withinMs: number): NextAttemptWait | undefined {
  const attempt = attemptNumberOf(item);
  if (item.kind === 'result' && anotherAttemptMayFollow(item.result)) {
    if (wait && attempt! < wait.result.attempt.number) return wait;
    return { result: item.result as NextAttemptWait['result'], deadline: now + withinMs };
  }
  if (wait && attempt !== undefined && attempt > wait.result.attempt.number) return undefined;
  return wait;
}

/** Whether the reader stops: it waits for another attempt and none has shown up by the deadline. */
export function nextAttemptOverdue(wait: NextAttemptWait | undefined, now: number): boolean {
  return wait !== undefined && now >= wait.deadline;
}

/** What a reader says when the bound passed (the same words in `tcab events follow` and `tcab export atif`). */
export function noNextAttemptMessage(result: RunResult, withinMs: number): string {
  const attempt = result.attempt ? `attempt ${result.attempt.number} of ${result.attempt.of}` : 'the last attempt';
  return `no attempt after ${attempt} within ${withinMs / 1000} s; the last result stands`;
}
