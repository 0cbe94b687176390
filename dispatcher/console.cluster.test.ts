// The dispatcher serving the operator console (console.enabled, the default) against the test cluster and a real
// nats-server: its entry point as the chart runs it, a Run applied with kubectl appears in the runs stream, its
// run stream carries the Run and its Kubernetes Events, the harnesses stream counts it, the page is served, and a
// cancel is refused without the API's bearer token and, with it, ends the Run Cancelled. Reads (issue 33): every
// data route refuses a request without the read token, a login gives a cookie that reads, /metrics answers on its
// own port only, and `open` is the only way to read without a credential (and it is logged).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONSOLE_PATHS, HARNESS_MESSAGES, RUNS_MESSAGES, RUN_MESSAGES } from '../shared/console.ts';
import type { RunRow } from '../shared/console.ts';
import { createNamespace, kubectl } from '../test/cluster/support.ts';
import { NatsServer, freePort } from '../test/support/nats-server.ts';
import { SseClient } from '../console/server/sse-client.test-support.ts';

const ROOT = join(import.meta.dirname, '..');
const TOKEN = 'fake-console-api-token';
const READ_TOKEN = 'fake-console-read-token';
const READ = { authorization: `Bearer ${READ_TOKEN}` };
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let dispatcher: ChildProcess | undefined;
let base: string;
let metricsBase: string;
const logs: string[] = [];

/** Resolves once the dispatcher's log says the console serves (its sources exist); rejects if it exits first. */
function consoleServing(child: ChildProcess, log: string[] = logs): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      log.push(chunk.toString());
      if (buffered.includes('operator console serving')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the dispatcher exited with ${code}: ${buffered.slice(-2000)}`)));
  });
}

/** The dispatcher's entry point as the chart runs it, on free loopback ports. */
async function startDispatcher(id: string, env: Record<string, string>, log: string[] = logs): Promise<{ child: ChildProcess; base: string; metricsBase: string }> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
    env: {
      PATH: process.env.PATH,
      KUBECONFIG: inject('kubeconfig'),
      // One Lease: a second one started here is a follower (it serves the console, claims nothing).
      TCAB_DISPATCHER_ID: id,
      TCAB_NAMESPACE: ns,
      TCAB_NATS_URL: nats.url,
      TCAB_DRIVER_IMAGE: 'example.invalid/driver:never-pulled',
      // No slot at all: a Run stays Pending (queued) until it is cancelled (gg has no key here: claimed, it would fail).
      TCAB_DISPATCHER_MAX_INFLIGHT: '0',
      TCAB_API_PORT: String(port),
      TCAB_API_HOST: '127.0.0.1',
      TCAB_METRICS_PORT: String(metricsPort),
      TCAB_API_TOKEN: TOKEN,
      // No Secret files here (the chart mounts them): the tokens from the environment.
      TCAB_API_READ_TOKEN: READ_TOKEN,
      TCAB_CONSOLE_STALLED_AFTER_SECONDS: '90',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await consoleServing(child, log);
  return { child, base: `http://127.0.0.1:${port}`, metricsBase: `http://127.0.0.1:${metricsPort}` };
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('console'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  ({ child: dispatcher, base, metricsBase } = await startDispatcher('console', {}));
});

afterEach(() => SseClient.closeAll());

afterAll(async () => {
  dispatcher?.kill('SIGKILL');
  await nats?.stop();
  await removeNs();
});

const rowsOf = (client: SseClient): RunRow[] => [
  ...client.data('snapshot').flatMap((d) => RUNS_MESSAGES.snapshot.parse(d).rows),
  ...client.data('upsert').flatMap((d) => RUNS_MESSAGES.upsert.parse(d).rows),
];

describe('the dispatcher serves the operator console', () => {
  it('serves the app on / and the deep-link paths', async () => {
    for (const path of ['/', '/runs', `/runs/${ns}/x`, '/harnesses']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('/console/app.js');
    }
    const js = await fetch(`${base}${CONSOLE_PATHS.appJs}`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(1000);
  });

  it('a Run applied with kubectl shows in the runs, run and harnesses streams; cancel needs the token and ends it Cancelled', async () => {
    const runs = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, READ);
    await runs.waitFor((f) => f.event === 'snapshot');
    expect(RUNS_MESSAGES.snapshot.parse(runs.data('snapshot')[0]).stalledAfterSeconds).toBe(90);
    const harnesses = await SseClient.open(`${base}${CONSOLE_PATHS.harnessesStream}`, READ);
    await harnesses.waitFor((f) => f.event === 'snapshot');
    expect(HARNESS_MESSAGES.snapshot.parse(harnesses.data('snapshot')[0]).rows.map((r) => r.slug)).toContain('gg');

    const manifest = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'watched', namespace: ns }, spec: { harness: 'gg', model: 'gg-test-model', prompt: 'count the files' } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(manifest))).code).toBe(0);
    const key = `${ns}/watched`;
    await runs.waitFor(() => rowsOf(runs).some((r) => r.key === key));
    expect(rowsOf(runs).find((r) => r.key === key)).toMatchObject({ namespace: ns, name: 'watched', harness: 'gg', model: 'gg-test-model' });
    expect(rowsOf(runs).find((r) => r.key === key)?.phase).toBe('Pending');
    // Queued for its harness, with the readiness the claim pass would judge (gg has no key in this namespace).
    await harnesses.waitFor(() => harnesses.data('upsert').some((d) => HARNESS_MESSAGES.upsert.parse(d).rows.some((r) => r.slug === 'gg' && r.queued === 1)));
    const gg = harnesses.data('upsert').flatMap((d) => HARNESS_MESSAGES.upsert.parse(d).rows).findLast((r) => r.slug === 'gg')!;
    expect(gg.readiness.ready).toBe(false);
    expect(gg.readiness.missing.join(' ')).toMatch(/credentials\.apiKeys/);

    const run = await SseClient.open(`${base}${CONSOLE_PATHS.runStream(ns, 'watched')}`, READ);
    await run.waitFor((f) => f.event === 'run');
    const first = RUN_MESSAGES.run.parse(run.data('run')[0]);
    expect(first.row.key).toBe(key);
    expect(first.spec).toMatchObject({ harness: 'gg', prompt: 'count the files' });
    await run.waitFor((f) => f.event === 'kube-events');

    const cancel = (headers: Record<string, string>) => fetch(`${base}${CONSOLE_PATHS.cancel(ns, 'watched')}`, { method: 'POST', headers });
    expect((await cancel({})).status).toBe(401);
    expect((await cancel({ authorization: 'Bearer wrong-token' })).status).toBe(401);
    expect((await cancel(READ)).status).toBe(401); // the read token reads, never writes
    const spec = JSON.parse((await kubectl(['get', 'run', 'watched', '-n', ns, '-o', 'jsonpath={.spec}'])).stdout) as { cancel?: boolean };
    expect(spec.cancel).toBeUndefined();

    expect((await cancel({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    await runs.waitFor(() => rowsOf(runs).some((r) => r.key === key && r.phase === 'Cancelled'));
    await run.waitFor(() => run.data('run').some((d) => RUN_MESSAGES.run.parse(d).status?.phase === 'Cancelled'));
    // The dispatcher's own Event of the transition reaches the run stream (a watch by involvedObject.uid).
    await run.waitFor(() => run.data('kube-events').some((d) => RUN_MESSAGES['kube-events'].parse(d).items.length > 0));
    expect(rowsOf(runs).find((r) => r.key === key && r.phase === 'Cancelled')?.outcome).toBe('cancelled');
  });

  it('every data read needs the read token (or the write token): the streams, the ATIF download, GET /harness-config; the page shell and the probes do not', async () => {
    for (const path of [CONSOLE_PATHS.runsStream, CONSOLE_PATHS.harnessesStream, CONSOLE_PATHS.runStream(ns, 'watched'), CONSOLE_PATHS.atif(ns, 'watched'), '/harness-config']) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token' }]) {
        const res = await fetch(`${base}${path}`, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(await res.text()).not.toContain('count the files'); // the prompt
      }
    }
    expect((await fetch(`${base}/harness-config`, { headers: READ })).status).toBe(200);
    expect((await fetch(`${base}/harness-config`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    for (const path of ['/', '/runs', '/harnesses', CONSOLE_PATHS.appJs, '/healthz', '/readyz']) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
  });

  it('a login with the read token gives a session cookie the streams accept; a wrong token gives none', async () => {
    const wrong = await fetch(`${base}${CONSOLE_PATHS.session}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'not-it' }) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const res = await fetch(`${base}${CONSOLE_PATHS.session}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: READ_TOKEN }) });
    expect(res.status).toBe(200);
    const [cookie] = res.headers.getSetCookie();
    expect(cookie).toMatch(/^tcab_console_session=[rw]\.\d+\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
    const runs = await SseClient.open(`${base}${CONSOLE_PATHS.runsStream}`, { cookie: cookie!.split(';')[0]! });
    await runs.waitFor((f) => f.event === 'snapshot');
  });

  it('/metrics answers on the metrics port without a credential, and not on the API port', async () => {
    const metrics = await fetch(`${metricsBase}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# TYPE tcab_\w+ (counter|gauge|histogram)$/m);
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: READ })).status).toBe(404);
    // And the metrics port serves no data.
    expect((await fetch(`${metricsBase}${CONSOLE_PATHS.runsStream}`)).status).toBe(404);
  });

  it('no token in the dispatcher\'s log', () => {
    const text = logs.join('');
    expect(text).toContain('serving the HTTP API');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(READ_TOKEN);
  });

  it('console.auth.mode=open: reads need nothing, and the dispatcher says so at start', async () => {
    const log: string[] = [];
    const open = await startDispatcher('console-open', { TCAB_CONSOLE_AUTH_MODE: 'open' }, log);
    try {
      const runs = await SseClient.open(`${open.base}${CONSOLE_PATHS.runsStream}`);
      await runs.waitFor((f) => f.event === 'snapshot');
      expect(log.join('')).toMatch(/"level":"warn".*console\.auth\.mode is open: anyone who reaches the API port reads every Run/);
      // Writes still need the write token.
      expect((await fetch(`${open.base}${CONSOLE_PATHS.cancel(ns, 'watched')}`, { method: 'POST' })).status).toBe(401);
    } finally {
      open.child.kill('SIGKILL');
    }
  });
});
