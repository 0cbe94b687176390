// Child processes of the test control plane: logs to files, optional parent-death signal (so a test runner
// killed outright takes its control plane with it), and a stop that escalates TERM -> KILL.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/nats-server.ts';
import type { PollOptions } from '../support/poll.ts';

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

/**
 * pollUntil (test/support/poll.ts) options for a wait on something `p` serves: the wait fails at once when `p`
 * exits ("<name> exited (<code>) before <what>"), and its failure names `p`'s log.
 */
export function whileRunning(p: Managed): Pick<PollOptions, 'giveUp' | 'detail'> {
  return {
    giveUp: () => (p.child.exitCode !== null || p.child.signalCode !== null ? `${p.name} exited (${p.child.exitCode ?? p.child.signalCode})` : undefined),
    detail: () => `see ${p.log}`,
  };
}

/** Port-taken attempts a server gets before startOnFreePorts gives up. */
const PORT_ATTEMPTS = 3;

/**
 * Starts a server on `count` ports freePort() picked and waits until `ready`; when it exited because a port was
 * taken in between ("address already in use": freePort closes the port before the server binds it, and any outgoing
 * connection of this machine may get it as its ephemeral port meanwhile, the likelier the more nodes run), it picks
 * new ports and starts it again, up to PORT_ATTEMPTS times. Any other failure is thrown as it came.
 */
export async function startOnFreePorts(count: number, start: (ports: number[]) => Managed, ready: (ports: number[], p: Managed) => Promise<unknown>): Promise<{ process: Managed; ports: number[] }> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    const p = start(ports);
    try {
      await ready(ports, p);
      return { process: p, ports };
    } catch (error) {
      const exited = p.child.exitCode !== null || p.child.signalCode !== null;
      // The log is appended to: only a line naming this attempt's ports counts.
      const log = exited ? readFileSync(p.log, { encoding: 'utf8', flag: 'r' }) : '';
      const taken = log.split('\n').some((line) => /address already in use/.test(line) && ports.some((port) => line.includes(`:${port}`)));
      if (!taken || attempt >= PORT_ATTEMPTS) throw error;
      process.stderr.write(`${p.name}: a port of ${ports.join(', ')} was taken before it bound it; starting it again on others\n`);
    }
  }
}
