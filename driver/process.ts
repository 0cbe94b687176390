// Runs one child process the way every stage needs it: as the run user, in its own process group (so the whole
// tree can be signalled), with exactly the environment given, stdout/stderr split into lines as they arrive, and a
// deadline after which the group gets SIGTERM and, after a grace period, SIGKILL.
import { spawn } from 'node:child_process';
import { LineSplitter } from '../shared/translate/lines.ts';
import type { SplitLine } from '../shared/translate/lines.ts';

export interface RunUser {
  uid?: number;
  gid?: number;
}

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

export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const [command, ...args] = spec.argv;
    if (!command) throw new Error('runProcess: empty argv');
    const child = spawn(command, args, {
      cwd: spec.cwd,
      env: spec.env,
      uid: spec.user.uid,
      gid: spec.user.gid,
      detached: true, // own process group: the deadline kills grandchildren too
      stdio: [spec.stdin && spec.stdin !== 'close' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    let cancelled = false;
    let spawnError: Error | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const terminate = () => {
      killGroup(child.pid, 'SIGTERM');
      killTimer ??= setTimeout(() => killGroup(child.pid, 'SIGKILL'), spec.killGraceMs ?? 5000);
    };
    const deadlineTimer =
      spec.deadline !== undefined
        ? setTimeout(() => {
            timedOut = true;
            terminate();
          }, Math.max(0, spec.deadline - Date.now()))
        : undefined;
    const onAbort = () => {
      cancelled = true;
      terminate();
    };
    spec.signal?.addEventListener('abort', onAbort, { once: true });

    const out = new LineSplitter(spec.maxLineBytes);
    const err = new LineSplitter(spec.maxLineBytes);
    child.stdout!.on('data', (chunk: Buffer) => {
      for (const line of out.push(chunk)) spec.onStdout?.(line);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const line of err.push(chunk)) spec.onStderr?.(line);
    });
    if (spec.stdin && spec.stdin !== 'close') {
      child.stdin?.on('error', () => undefined); // the harness may exit before reading it all
      child.stdin?.end(spec.stdin.text);
    }
    child.on('error', (error) => {
      spawnError = error;
    });
    child.on('close', (code, signal) => {
      for (const line of out.end()) spec.onStdout?.(line);
      for (const line of err.end()) spec.onStderr?.(line);
      // Reap whatever the harness left behind in its group (background servers, watchers).
      killGroup(child.pid, 'SIGKILL');
      if (deadlineTimer) clearTimeout(deadlineTimer);
      if (killTimer) clearTimeout(killTimer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({ code: spawnError ? null : code, signal, timedOut, cancelled, spawnError, durationMs: Date.now() - started });
    });
  });
}
