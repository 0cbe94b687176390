// Child processes of the test control plane: logs to files, optional parent-death signal (so a test runner
// killed outright takes its control plane with it), and a stop that escalates TERM -> KILL.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export interface Managed {
  name: string;
  child: ChildProcess;
  log: string;
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  logDir: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the child when this process dies (setpriv --pdeathsig); off for `cluster:up`, which outlives it. */
  dieWithParent: boolean;
}

export function startProcess(name: string, argv: string[], options: StartOptions): Managed {
  const log = join(options.logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  const command = options.dieWithParent ? ['setpriv', '--pdeathsig', 'KILL', '--', ...argv] : argv;
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', fd, fd], env: options.env ?? process.env, detached: !options.dieWithParent });
  closeSync(fd);
  if (!options.dieWithParent) child.unref();
  const exited = once(child, 'exit').catch(() => undefined);
  return {
    name,
    child,
    log,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export { freePort } from '../support/nats-server.ts';

/** Polls `check` until it is true; fails with the log's tail when the process dies or time runs out. */
export async function waitFor(what: string, check: () => Promise<boolean>, options: { timeoutMs: number; process?: Managed }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    const p = options.process;
    if (p && (p.child.exitCode !== null || p.child.signalCode !== null)) throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}) before ${what}; see ${p.log}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${p ? `; see ${p.log}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
