// OpenCode (and Kilo) records that yield no event of their own (shared/translate/folds.ts; checked by the
// property suite).
import type { RecordFold } from '../../shared/translate/folds.ts';

export const folds: readonly RecordFold[] = [
  { match: { type: 'step_start' }, kind: 'silent', why: "a model step's start (worktree snapshot marker): the step's records and its step_finish follow" },
];
