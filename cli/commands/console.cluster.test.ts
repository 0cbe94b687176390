// `tcab console` against the test cluster (a kubeconfig) and a real nats-server: a Run applied with kubectl shows in
// the runs stream with the activity of its stream, a cap set from the console is written as a HarnessConfig and
// shows on the harnesses stream, cancel patches spec.cancel; writes without the token are refused. A token not
// given is generated and printed once, with a login URL carrying it in the fragment. Reads need a credential too
// (issue 33): the write token, or a read-only --read-token that cannot write.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONSOLE_PATHS, HARNESS_MESSAGES, RUNS_MESSAGES } from '../../shared/console.ts';
import type { RunRow } from '../../shared/console.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { eventEnvelope } from '../../nats/envelope.ts';
import { RunPublisher } from '../../nats/publisher.ts';
import { natsSettings } from '../../nats/settings.ts';
import { createNamespace, kubectl } from '../../test/cluster/support.ts';
import { NatsServer, freePort } from '../../test/support/nats-server.ts';
import { SseClient } from '../../console/server/sse-client.test-support.ts';
import { READINESS_UNKNOWN } from './console-sources.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const TOKEN = 'fake-workstation-console-token';
const READ_TOKEN = 'fake-workstation-console-read-token';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
const children: ChildProcess[] = [];

/** Starts `tcab console`; resolves with its URL and what it printed once it listens. */
async function startConsole(env: Record<string, string>, namespaced = true, args: string[] = []): Promise<{ url: string; stderr: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), 'console', '--port', String(port), '--kubeconfig', inject('kubeconfig'), ...(namespaced ? ['--namespace', ns] : []), '--nats', nats.url, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // The lines come in one write: the login line is there once the first is.
      if (stderr.includes('tcab console: http')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`tcab console exited with ${code}: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stderr: () => stderr };
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('tcab-console'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
});

afterEach(() => SseClient.closeAll());

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await kubectl(['delete', 'harnessconfig', 'kilo', '--ignore-not-found']);
  await nats?.dispose();
  await removeNs();
});

const rowsOf = (client: SseClient): RunRow[] => [
  ...client.data('snapshot').flatMap((d) => RUNS_MESSAGES.snapshot.parse(d).rows),
  ...client.data('upsert').flatMap((d) => RUNS_MESSAGES.upsert.parse(d).rows),
];

describe('tcab console', () => {
  it('without --namespace shows the Runs of every namespace, and prints a generated write token once when none is given, with a login URL', async () => {
    const { url, stderr } = await startConsole({}, false);
    expect(stderr()).toMatch(/Runs of every namespace/);
    const generated = /write token \(cancel, caps\): ([A-Za-z0-9_-]{32})\n/.exec(stderr())?.[1];
    expect(generated).toBeDefined();
    expect(stderr()).toContain(`tcab console: log in: ${url}/#token=${generated}\n`);
    // Reads need it too: without it the streams are refused.
    await expect(SseClient.open(`${url}${CONSOLE_PATHS.runsStream}`)).rejects.toThrow('HTTP 401');
    const runs = await SseClient.open(`${url}${CONSOLE_PATHS.runsStream}`, bearer(generated!));
    await runs.waitFor((f) => f.event === 'snapshot');
    const manifest = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'anywhere', namespace: ns }, spec: { harness: 'gg', model: 'gg-test-model', prompt: 'hi' } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(manifest))).code).toBe(0);
    await runs.waitFor(() => rowsOf(runs).some((r) => r.key === `${ns}/anywhere`));
    children.pop()!.kill('SIGTERM');
  });

  it('shows a kubectl-applied Run with its stream activity; caps and cancel need the token and reach the cluster', async () => {
    const { url, stderr } = await startConsole({ TCAB_CONSOLE_TOKEN: TOKEN });
    expect(stderr()).not.toContain(TOKEN);
    const runs = await SseClient.open(`${url}${CONSOLE_PATHS.runsStream}`, bearer(TOKEN));
    await runs.waitFor((f) => f.event === 'snapshot');
    const manifest = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'seen', namespace: ns }, spec: { harness: 'gg', model: 'gg-test-model', prompt: 'list the files' } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(manifest))).code).toBe(0);
    const key = `${ns}/seen`;
    await runs.waitFor(() => rowsOf(runs).some((r) => r.key === key));

    // An event on the run's subjects becomes its activity (no dispatcher here: published as a driver would).
    const publisher = await RunPublisher.connect(natsSettings(nats.url));
    await publisher.ensureStream();
    const event: HarnessEvent = { type: 'command', timestamp: new Date().toISOString(), command: 'ls -la' };
    await publisher.publish(eventEnvelope(`${ns}_seen`, 'attempt', 1, event), JSON.stringify(event));
    await publisher.close();
    await runs.waitFor(() => rowsOf(runs).some((r) => r.key === key && r.activity?.text === 'command: ls -la'));

    const harnesses = await SseClient.open(`${url}${CONSOLE_PATHS.harnessesStream}`, bearer(TOKEN));
    await harnesses.waitFor((f) => f.event === 'snapshot');
    // Readiness depends on the dispatcher's Secrets: from a workstation it is unknown, said as such, never "not ready".
    const listed = HARNESS_MESSAGES.snapshot.parse(harnesses.data('snapshot')[0]).rows;
    expect(listed.length).toBeGreaterThan(1);
    expect(listed.every((r) => !r.readiness.ready && r.readiness.missing.length === 0 && r.readiness.unknown === READINESS_UNKNOWN)).toBe(true);
    const setCap = (headers: Record<string, string>) => fetch(`${url}${CONSOLE_PATHS.harnessConfig('kilo')}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ maxParallelism: 1 }) });
    expect((await setCap({})).status).toBe(401);
    expect((await setCap({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await kubectl(['get', 'harnessconfig', 'kilo', '-o', 'jsonpath={.spec.maxParallelism}'])).stdout).toBe('1');
    await harnesses.waitFor(() => harnesses.data('upsert').some((d) => HARNESS_MESSAGES.upsert.parse(d).rows.some((r) => r.slug === 'kilo' && r.maxParallelism === 1 && !r.default)));

    const cancel = (headers: Record<string, string>) => fetch(`${url}${CONSOLE_PATHS.cancel(ns, 'seen')}`, { method: 'POST', headers });
    expect((await cancel({ authorization: 'Bearer not-it' })).status).toBe(401);
    expect((await kubectl(['get', 'run', 'seen', '-n', ns, '-o', 'jsonpath={.spec.cancel}'])).stdout).toBe('');
    expect((await cancel({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await kubectl(['get', 'run', 'seen', '-n', ns, '-o', 'jsonpath={.spec.cancel}'])).stdout).toBe('true');
    expect((await cancel({ authorization: `Bearer ${TOKEN}` }).then((r) => r.status))).toBe(200); // idempotent
    expect((await fetch(`${url}${CONSOLE_PATHS.cancel(ns, 'missing')}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it('--read-token reads (streams, GET /harness-config) and cannot write; nothing reads without a credential', async () => {
    const { url, stderr } = await startConsole({ TCAB_CONSOLE_TOKEN: TOKEN }, true, ['--read-token', READ_TOKEN]);
    expect(stderr()).not.toContain(READ_TOKEN);
    for (const path of [CONSOLE_PATHS.runsStream, CONSOLE_PATHS.harnessesStream, CONSOLE_PATHS.runStream(ns, 'seen'), CONSOLE_PATHS.atif(ns, 'seen'), '/harness-config']) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(401);
    }
    const runs = await SseClient.open(`${url}${CONSOLE_PATHS.runsStream}`, bearer(READ_TOKEN));
    await runs.waitFor((f) => f.event === 'snapshot');
    expect((await fetch(`${url}/harness-config`, { headers: bearer(READ_TOKEN) })).status).toBe(200);
    expect((await fetch(`${url}${CONSOLE_PATHS.harnessConfig('kilo')}`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(READ_TOKEN) }, body: '{"maxParallelism":3}' })).status).toBe(401);
    expect((await fetch(`${url}${CONSOLE_PATHS.cancel(ns, 'anywhere')}`, { method: 'POST', headers: bearer(READ_TOKEN) })).status).toBe(401);
    expect((await kubectl(['get', 'run', 'anywhere', '-n', ns, '-o', 'jsonpath={.spec.cancel}'])).stdout).toBe('');
  });
});
