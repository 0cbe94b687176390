// An HTTP gate on the host's loopback: every GET is held open until the test releases the gate, so a command a
// scripted model asked for (`node -e "fetch(<gate>)"` in a driver Pod) keeps its run mid-session for exactly as
// long as the test needs; the test learns that a command is waiting from the gate itself, never from a sleep.
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Gate {
  url: string;
  /** Requests held now (a caller that went away, e.g. a cancelled Pod, is no longer counted). */
  readonly waiting: number;
  /** Resolves once at least `n` requests are held. */
  untilWaiting(n: number, signal?: AbortSignal): Promise<void>;
  /** Resolves once `done(waiting)` holds (checked now and at every change). */
  until(done: (waiting: number) => boolean, signal?: AbortSignal): Promise<void>;
  /** Answers every held request (200 "open"); later requests are held again. */
  release(): number;
  close(): Promise<void>;
}

export async function startGate(): Promise<Gate> {
  const held = new Set<ServerResponse>();
  const changes = new EventEmitter();
  const server = createServer((req, res) => {
    held.add(res);
    res.on('close', () => {
      held.delete(res);
      changes.emit('change');
    });
    changes.emit('change');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const until = async (done: (waiting: number) => boolean, signal?: AbortSignal) => {
    while (!done(held.size)) await once(changes, 'change', { signal });
  };
  return {
    url: `http://127.0.0.1:${port}`,
    get waiting() {
      return held.size;
    },
    until,
    untilWaiting: (n, signal) => until((waiting) => waiting >= n, signal),
    release() {
      const n = held.size;
      for (const res of [...held]) {
        held.delete(res);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('open\n');
      }
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
