// The one poll of the tests: probe until the probe yields a value, with a deadline always. Every "wait until" of the
// test support and the tests is this (or vitest's vi.waitFor for an expect() that has to come true).

export interface PollOptions {
  /** The deadline, from the first probe. A probe still running at the deadline is not awaited: the poll fails. */
  timeoutMs: number;
  /** The pause between probes (default 100 ms), never past the deadline. */
  intervalMs?: number;
  /** Whether a probe's error means "not yet" (the default: every error does) or ends the poll at once (false). */
  retryIf?: (error: unknown) => boolean;
  /** Checked after every probe that did not yield: a reason (e.g. "nats exited (1)") ends the poll at once. */
  giveUp?: () => string | undefined;
  /** More for any failure's message, e.g. where a log is (evaluated only on failure). */
  detail?: () => string;
}

/** What the probe sees: the poll's deadline, as an AbortSignal and as the milliseconds left. */
export interface PollContext {
  signal: AbortSignal;
  remainingMs(): number;
}

/** A probe's "not yet": undefined, null or false. Anything else (also 0 and '') is the poll's value. */
type NotYet = undefined | null | false;

/**
 * Calls `probe` until it yields a value other than undefined, null or false, and resolves with that value. Fails
 * with `timed out after <timeoutMs> ms waiting for <what>` and the last probe's error or value when the deadline
 * passes; a probe's error counts as "not yet" unless `retryIf` says otherwise.
 */
export async function pollUntil<T>(what: string, probe: (poll: PollContext) => T | NotYet | Promise<T | NotYet>, options: PollOptions): Promise<T> {
  const { timeoutMs, intervalMs = 100, retryIf = () => true, giveUp, detail } = options;
  const deadline = Date.now() + timeoutMs;
  const abort = new AbortController();
  const remainingMs = () => Math.max(0, deadline - Date.now());
  const context: PollContext = { signal: abort.signal, remainingMs };
  const more = () => (detail ? `; ${detail()}` : '');
  let last: { error: unknown } | { value: unknown } = { value: undefined };
  let hung = false;
  let timer: NodeJS.Timeout | undefined;
  // Settles at the deadline: a probe that hangs (a fetch without its own timeout) cannot hold the poll past it.
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    for (;;) {
      const probed = Promise.resolve().then(() => probe(context)).then((value) => ({ value }), (error: unknown) => ({ error }));
      const outcome = await Promise.race([probed, timedOut]);
      if (outcome === 'timeout') {
        hung = true;
        break;
      }
      if ('error' in outcome && !retryIf(outcome.error)) throw outcome.error;
      if ('value' in outcome && outcome.value !== undefined && outcome.value !== null && outcome.value !== false) return outcome.value;
      last = outcome;
      const reason = giveUp?.();
      if (reason !== undefined) throw new Error(`${reason} before ${what}${more()}`, 'error' in last ? { cause: last.error } : undefined);
      if (remainingMs() <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remainingMs())));
      if (remainingMs() <= 0) break;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  const lastly = [
    'error' in last ? `; last error: ${summarize(last.error)}` : last.value === undefined || last.value === false ? '' : `; last value: ${summarize(last.value)}`,
    hung ? '; the last probe was still running' : '',
  ].join('');
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastly}${more()}`, 'error' in last ? { cause: last.error } : undefined);
}

function summarize(thing: unknown): string {
  let text: string;
  if (thing instanceof Error) text = thing.message;
  else if (typeof thing === 'string') text = thing;
  else {
    try {
      text = JSON.stringify(thing) ?? String(thing);
    } catch {
      text = String(thing);
    }
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
