// Exit codes are a contract (scripts branch on them); `tcab --help` prints this table.
export const EXIT = {
  ok: 0,
  /** A run's harness session failed (the harness lost: non-zero exit, error result). */
  harnessFailed: 1,
  /** Bad flags, bad input files, unknown harness. */
  usage: 2,
  /** A run failed before or around the session: install, auth, probe, init, driver faults. */
  infrastructureFailed: 3,
  /** The run hit its maximum runtime. */
  timedOut: 4,
  /** Drift found by `tcab harnesses verify`. */
  verifyFailed: 5,
  cancelled: 130,
} as const;

export function exitCodeHelp(): string {
  return [
    '',
    'Exit status:',
    '  0    success',
    '  1    the harness session failed (run) ',
    '  2    usage error: bad flags, unreadable input, unknown harness',
    '  3    infrastructure failure: install, auth, probe or init failed (run)',
    '  4    the run hit its maximum runtime (run)',
    '  5    verify found drift (harnesses verify)',
    '  130  cancelled',
  ].join('\n');
}
