// Processes a harness left behind after its session: daemons that started their own session or process group
// (Cline's hub daemon does), so the signal to the harness's group never reached them. They are found the way
// Jenkins' process-tree killer finds a build's: by a cookie in their environment, here the run's own HOME, which
// every descendant inherits. In a driver Pod the container's end would kill them anyway; on a workstation
// (`tcab run`, `tcab harnesses verify`) nothing else would.
import { readdir, readFile } from 'node:fs/promises';

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

export interface Leftover {
  pid: number;
  /** The executable's short name (/proc/<pid>/comm): no arguments, which may carry the prompt or a key. */
  name: string;
}

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
