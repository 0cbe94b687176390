// The test's side of flaky-registry.ts: starts it (inside a node's network namespace: the caller gives the argv
// prefix that enters it), reads its `listening` line and its JSON request lines, and flips it up or down, each flip
// awaited until the proxy acknowledges it. Used by supply-faults.test.ts (the suite's node) and node/faults.ts
// registryOutage (one node of a multi-node cluster).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface FlakyRegistryRequest {
  at: string;
  method: string;
  url: string;
  status: number;
}

export interface FlakyRegistryProcess {
  /** Its port on 127.0.0.1 inside the namespace it runs in. */
  port: number;
  /** What it printed (one JSON line per request, one per flip), for a failure's context. */
  lines: string[];
  /** Every request it answered so far, in order. */
  requests(): FlakyRegistryRequest[];
  set(state: 'up' | 'down'): Promise<void>;
  /** Ends its stdin (it exits), SIGTERM as well, and waits for the exit. */
  close(): Promise<void>;
}

/** How long a line the proxy owes (listening, an acknowledgement) may take before the helper says which it missed. */
const LINE_TIMEOUT_MS = 20_000;

/**
 * Starts flaky-registry.ts, down, forwarding to `upstream` (host:port) once up. `enter` is the argv prefix that
 * runs a command in the node's network namespace (`['nsenter', '--net=<path>', '--']`, or RealNode.nodeArgv's).
 */
export async function startFlakyRegistry(enter: (argv: string[]) => string[], upstream: string): Promise<FlakyRegistryProcess> {
  const [command, ...args] = enter([process.execPath, join(import.meta.dirname, 'flaky-registry.ts'), '--listen', '127.0.0.1:0', '--to', upstream]);
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (w.test(line)) w.resolve(line);
      else waiters.push(w);
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const close = async () => {
    child.stdin!.end();
    child.kill('SIGTERM');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  };
  const lineMatching = (test: (line: string) => boolean, what: string) => new Promise<string>((resolve, reject) => {
    const seen = lines.find(test);
    if (seen) return resolve(seen);
    const timer = setTimeout(() => reject(new Error(`flaky registry: no ${what} in ${LINE_TIMEOUT_MS / 1000} s: ${lines.join('\n')} ${stderr}`)), LINE_TIMEOUT_MS);
    waiters.push({ test, resolve: (line) => (clearTimeout(timer), resolve(line)) });
  });
  try {
    const listening = await lineMatching((l) => l.startsWith('listening '), 'listening line');
    return {
      port: Number(listening.split(':').at(-1)),
      lines,
      requests: () => lines.filter((l) => l.startsWith('{') && l.includes('"status"')).map((l) => JSON.parse(l) as FlakyRegistryRequest),
      async set(state) {
        const before = lines.length;
        child.stdin!.write(`${state}\n`);
        await lineMatching((l) => lines.indexOf(l) >= before && l.includes(`"state":"${state}"`), `acknowledgement of ${state}`);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
