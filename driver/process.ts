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
import type { ChildProcess } from 'node:child_process';
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
  /** `pipe`: the caller writes it (an ACP client), handed over by `onStdin` once the child is spawned. */
  stdin?: 'close' | { text: string } | 'pipe';
  onStdin?(stdin: NodeJS.WritableStream): void;
  /** Aborting it ends a process the caller is done with (an ACP agent after its turn): not a cancellation. */
  end?: AbortSignal;
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
  /** The caller ended the process (ProcessSpec.end) before it exited by itself. */
  ended?: boolean;
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
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: spec.cwd,
      env: spec.env,
      uid: spec.user.uid,
      gid: spec.user.gid,
      detached: true, // own process group: the deadline kills grandchildren too
      stdio: [spec.stdin && spec.stdin !== 'close' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    new WatchedChild(child, spec, started, resolve).watch();
  });
}

/** One spawned child until its outcome: its output split into lines, its deadline and cancellation, its exit. */
class WatchedChild {
  private readonly child: ChildProcess;
  private readonly spec: ProcessSpec;
  private readonly started: number;
  private readonly resolve: (outcome: ProcessOutcome) => void;
  private readonly killGraceMs: number;
  private readonly drainGraceMs: number;
  private readonly stdout: Readable;
  private readonly stderr: Readable;
  private readonly out: LineSplitter;
  private readonly err: LineSplitter;
  private readonly timers: NodeJS.Timeout[] = [];
  private timedOut = false;
  private cancelled = false;
  private endedByCaller = false;
  private spawnError: Error | undefined;
  private exit: { code: number | null; signal: string | null } | undefined;
  private finished = false;
  private terminating = false;

  constructor(child: ChildProcess, spec: ProcessSpec, started: number, resolve: (outcome: ProcessOutcome) => void) {
    this.child = child;
    this.spec = spec;
    this.started = started;
    this.resolve = resolve;
    this.killGraceMs = spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.drainGraceMs = spec.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS;
    this.stdout = child.stdout!;
    this.stderr = child.stderr!;
    this.out = new LineSplitter(spec.maxLineBytes);
    this.err = new LineSplitter(spec.maxLineBytes);
  }

  /** Listens (output, deadline, cancellation), writes stdin, then waits for the exit: all before the child can run. */
  watch(): void {
    const outputClosed = this.readOutput();
    if (this.spec.deadline !== undefined) {
      this.after(this.spec.deadline - Date.now(), () => {
        if (this.finished || this.exit) return;
        this.timedOut = true;
        this.terminate();
      });
    }
    if (this.spec.signal?.aborted) this.onAbort();
    else this.spec.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.spec.stdin === 'pipe') {
      if (this.child.stdin) this.spec.onStdin?.(this.child.stdin);
    } else if (this.spec.stdin && this.spec.stdin !== 'close') {
      this.child.stdin?.on('error', () => undefined); // the harness may exit before reading it all
      this.child.stdin?.end(this.spec.stdin.text);
    }
    if (this.spec.end?.aborted) this.onEnd();
    else this.spec.end?.addEventListener('abort', this.onEnd, { once: true });
    this.child.on('error', (error) => {
      this.spawnError ??= error;
      if (this.child.pid === undefined && !this.exit) {
        this.exit = { code: null, signal: null };
        this.exited(outputClosed);
      }
    });
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      this.exited(outputClosed);
    });
  }

  /** Splits stdout and stderr into lines as they arrive; resolves when both pipes have closed. */
  private readOutput(): Promise<unknown> {
    const { stdout, stderr, spec } = this;
    stdout.on('data', (chunk: Buffer) => {
      for (const line of this.out.push(chunk)) spec.onStdout?.(line);
    });
    stderr.on('data', (chunk: Buffer) => {
      for (const line of this.err.push(chunk)) spec.onStderr?.(line);
    });
    // Destroying a pipe we no longer read must not surface as an error.
    stdout.on('error', () => undefined);
    stderr.on('error', () => undefined);
    return Promise.all([closed(stdout), closed(stderr)]);
  }

  private after(ms: number, action: () => void): void {
    this.timers.push(setTimeout(action, Math.max(0, ms)));
  }

  private readonly onEnd = (): void => {
    if (this.finished || this.exit) return;
    this.endedByCaller = true;
    this.terminate();
  };

  private readonly onAbort = (): void => {
    if (this.finished || this.exit) return; // it ended on its own; only its leftovers' output is being drained
    this.cancelled = true;
    this.terminate();
  };

  private terminate(): void {
    if (this.terminating || this.finished) return;
    this.terminating = true;
    killGroup(this.child.pid, 'SIGTERM');
    this.after(this.killGraceMs, () => {
      killGroup(this.child.pid, 'SIGKILL');
      // Past the SIGKILL nothing is waited for: the child is gone (or, exceptionally, unkillable) and what
      // escaped its group is teardown's. The short pause lets the kill's exit status and last bytes arrive.
      if (this.exit) this.finish();
      else this.after(Math.min(this.drainGraceMs, 250), () => this.finish());
    });
  }

  private exited(outputClosed: Promise<unknown>): void {
    // Normally the pipes close with the child; a leftover holding them gets the drain grace, then loses them.
    void outputClosed.then(() => this.finish());
    this.after(this.terminating ? Math.min(this.drainGraceMs, 250) : this.drainGraceMs, () => this.finish());
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    const { stdout, stderr, spec, exit } = this;
    const outputHeldOpen = !(stdout.closed && stderr.closed);
    // Reap whatever the child left behind in its group (background servers, watchers), then stop reading
    // pipes that escaped processes may still hold: they get EPIPE, we get on with the run.
    killGroup(this.child.pid, 'SIGKILL');
    stdout.destroy();
    stderr.destroy();
    for (const line of this.out.end()) spec.onStdout?.(line);
    for (const line of this.err.end()) spec.onStderr?.(line);
    for (const timer of this.timers) clearTimeout(timer);
    spec.signal?.removeEventListener('abort', this.onAbort);
    spec.end?.removeEventListener('abort', this.onEnd);
    this.resolve({ code: this.spawnError ? null : (exit?.code ?? null), signal: exit?.signal ?? null, timedOut: this.timedOut, cancelled: this.cancelled, ...(this.endedByCaller ? { ended: true } : {}), spawnError: this.spawnError, outputHeldOpen, durationMs: Date.now() - this.started });
  }
}
