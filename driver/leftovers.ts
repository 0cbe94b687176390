// Processes a harness left behind after its session: daemons that started their own session or process group
// (Cline's hub daemon does), so the signal to the harness's group never reached them. They are found the way
// Jenkins' process-tree killer finds a build's: by a cookie in their environment, here the run's own HOME, which
// every descendant inherits. In a driver Pod the container's end would kill them anyway; on a workstation
// (`tcab run`, `tcab harnesses verify`) nothing else would.
//
// Reading another uid's /proc/<pid>/environ takes CAP_SYS_PTRACE (the kernel's ptrace access check). A root driver
// that has it (a workstation's `sudo tcab run`) scans itself; the driver Pod's root keeps only what it needs
// (dispatcher/pods/driver-pod.ts: no SYS_PTRACE), so there the scan runs as the run user, who may read and kill
// its own processes: this file run as a program, `node leftovers.ts <home>`, printing what it killed as JSON.
import { readdir, readFile } from 'node:fs/promises';
import { z } from 'zod';
import { runProcess } from './process.ts';
import type { RunUser } from './process.ts';

/** Whether a NUL-separated environ block (as /proc/<pid>/environ) carries HOME=home exactly. */
export function environHasHome(environ: string, home: string): boolean {
  return environ.split('\0').includes(`HOME=${home}`);
}

/**
 * Whether a pid names a running process. A killed process whose parent died before reaping it stays a zombie until
 * init collects it: it runs nothing, so it counts as gone.
 */
export async function processRunning(pid: number, procRoot = '/proc'): Promise<boolean> {
  try {
    const stat = await readFile(`${procRoot}/${pid}/stat`, 'latin1');
    // "pid (comm) S ...": the state follows the last ')' (comm may itself contain parentheses).
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The executable's short name (/proc/<pid>/comm): no arguments, which may carry the prompt or a key. */
const Leftover = z.strictObject({ pid: z.int().positive(), name: z.string().max(64) });
export type Leftover = z.infer<typeof Leftover>;

/** Live processes (not this one) whose environment says HOME=home. Unreadable ones (other users) are skipped. */
export async function findLeftovers(home: string, procRoot = '/proc'): Promise<Leftover[]> {
  const pids = (await readdir(procRoot)).filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => pid !== process.pid);
  const found = await Promise.all(
    pids.map(async (pid): Promise<Leftover | undefined> => {
      try {
        const [environ, comm] = await Promise.all([readFile(`${procRoot}/${pid}/environ`, 'latin1'), readFile(`${procRoot}/${pid}/comm`, 'utf8')]);
        return environHasHome(environ, home) && (await processRunning(pid, procRoot)) ? { pid, name: comm.trim() } : undefined;
      } catch {
        return undefined; // gone meanwhile, or another user's
      }
    }),
  );
  return found.filter((p): p is Leftover => p !== undefined);
}

/**
 * Kills (SIGKILL) what the run left behind and returns once they are dead (or after waitMs): the run directories
 * are removed next, and nothing may still be writing into them.
 */
export async function killLeftovers(home: string, procRoot = '/proc', waitMs = 2000): Promise<Leftover[]> {
  const leftovers = await findLeftovers(home, procRoot);
  for (const { pid } of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  // A SIGKILLed process is gone within a scheduling tick or two; nothing announces it to a non-parent.
  const until = Date.now() + waitMs;
  let alive = leftovers.map((p) => p.pid);
  while (alive.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    alive = (await Promise.all(alive.map(async (pid) => ((await processRunning(pid, procRoot)) ? pid : undefined)))).filter((pid): pid is number => pid !== undefined);
  }
  return leftovers;
}

/** CAP_SYS_PTRACE's bit in /proc/<pid>/status's capability masks. */
const CAP_SYS_PTRACE = 19n;

/** Whether a status text's CapEff holds a capability (by bit number). */
export function hasEffectiveCapability(status: string, bit: bigint): boolean {
  const mask = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return mask !== undefined && ((BigInt(`0x${mask}`) >> bit) & 1n) === 1n;
}

/** Whether this process can read the environ of the run user's processes: it is that user, or holds SYS_PTRACE. */
export async function canReadEnvironOf(user: RunUser, procRoot = '/proc'): Promise<boolean> {
  if (user.uid === undefined || user.uid === process.getuid?.()) return true;
  return hasEffectiveCapability(await readFile(`${procRoot}/self/status`, 'utf8'), CAP_SYS_PTRACE);
}

/** The scan and kill done by the run user itself (this file as a program), for a driver that cannot read environs. */
export async function killLeftoversAs(home: string, user: RunUser, deadline = Date.now() + 10_000): Promise<Leftover[]> {
  let out = '';
  const errors: string[] = [];
  // No HOME=home in its own environment: the scanner is not a leftover of the run.
  const outcome = await runProcess({
    argv: [process.execPath, import.meta.filename, home],
    cwd: '/',
    env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
    user,
    deadline,
    onStdout: (line) => (out += line.text),
    onStderr: (line) => void errors.push(line.text),
  });
  if (outcome.code !== 0) throw new Error(`the leftover scan as uid ${user.uid} failed (${outcome.spawnError?.message ?? `exit ${outcome.code ?? outcome.signal}`}): ${errors.slice(-3).join(' ')}`);
  // The run user wrote this: it is checked like any of its output.
  return z.array(Leftover).parse(JSON.parse(out));
}

/** Kills what the run left behind, scanning in this process when it can read the run user's environs. */
export async function killRunLeftovers(home: string, user: RunUser): Promise<Leftover[]> {
  return (await canReadEnvironOf(user)) ? killLeftovers(home) : killLeftoversAs(home, user);
}

if (import.meta.main) {
  const home = process.argv[2];
  if (!home) throw new Error('usage: node leftovers.ts <run home>');
  process.stdout.write(`${JSON.stringify(await killLeftovers(home))}\n`);
}
