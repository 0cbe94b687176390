// The time half of grouping stderr (shared/translate/stderr-groups.ts): a trace ends with no line to say so, so an
// open diagnostic is published once stderr has been quiet for a short gap, not held until the next line or the
// session's end. Timers are injected: tests drive them by hand instead of sleeping.

/** Long enough for a diagnostic written in several chunks (a trace is one write), short enough to read as live. */
export const STDERR_QUIET_GAP_MS = 200;

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Call `touched()` after each stderr line: while a diagnostic is open, `flush` runs once stderr has been quiet for
 * `gapMs` (each line restarts the wait). `stop()` at the session's end (its finish flushes what is left).
 */
export function quietGapFlusher<E>(session: { stderrPending(): boolean; stderrIdle(): E[] }, flush: (events: E[]) => void, timers: Timers = systemTimers, gapMs = STDERR_QUIET_GAP_MS): { touched(): void; stop(): void } {
  let handle: unknown;
  const disarm = () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
  };
  return {
    touched() {
      disarm();
      if (!session.stderrPending()) return;
      handle = timers.setTimeout(() => {
        handle = undefined;
        flush(session.stderrIdle());
      }, gapMs);
    },
    stop: disarm,
  };
}
