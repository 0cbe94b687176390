// `--next-attempt-timeout <seconds>` of the commands that read a run to its last attempt's result (`tcab events
// follow`, `tcab export atif`): how long to wait, after a result another attempt may follow, for that attempt.
import { Option } from 'commander';
import { InvalidInputError } from '../../shared/errors.ts';

export const NEXT_ATTEMPT_FLAG = '--next-attempt-timeout';
/** Longer than the dispatcher's default back-off cap (dispatcher.retry.backoffMaxSeconds 300) plus a Pod's start. */
export const DEFAULT_NEXT_ATTEMPT_SECONDS = 600;
/** A day: more is a typo, not a back-off (and past setTimeout's range in milliseconds). */
export const MAX_NEXT_ATTEMPT_SECONDS = 86_400;

export function nextAttemptOption(): Option {
  return new Option(
    `${NEXT_ATTEMPT_FLAG} <seconds>`,
    `after an attempt that failed on infrastructure with attempts left, wait this long for the next one (the Run may have been cancelled or deleted during the back-off); none by then: the last result stands. The default is longer than the dispatcher's default back-off cap (dispatcher.retry.backoffMaxSeconds 300 s) plus a Pod's start: raise it with the cap (1-${MAX_NEXT_ATTEMPT_SECONDS})`,
  ).default(String(DEFAULT_NEXT_ATTEMPT_SECONDS));
}

/** The flag's value in milliseconds: whole seconds from 1 to a day, else exit 2 naming the flag. */
export function nextAttemptWithinMs(value: string): number {
  const seconds = /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_NEXT_ATTEMPT_SECONDS)) throw new InvalidInputError(NEXT_ATTEMPT_FLAG, `must be a whole number of seconds from 1 to ${MAX_NEXT_ATTEMPT_SECONDS}, got ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`);
  return seconds * 1000;
}
