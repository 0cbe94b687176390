// A dispatcher started before its NATS is reachable stays up and not ready, and becomes ready once NATS comes:
// the chart's bundled NATS cannot start until the dispatcher has created the NATS auth Secret, so a dispatcher
// that exited on a failed first connect was restarted (twice per replica on the real node) before an install settled.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, kubectl } from '../test/cluster/support.ts';
import { NatsServer, freePort } from '../test/support/nats-server.ts';
import { pollUntil } from '../test/support/poll.ts';

const ROOT = join(import.meta.dirname, '..');
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let dispatcher: ChildProcess | undefined;

interface Readiness {
  status: number;
  body: { ready: boolean; nats: string };
}

async function readyz(port: number): Promise<Readiness | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: res.status, body: (await res.json()) as Readiness['body'] };
  } catch {
    return undefined; // not listening (yet, or any more)
  }
}

/** Polls /readyz until `done` holds, failing early if the dispatcher process ends. */
async function readinessUntil(port: number, done: (r: Readiness) => boolean, timeoutMs: number): Promise<Readiness> {
  let last: Readiness | undefined;
  return pollUntil('the readiness', async () => {
    last = await readyz(port);
    return last && done(last) ? last : undefined;
  }, {
    timeoutMs,
    giveUp: () => (dispatcher!.exitCode !== null ? `the dispatcher exited with ${dispatcher!.exitCode}` : undefined),
    detail: () => `last: ${JSON.stringify(last)}`,
  });
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('first-connect'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  await nats.stop(); // its port is now known and nothing listens on it
});

afterAll(async () => {
  dispatcher?.kill('SIGKILL');
  await nats?.stop();
  await removeNs();
});

describe('dispatcher first NATS connect', () => {
  it('waits, alive and not ready, for a NATS that is not up yet, then becomes ready without a restart', async () => {
    const port = await freePort();
    dispatcher = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: inject('kubeconfig'),
        TCAB_DISPATCHER_ID: 'first-connect',
        TCAB_NAMESPACE: ns,
        TCAB_NATS_URL: nats.url,
        TCAB_DRIVER_IMAGE: 'example.invalid/driver:never-pulled',
        TCAB_API_PORT: String(port),
        TCAB_API_HOST: '127.0.0.1',
        TCAB_API_TOKEN: 'fake-api-token',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    dispatcher.stderr!.resume();
    const waiting = await readinessUntil(port, () => true, 60_000);
    expect(waiting).toMatchObject({ status: 503, body: { ready: false, nats: 'disconnected' } });

    await nats.resume();
    const ready = await readinessUntil(port, (r) => r.status === 200, 60_000);
    expect(ready.body).toMatchObject({ ready: true, nats: 'connected' });
    expect(dispatcher.exitCode).toBeNull();
  });
});
