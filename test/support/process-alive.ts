// Whether a pid still names a running process. A killed process whose parent died before reaping it stays a zombie
// until init (here, the sandbox's pid 1) collects it: it runs nothing, so it counts as gone.
import { readFileSync } from 'node:fs';

export function processRunning(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // "pid (comm) S ...": the state follows the last ')' (comm may itself contain parentheses).
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}
