// startOnFreePorts (processes.ts): a server whose port another socket took between freePort() and its bind is
// started again on new ports; any other failure is not retried. Real child processes binding real loopback ports.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startOnFreePorts, startProcess, whileRunning } from './processes.ts';
import { pollUntil } from '../support/poll.ts';
import type { Managed } from './processes.ts';

const logDir = mkdtempSync(join(tmpdir(), 'tcab-processes-test-'));
const started: Managed[] = [];
afterAll(async () => {
  for (const p of started) await p.stop(1000);
  rmSync(logDir, { recursive: true, force: true });
});

/**
 * A server on 127.0.0.1:<port> that prints `listening <port>`; `taken`: something else holds the port when it binds
 * (here its own first socket, so the order is certain), and it dies with Node's EADDRINUSE message naming the port.
 */
function server(name: string, port: number, taken: boolean): Managed {
  const listen = `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('listening ${port}'))`;
  const script = taken ? `require('node:net').createServer().listen(${port}, '127.0.0.1', () => ${listen})` : listen;
  const p = startProcess(name, [process.execPath, '-e', script], { logDir, dieWithParent: true });
  started.push(p);
  return p;
}
const listening = (p: Managed, port: number) => pollUntil(`${p.name} listening`, () => readFileSync(p.log, 'utf8').includes(`listening ${port}`), { timeoutMs: 10_000, ...whileRunning(p) });

describe('startOnFreePorts', () => {
  it('starts a server again on new ports when its port was taken before it bound it, until it listens', async () => {
    const tried: number[][] = [];
    const { ports, process: p } = await startOnFreePorts(1, (ports) => {
      tried.push(ports);
      return server('taken-twice', ports[0]!, tried.length <= 2);
    }, (ports, p) => listening(p, ports[0]!));
    expect(tried).toHaveLength(3);
    expect(new Set(tried.map(([port]) => port)).size).toBe(3);
    expect(ports).toEqual(tried[2]);
    expect(p.child.exitCode).toBeNull();
    expect(readFileSync(p.log, 'utf8')).toMatch(/address already in use/);
  });

  it('gives up after three taken ports, with the last wait\'s error', async () => {
    let attempts = 0;
    await expect(startOnFreePorts(1, (ports) => (attempts++, server('always-taken', ports[0]!, true)), (ports, p) => listening(p, ports[0]!))).rejects.toThrow(/always-taken exited \(1\) before always-taken listening/);
    expect(attempts).toBe(3);
  });

  it('does not retry a server that failed for another reason', async () => {
    let attempts = 0;
    await expect(startOnFreePorts(1, () => {
      attempts++;
      const p = startProcess('fails', [process.execPath, '-e', 'console.error("config invalid"); process.exit(3)'], { logDir, dieWithParent: true });
      started.push(p);
      return p;
    }, (ports, p) => listening(p, ports[0]!))).rejects.toThrow(/fails exited \(3\)/);
    expect(attempts).toBe(1);
  });
});
