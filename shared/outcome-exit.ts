// Outcome -> process exit code, shared by `tcab run` and `tcab-driver` (the Pod's exit code tells the
// dispatcher the same thing the result message does).
import type { Outcome } from './run.ts';
import { EXIT } from './exit-codes.ts';

export const OUTCOME_EXIT: Record<Outcome, number> = {
  succeeded: EXIT.ok,
  harness_failed: EXIT.harnessFailed,
  infrastructure_failed: EXIT.infrastructureFailed,
  timed_out: EXIT.timedOut,
  cancelled: EXIT.cancelled,
  budget_exceeded: EXIT.budgetExceeded,
};
