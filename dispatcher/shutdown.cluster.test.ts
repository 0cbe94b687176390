// SIGTERM to the leading dispatcher (real `tcab-dispatcher` processes on the host, a real nats-server, the test
// control plane's Lease): the process ends on its own, well inside a Pod's 30 s grace period, with the Lease handed
// to the other replica. Before, `helm uninstall --wait` took 34 s and `helm upgrade` kept the old Pod ~30 s: the
// NATS drain in the SIGTERM path never ended once the bundled NATS (deleted by the same uninstall) stopped
// answering, and fastify's close() waits for every request in flight, so the kubelet had to SIGKILL.
// The Lease lasts 60 s here: a successor within 15 s is the release working, not the Lease expiring.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { V1Lease } from '@kubernetes/client-node';
import { NatsServer, freePort } from '../test/support/nats-server.ts';
import { createNamespace, kubectl, waitFor } from '../test/cluster/support.ts';

const ROOT = join(import.meta.dirname, '..');
const TOKEN = 'fake-api-token';
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
const replicas = new Map<string, { child: ChildProcess; port: number; log: () => string }>();
const sockets: Socket[] = [];

async function startReplica(identity: string): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
    env: {
      PATH: process.env.PATH,
      KUBECONFIG: inject('kubeconfig'),
      TCAB_DISPATCHER_ID: identity,
      TCAB_NAMESPACE: ns,
      TCAB_NATS_URL: nats.url,
      TCAB_DRIVER_IMAGE: 'registry.invalid/driver:never-pulled', // no Run is applied: no Pod is ever made
      TCAB_API_PORT: String(port),
      TCAB_API_HOST: '127.0.0.1',
      TCAB_API_TOKEN: TOKEN,
      TCAB_LEASE_DURATION_SECONDS: '60',
      TCAB_LEASE_RETRY_MS: '1000',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  replicas.set(identity, { child, port, log: () => log });
  // Serving: its API answers.
  await waitForLog(identity, 'serving the HTTP API');
}

function waitForLog(identity: string, text: string): Promise<void> {
  const { child, log } = replicas.get(identity)!;
  if (log().includes(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onData = () => {
      if (!log().includes(text)) return;
      child.stderr!.off('data', onData);
      resolve();
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`dispatcher exited ${code} before "${text}": ${log()}`)));
  });
}

const holder = async () => (await kubectl(['get', 'lease', 'tcab-dispatcher', '-n', ns, '-o', 'jsonpath={.spec.holderIdentity}'])).stdout;
const holding = (identity: string, timeoutMs: number) => waitFor<V1Lease>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, (items) => items.some((l) => l.metadata?.name === 'tcab-dispatcher' && l.spec?.holderIdentity === identity), timeoutMs);

/** API connections a client holds open on the replica: an idle keep-alive one and a request whose body never comes. */
async function holdConnections(port: number): Promise<Socket[]> {
  const idle = connect(port, '127.0.0.1');
  await once(idle, 'connect');
  idle.resume();
  idle.write('GET /healthz HTTP/1.1\r\nhost: dispatcher\r\nconnection: keep-alive\r\n\r\n');
  await once(idle, 'data'); // answered; the connection stays open (keep-alive)
  const slow = connect(port, '127.0.0.1');
  await once(slow, 'connect');
  slow.resume();
  slow.write(`POST /harness-config/gg HTTP/1.1\r\nhost: dispatcher\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"maxPar`);
  sockets.push(idle, slow);
  return [idle, slow];
}

/** SIGTERM; resolves with the exit code, or fails if the process is still there after 10 s. */
async function terminate(identity: string): Promise<number | null> {
  const { child, log } = replicas.get(identity)!;
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${identity} still running 10 s after SIGTERM: ${log()}`)), 10_000);
  });
  try {
    const [code] = await Promise.race([exited, stuck]);
    return code;
  } finally {
    clearTimeout(timer);
    replicas.delete(identity);
  }
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('shutdown'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const { child } of replicas.values()) child.kill('SIGKILL');
  await nats?.dispose();
  await removeNs?.();
});

describe('dispatcher SIGTERM', () => {
  it('the leader, holding open API connections, exits 0 on its own within 10 s and hands the Lease to the other replica', async () => {
    await startReplica('first');
    await holding('first', 30_000);
    await startReplica('second');
    expect(await holder()).toBe('first');
    const [idle, slow] = await holdConnections(replicas.get('first')!.port);
    const log = replicas.get('first')!.log;
    const closed = [once(idle!, 'close'), once(slow!, 'close')];

    expect(await terminate('first')).toBe(0);
    expect(log()).toMatch(/shutdown: release the Lease done/);
    await Promise.all(closed); // the server ended both connections; they did not hold it up
    await holding('second', 15_000);
  }, 120_000);

  it('the leader exits as promptly when NATS no longer answers (the bundled NATS deleted by the same helm uninstall)', async () => {
    await startReplica('third');
    expect(await holder()).toBe('second');
    await holdConnections(replicas.get('second')!.port);
    nats.freeze();
    try {
      expect(await terminate('second')).toBe(0);
      await holding('third', 15_000);
    } finally {
      nats.freeze(false);
    }
  }, 120_000);
});
