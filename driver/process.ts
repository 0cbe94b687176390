// Runs one child process the way every stage needs it: as the run user, in its own process group (so the whole
// tree can be signalled), with exactly the environment given, stdout/stderr split into lines as they arrive, and a
// deadline after which the group gets SIGTERM and, after a grace period, SIGKILL.
//
// The child's exit ends it, not the end of its output: a process the child left in the background (`sleep 30 &`,
// a daemon in its own session) may hold stdout open for as long as it likes. After the exit the pipes get a short,
// bounded drain; then the group is killed, the pipes are closed from our side and the line splitters flushed.
// At the deadline nothing is waited for past the SIGKILL: escaped processes that still hold the pipes are left to
// teardown (driver/leftovers.ts). So a process costs at most deadline + killGraceMs (+ a drain when it exited).
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { LineSplitter } from '../shared/translate/lines.ts';
import type { SplitLine } from '../shared/translate/lines.ts';

export interface RunUser {
  uid?: number;
  gid?: number;
}

export const DEFAULT_KILL_GRACE_MS = 5000;
/** How long the pipes may stay open after the child exited; normally they close with it. */
export const DEFAULT_DRAIN_GRACE_MS = 1000;

export interface ProcessSpec {
  argv: string[];
  cwd: string;
  /** The complete environment: nothing is inherited from the driver. */
  env: Record<string, string>;
  user: RunUser;
  stdin?: 'close' | { text: string };
  /** Absolute deadline (ms since epoch); undefined = none. */
  deadline?: number;
  /** Time between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Time after the child's exit during which output still held open by its leftovers is read. */
  drainGraceMs?: number;
  maxLineBytes?: number;
  onStdout?(line: SplitLine): void;
  onStderr?(line: SplitLine): void;
  /** Aborting kills the process group like a deadline does (cancellation). */
  signal?: AbortSignal;
}

export interface ProcessOutcome {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when the process could not be started at all (ENOENT, EACCES). */
  spawnError?: Error;
  /** Processes outside the child kept its stdout/stderr open past its exit (or its kill); we closed them. */
  outputHeldOpen: boolean;
  durationMs: number;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Resolves when the stream has ended or been destroyed (`close` comes in both cases). */
function closed(stream: Readable): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())));
}

export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  const started = Date.now();
  const [command, ...args] = spec.argv;
  if (!command) return Promise.reject(new Error('runProcess: empty argv'));
  const killGraceMs = spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const drainGraceMs = spec.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS;
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: spec.cwd,
      env: spec.env,
      uid: spec.user.uid,
      gid: spec.user.gid,
      detached: true, // own process group: the deadline kills grandchildren too
      stdio: [spec.stdin && spec.stdin !== 'close' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    let timedOut = false;
    let cancelled = false;
    let spawnError: Error | undefined;
    let exit: { code: number | null; signal: string | null } | undefined;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];
    const after = (ms: number, action: () => void) => timers.push(setTimeout(action, Math.max(0, ms)));

    const out = new LineSplitter(spec.maxLineBytes);
    const err = new LineSplitter(spec.maxLineBytes);
    stdout.on('data', (chunk: Buffer) => {
      for (const line of out.push(chunk)) spec.onStdout?.(line);
    });
    stderr.on('data', (chunk: Buffer) => {
      for (const line of err.push(chunk)) spec.onStderr?.(line);
    });
    // Destroying a pipe we no longer read must not surface as an error.
    stdout.on('error', () => undefined);
    stderr.on('error', () => undefined);
    const outputClosed = Promise.all([closed(stdout), closed(stderr)]);

    const finish = () => {
      if (finished) return;
      finished = true;
      const outputHeldOpen = !(stdout.closed && stderr.closed);
      // Reap whatever the child left behind in its group (background servers, watchers), then stop reading
      // pipes that escaped processes may still hold: they get EPIPE, we get on with the run.
      killGroup(child.pid, 'SIGKILL');
      stdout.destroy();
      stderr.destroy();
      for (const line of out.end()) spec.onStdout?.(line);
      for (const line of err.end()) spec.onStderr?.(line);
      for (const timer of timers) clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({ code: spawnError ? null : (exit?.code ?? null), signal: exit?.signal ?? null, timedOut, cancelled, spawnError, outputHeldOpen, durationMs: Date.now() - started });
    };

    let terminating = false;
    const terminate = () => {
      if (terminating || finished) return;
      terminating = true;
      killGroup(child.pid, 'SIGTERM');
      after(killGraceMs, () => {
        killGroup(child.pid, 'SIGKILL');
        // Past the SIGKILL nothing is waited for: the child is gone (or, exceptionally, unkillable) and what
        // escaped its group is teardown's. The short pause lets the kill's exit status and last bytes arrive.
        if (exit) finish();
        else after(Math.min(drainGraceMs, 250), finish);
      });
    };
    const onAbort = () => {
      if (finished || exit) return; // it ended on its own; only its leftovers' output is being drained
      cancelled = true;
      terminate();
    };
    if (spec.deadline !== undefined) {
      after(spec.deadline - Date.now(), () => {
        if (finished || exit) return;
        timedOut = true;
        terminate();
      });
    }
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });

    if (spec.stdin && spec.stdin !== 'close') {
      child.stdin?.on('error', () => undefined); // the harness may exit before reading it all
      child.stdin?.end(spec.stdin.text);
    }
    const exited = () => {
      // Normally the pipes close with the child; a leftover holding them gets the drain grace, then loses them.
      void outputClosed.then(finish);
      after(terminating ? Math.min(drainGraceMs, 250) : drainGraceMs, finish);
    };
    child.on('error', (error) => {
      spawnError ??= error;
      if (child.pid === undefined && !exit) {
        exit = { code: null, signal: null };
        exited();
      }
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      exited();
    });
  });
}
