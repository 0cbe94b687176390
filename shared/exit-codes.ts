// Exit codes are a contract (scripts branch on them); `tcab --help` prints this table. The code of a failure
// follows from the class of its error (exitCodeFor), never from where it was thrown or what its message says.
import { InvalidInputError, ManifestError, TcabError, UnknownHarnessError } from './errors.ts';

export const EXIT = {
  ok: 0,
  /** A run's harness session failed (the harness lost: non-zero exit, error result). */
  harnessFailed: 1,
  /** Bad flags, bad input files, unknown harness. */
  usage: 2,
  /** A run failed before or around the session: install, auth, probe, init, driver faults; a service unreachable. */
  infrastructureFailed: 3,
  /** The run hit its maximum runtime. */
  timedOut: 4,
  /** Drift found by `tcab harnesses verify`. */
  verifyFailed: 5,
  /** The run reached its budget (the model gateway refused the request past it). */
  budgetExceeded: 6,
  /** The run's sessions succeeded, and its test case's check judged the work failed (`tcab run --check`). */
  checkFailed: 7,
  cancelled: 130,
} as const;

/** Something tcab depends on failed (a server unreachable, a record it reads is malformed): not the caller's input. */
export class InfrastructureError extends TcabError {
  override name = 'InfrastructureError';
}

// Failures of the operating system on a path the caller named (an input file that is missing or unreadable).
const UNREADABLE_INPUT = new Set(['ENOENT', 'EACCES', 'EISDIR', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EPERM']);

/** The exit code of an error that ended a command (commander's own parse errors are handled where it is set up). */
export function exitCodeFor(error: unknown): number {
  if (error instanceof InvalidInputError || error instanceof UnknownHarnessError || error instanceof ManifestError) return EXIT.usage;
  if (error instanceof InfrastructureError) return EXIT.infrastructureFailed;
  const errno = error as NodeJS.ErrnoException;
  if (typeof errno?.path === 'string' && typeof errno.code === 'string' && UNREADABLE_INPUT.has(errno.code)) return EXIT.usage;
  // Anything else is a fault of tcab or its surroundings, not of the command line.
  return EXIT.infrastructureFailed;
}

export function exitCodeHelp(): string {
  return [
    '',
    'Exit status:',
    '  0    success',
    '  1    the harness session failed (run)',
    '  2    usage error: bad flags or arguments, unreadable input, unknown harness, invalid run spec',
    '  3    infrastructure failure: install, auth, probe or init failed (run); NATS or the dispatcher unreachable',
    '  4    the run hit its maximum runtime (run)',
    '  5    verify found drift (harnesses verify)',
    '  6    the run reached its budget: the model gateway refused the request past it (run)',
    "  7    the run succeeded but its test case's check failed (run)",
    '  130  cancelled',
  ].join('\n');
}
