// Supply faults on the real node (issue 35, part 4): the registries a Run needs answer 503 for a while, and the
// dispatcher's retries carry the Run past it. The dispatcher runs as a host process (dispatcher/main.ts) against the
// suite's cluster, with a host NATS and real driver Pods, as in chaos-soak.test.ts.
//   A. The npm registry (or the cluster's npm cache) down: a stub registry on the host answers 503 to everything
//      until the test flips it, then serves a tiny fake `@anthropic-ai/claude-code` (a packument and a tarball whose
//      bin prints a version for the probe and fails any session). The first attempt's install fails on npm's E503
//      (the driver marks it retryable), the dispatcher retries it (InstallFailed), the next attempt installs; its
//      session then fails (not the real CLI), a harness failure, which is never retried. A second Run meets the
//      issue's own wording: the registry down for a fixed 30 s from the Run's creation.
//   B. The image registry answering 503: containerd pulls the driver image under a second registry name whose
//      hosts.toml points at a proxy inside the node's namespace (flaky-registry.ts) that answers 503 while down and
//      forwards to the node's registry while up. Attempts end ImagePullFailed and are retried until the proxy is up;
//      a later attempt pulls and the gg Run succeeds.
// The flips follow the Run (its first attempt ended, seen on a watch), never a timer; each outage's cost is printed.
// Measured (three runs, load 4-10, ~110-130 s of tests): npm retries a 503 itself (fetch-retries 2: 10 s, then 60 s
// later), so an attempt's install fails 71-73 s after it began; A's attempt 1 end -> attempt 2 installed 2.6-5.3 s.
// The 30 s outage never reached the dispatcher: npm's first request came 6-28 s after the Run's creation, its second
// 10 s later, and whichever request came after the outage installed, in attempt 1: 8-59 s after the outage ended
// (38-89 s after the creation). B: attempt 1 ended ImagePullFailed 6-15 s after the creation (3 s pull grace),
// the next attempt's image pulled 5-15 s after that, Succeeded 19-29 s after the creation.
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import type { StreamItem } from '../../nats/reader.ts';
import type { RunResult } from '../../shared/run.ts';
import { NatsServer, freePort } from '../support/nats-server.ts';
import { ggDriverEnv } from './gg-driver-env.ts';
import { copyImageInRegistry, onThisNode, podUrl, realNode } from './real-node-context.ts';
import { createNamespace, kubectl, readRunUntil, waitFor } from './support.ts';
import { startFlakyRegistry } from './flaky-registry-process.ts';
import type { FlakyRegistryProcess } from './flaky-registry-process.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
/** Claude Code: the npm harness with the fewest moving parts (one package, no platform package, no postinstall). */
const NPM_PACKAGE = '@anthropic-ai/claude-code';
const FAKE_VERSION = '2.1.999';
/** The second name the node's containerd knows the registry by: served by the flaky proxy. */
const FLAKY_REGISTRY = 'flaky.tcab.test:5000';

let stub: StubModelServer;
let work: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'echo hi from the pod' } } }, { text: 'All done.' }] } });
  work = mkdtempSync(join(tmpdir(), 'tcab-supply-faults-'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  await stub?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Fault {
  ns: string;
  /** A NATS of its own: the dispatcher's durable results consumer is one per NATS (as in an install). */
  nats: NatsServer;
}

/** A namespace (the chart's driver NetworkPolicy in it) with a fake provider key, and a NATS; gone in afterAll. */
async function fault(prefix: string): Promise<Fault> {
  const { name, remove } = await createNamespace(prefix);
  cleanups.push(remove);
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', name, '--from-literal=anthropic=sk-ant-fake-supply-0000']);
  const nats = await NatsServer.start();
  cleanups.push(() => nats.stop());
  return { ns: name, nats };
}

interface HostDispatcher {
  logs: string[];
  stop(): Promise<void>;
}

/** dispatcher/main.ts as a host process leading `namespace`: gg driver env plus `overrides`, a 1 s back-off. */
async function startDispatcher({ ns: namespace, nats }: Fault, overrides: Record<string, string> = {}): Promise<HostDispatcher> {
  const forPods = await ggDriverEnv({ namespace, natsUrl: nats.url, stubUrl: stub.url });
  const child = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
    env: {
      ...forPods,
      TCAB_DRIVER_NATS_URL: forPods.TCAB_NATS_URL,
      PATH: process.env.PATH,
      KUBECONFIG: inject('kubeconfig'),
      TCAB_DISPATCHER_ID: `supply-${namespace}`,
      // The dispatcher (a host process) reaches NATS on loopback; its driver Pods, through the node's bridge.
      TCAB_NATS_URL: nats.url,
      TCAB_API_PORT: String(await freePort()),
      TCAB_API_HOST: '127.0.0.1',
      TCAB_API_TOKEN: 'fake-api-token',
      TCAB_LEASE_DURATION_SECONDS: '5',
      TCAB_LEASE_RETRY_MS: '1000',
      TCAB_RESULT_GRACE_SECONDS: '10',
      TCAB_RETRY_BACKOFF_SECONDS: '1',
      TCAB_RETRY_BACKOFF_MAX_SECONDS: '2',
      ...overrides,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => logs.push(line));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };
  cleanups.push(stop);
  return { logs, stop };
}

const runsPath = (namespace: string) => `/apis/tcab.dev/v1alpha1/namespaces/${namespace}/runs`;
const runOf = (namespace: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace }, spec });

/** The Run once `done` holds for it (a watch, not a poll). */
async function runWhen(namespace: string, name: string, done: (run: RunObject) => boolean, ms: number): Promise<RunObject> {
  const runs = await waitFor<RunObject>(runsPath(namespace), (all) => all.some((r) => r.metadata?.name === name && done(r)), ms);
  return runs.find((r) => r.metadata?.name === name)!;
}
const firstAttemptEnded = (r: RunObject) => r.status?.attempts?.[0]?.completionTime !== undefined || isFinal(r.status ?? {});
const final = (r: RunObject) => isFinal(r.status ?? {});

/** The run's stream until the result of attempt `last` (every attempt's events and results). */
function streamOf({ ns: namespace, nats }: Fault, name: string, last: number): Promise<StreamItem[]> {
  return readRunUntil(nats.url, `${namespace}_${name}`, (items) => items.some((i) => i.kind === 'result' && i.result.attempt?.number === last), 60_000);
}
const resultOf = (items: StreamItem[], attempt: number): RunResult | undefined => items.flatMap((i) => (i.kind === 'result' && i.result.attempt?.number === attempt ? [i.result] : []))[0];
/** The time (ms) of attempt `attempt`'s system event stage:status, if it has one. */
function stageAt(items: StreamItem[], attempt: number, stage: string, status: string): number | undefined {
  const found = items.find((i) => i.kind === 'event' && (i.attempt ?? 1) === attempt && i.event.type === 'system' && i.event.stage === stage && i.event.status === status);
  return found?.kind === 'event' ? Date.parse(found.event.timestamp) : undefined;
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// --- A: the npm registry --------------------------------------------------------------------------------------

interface NpmStub {
  /** As the host reaches it (podUrl makes it a Pod's). */
  url: string;
  served: { at: number; url: string; status: number }[];
}

/**
 * A fake `@anthropic-ai/claude-code` release: package.json naming the bin, and a cli.js that prints a version for
 * the probe (`claude --version`) and fails anything else (a session), so it never talks to any model.
 * Built once: the two npm tests run concurrently, and building it twice in one directory let one test read the
 * tarball while the other's tar was rewriting it (served truncated: npm failed TAR_BAD_ARCHIVE / ENODATA).
 */
let fakeTarball: Promise<Buffer> | undefined;
const fakeHarnessTarball = (): Promise<Buffer> => (fakeTarball ??= buildFakeHarnessTarball());
async function buildFakeHarnessTarball(): Promise<Buffer> {
  const dir = join(work, 'fake-package');
  mkdirSync(join(dir, 'package'), { recursive: true });
  writeFileSync(join(dir, 'package', 'package.json'), `${JSON.stringify({ name: NPM_PACKAGE, version: FAKE_VERSION, bin: { claude: 'cli.js' }, license: 'UNLICENSED' }, null, 2)}\n`);
  writeFileSync(join(dir, 'package', 'cli.js'), [
    '#!/usr/bin/env node',
    `if (process.argv.includes('--version')) { console.log('${FAKE_VERSION} (Claude Code)'); process.exit(0); }`,
    "console.error('not Claude Code: a stand-in package from the supply-faults test registry, it runs no session');",
    'process.exit(1);',
    '',
  ].join('\n'));
  chmodSync(join(dir, 'package', 'cli.js'), 0o755);
  const tarball = join(dir, 'package.tgz');
  await exec('tar', ['-czf', tarball, '--owner=0', '--group=0', '--numeric-owner', '-C', dir, 'package']);
  return readFileSync(tarball);
}

/** The registry stub on 127.0.0.1: 503 to everything while `isUp()` is false; the packument and tarball while true. */
async function startNpmStub(tarball: Buffer, isUp: () => boolean): Promise<NpmStub> {
  const tarballPath = `/${NPM_PACKAGE}/-/claude-code-${FAKE_VERSION}.tgz`;
  const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
  const shasum = createHash('sha1').update(tarball).digest('hex');
  const served: NpmStub['served'] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    const answer = (status: number, type: string, body: string | Buffer) => {
      served.push({ at: Date.now(), url, status });
      res.writeHead(status, { 'content-type': type }).end(body);
    };
    if (!isUp()) return answer(503, 'text/plain', 'registry unavailable\n');
    if (url === tarballPath) return answer(200, 'application/octet-stream', tarball);
    if (decodeURIComponent(url.slice(1).split('?')[0]!) !== NPM_PACKAGE) return answer(404, 'application/json', '{"error":"Not found"}');
    // The tarball's URL as the client named this registry (a Pod reaches it through the node's bridge).
    const now = new Date().toISOString();
    const dist = { tarball: `http://${req.headers.host}${tarballPath}`, integrity, shasum };
    return answer(200, 'application/json', JSON.stringify({
      _id: NPM_PACKAGE,
      name: NPM_PACKAGE,
      'dist-tags': { latest: FAKE_VERSION },
      versions: { [FAKE_VERSION]: { name: NPM_PACKAGE, version: FAKE_VERSION, bin: { claude: 'cli.js' }, dist } },
      time: { created: now, modified: now, [FAKE_VERSION]: now },
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, served };
}

/** A dispatcher whose driver Pods install from `registry` (a Pod-reachable URL), with the gg driver env. */
async function npmDispatcher(f: Fault, registry: string): Promise<HostDispatcher> {
  const gg = await ggDriverEnv({ namespace: f.ns, natsUrl: f.nats.url, stubUrl: stub.url });
  const driverEnv = { ...(JSON.parse(gg.TCAB_DRIVER_ENV!) as Record<string, string>), TCAB_NPM_REGISTRY: registry };
  return startDispatcher(f, { TCAB_DRIVER_ENV: JSON.stringify(driverEnv) });
}

const claudeRun = (namespace: string, name: string) => runOf(namespace, name, { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 300, retries: 3 });

/** What every install-fault Run ends with: the attempt that installed ran a session that failed, never retried. */
function expectHarnessFailureNotRetried(run: RunObject, installed: number, logs: string[]) {
  const status = run.status!;
  const attempts = status.attempts!;
  const context = `${JSON.stringify(status, null, 2)}\n${logs.slice(-40).join('\n')}`;
  expect(attempts.length, context).toBe(installed);
  const last = attempts.at(-1)!;
  expect(last.retried, context).toBeFalsy();
  expect(last.outcome, context).not.toBe('infrastructure_failed');
  expect(last.outcome, context).not.toBe('succeeded');
  expect(status, context).toMatchObject({ phase: 'Failed', outcome: last.outcome, harnessVersion: FAKE_VERSION });
  expect(status.nextAttemptTime, context).toBeUndefined();
  // Why no attempt follows: the Run is Finished with the harness's failure, and a Run that was tried again says in
  // its Retrying condition that this outcome is never retried (one never tried again has no Retrying condition).
  const conditions = status.conditions!;
  expect(conditions, context).toContainEqual(expect.objectContaining({ type: 'Finished', reason: last.outcome }));
  const retrying = conditions.find((c) => c.type === 'Retrying');
  if (installed === 1) expect(retrying, context).toBeUndefined();
  else expect(retrying, context).toMatchObject({ status: 'False', reason: 'NotRetryable', message: expect.stringMatching(new RegExp(`^attempt ${installed} ended ${last.outcome}, which is never retried`)) });
}

/**
 * The attempt whose install completed (the stand-in installed): every attempt before it failed on the registry and
 * was retried, and its harness failure was not. Returns its number and when its install completed.
 */
function expectInstalledAfterInstallFailures(run: RunObject, items: StreamItem[], logs: string[]): { installing: number; installedAt: number } {
  const attempts = run.status!.attempts!;
  const context = `${JSON.stringify(run.status, null, 2)}\n${logs.slice(-40).join('\n')}`;
  const installing = attempts.findIndex((a) => stageAt(items, a.number, 'install_harness', 'completed') !== undefined) + 1;
  const stages = JSON.stringify(items.map((i) => (i.kind === 'event' && i.event.type === 'system' ? `${i.attempt}:${i.event.stage}:${i.event.status}` : i.kind)));
  expect(installing, `${stages}\n${context}`).toBeGreaterThan(0);
  for (const a of attempts.slice(0, installing - 1)) expect(a, context).toMatchObject({ outcome: 'infrastructure_failed', reason: 'InstallFailed', retried: true });
  const installed = resultOf(items, installing)!;
  expect(installed.stages, context).toContainEqual(expect.objectContaining({ stage: 'install_harness', status: 'completed' }));
  expect(installed.harness_version, context).toBe(FAKE_VERSION);
  expect(installed.retryable, context).toBeUndefined();
  expectHarnessFailureNotRetried(run, installing, logs);
  return { installing, installedAt: stageAt(items, installing, 'install_harness', 'completed')! };
}

// --- B: the image registry ------------------------------------------------------------------------------------

/** flaky-registry.ts inside the node's network namespace, down, in front of the node's registry; stopped at the end. */
async function flakyRegistryOnNode(): Promise<FlakyRegistryProcess> {
  const node = realNode();
  const flaky = await startFlakyRegistry((argv) => ['nsenter', `--net=${node.netnsPath}`, '--', ...argv], node.registryInNode.split('/')[0]!);
  cleanups.push(() => flaky.close());
  return flaky;
}

describe('supply faults (real node)', () => {
  // First and alone: its 190 MB pull loads the node, and the 30 s window below needs its Pod to reach the install
  // within those 30 s. The two npm Runs then go together.
  it('the image registry answers 503 until the first attempt has ended: attempts end ImagePullFailed and are retried, a later one pulls and the gg Run succeeds', async () => {
    const node = realNode();
    const f = await fault('pull-503');
    const ns = f.ns;
    // The driver image under a repository of this test's own, so no earlier pull left it on the node.
    const repo = `driver-flaky-${randomBytes(4).toString('hex')}`;
    await copyImageInRegistry(node.images.driver, `${node.registry}/${repo}:${node.imageTag}`);
    const flaky = await flakyRegistryOnNode();
    const hostsDir = join(node.registryHostsDir, FLAKY_REGISTRY);
    mkdirSync(hostsDir, { recursive: true });
    cleanups.push(() => rmSync(hostsDir, { recursive: true, force: true }));
    const proxy = `http://127.0.0.1:${flaky.port}`;
    writeFileSync(join(hostsDir, 'hosts.toml'), `server = "${proxy}"\n\n[host."${proxy}"]\n  capabilities = ["pull", "resolve"]\n`);
    const image = `${FLAKY_REGISTRY}/tcab/${repo}:${node.imageTag}`;
    // On the node whose containerd the hosts.toml above redirects (the suite's cluster may have more: TCAB_TEST_NODES).
    const dispatcher = await startDispatcher(f, { TCAB_DRIVER_IMAGE: image, TCAB_IMAGE_PULL_GRACE_SECONDS: '3', TCAB_DRIVER_PLACEMENT: JSON.stringify({ nodeSelector: onThisNode() }) });
    const created = Date.now();
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(runOf(ns, 'pull-503', { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 300, retries: 3 })))).code).toBe(0);

    const ended = await runWhen(ns, 'pull-503', firstAttemptEnded, 300_000);
    await flaky.set('up');
    const flippedAt = Date.now();
    const context = () => `${JSON.stringify(ended.status, null, 2)}\n${dispatcher.logs.slice(-40).join('\n')}\n${flaky.lines.slice(-20).join('\n')}`;
    expect(ended.status!.attempts![0], context()).toMatchObject({ number: 1, outcome: 'infrastructure_failed', reason: 'ImagePullFailed', retried: true });

    const done = await runWhen(ns, 'pull-503', final, 300_000);
    const attempts = done.status!.attempts!;
    const doneContext = `${JSON.stringify(done.status, null, 2)}\n${dispatcher.logs.slice(-40).join('\n')}`;
    expect(done.status, doneContext).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
    expect(attempts.length, doneContext).toBeGreaterThanOrEqual(2);
    for (const a of attempts.slice(0, -1)) {
      expect(a, doneContext).toMatchObject({ outcome: 'infrastructure_failed', reason: 'ImagePullFailed', retried: true });
      // The kubelet's waiting message, carried into the attempt's message: containerd's error names the 503.
      expect(a.message, doneContext).toMatch(/503 Service Unavailable/);
    }
    expect(attempts.at(-1), doneContext).toMatchObject({ outcome: 'succeeded' });
    expect(attempts.at(-1)!.retried, doneContext).toBeFalsy();
    // Every request before the flip was answered 503; the manifest was served after it.
    const requests = flaky.requests();
    expect(requests.filter((r) => Date.parse(r.at) < flippedAt).every((r) => r.status === 503)).toBe(true);
    expect(requests.filter((r) => r.status === 503).length).toBeGreaterThan(0);
    expect(requests.some((r) => Date.parse(r.at) >= flippedAt && r.url.includes(`/v2/tcab/${repo}/manifests/`) && r.status === 200), JSON.stringify(requests)).toBe(true);
    // The kubelet's own record: Failed Events on the attempts' Pods naming the 503.
    const failedPull = (e: CoreV1Event) => e.reason === 'Failed' && /503 Service Unavailable/.test(e.message ?? '') && (e.message ?? '').includes(image);
    const events = await waitFor<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, (all) => all.some(failedPull), 60_000);
    const failedEvent = events.find(failedPull)!;
    expect(failedEvent.involvedObject.name).toMatch(/^tcab-run-pull-503/);
    // The run's stream: the kubelet's failed pulls (the dispatcher relays them as pull_image:failed, containerd's
    // 503 among them), then the pull that came, after the proxy was flipped up.
    const items = await streamOf(f, 'pull-503', attempts.length);
    const pulls = items.flatMap((i) => (i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'pull_image' ? [i.event] : []));
    const shown = JSON.stringify(pulls, null, 2);
    const failedPulls = pulls.filter((e) => e.status === 'failed');
    expect(failedPulls.some((e) => /503 Service Unavailable/.test(e.message)), shown).toBe(true);
    const pulled = pulls.findLast((e) => e.status === 'completed');
    expect(pulls.indexOf(pulled!), shown).toBeGreaterThan(pulls.indexOf(failedPulls.at(-1)!));
    const lastPulled = Date.parse(pulled!.timestamp);
    // The kubelet's event times are whole seconds: the pull that came is no earlier than the second of the flip.
    expect(lastPulled, shown).toBeGreaterThanOrEqual(Math.floor(flippedAt / 1000) * 1000);

    const firstEnd = Date.parse(attempts[0]!.completionTime!);
    const succeededAt = Date.parse(done.status!.completionTime!);
    process.stderr.write(`supply faults, image registry 503 until attempt 1 ended: ${attempts.length} attempts (${requests.filter((r) => r.status === 503).length} requests answered 503), `
      + `creation -> attempt 1 ended ${seconds(firstEnd - created)}, attempt 1 end -> last attempt's image pulled ${seconds(lastPulled - firstEnd)}, flip -> pulled ${seconds(lastPulled - flippedAt)}, creation -> Succeeded ${seconds(succeededAt - created)}; kubelet said: ${failedEvent.message}\n`);
  }, 600_000);

  it.concurrent('the npm registry answers 503 until the first attempt has ended: that attempt is InstallFailed and retried, a later one installs once it is back, and its harness failure is not retried', async () => {
    const f = await fault('npm-down');
    const ns = f.ns;
    let up = false;
    const npm = await startNpmStub(await fakeHarnessTarball(), () => up);
    const dispatcher = await npmDispatcher(f, await podUrl(npm.url));
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(claudeRun(ns, 'npm-down')))).code).toBe(0);

    // The registry comes back once the first attempt has ended (the Run says so), not after a timer.
    const ended = await runWhen(ns, 'npm-down', firstAttemptEnded, 300_000);
    const context = () => `${JSON.stringify(ended.status, null, 2)}\n${dispatcher.logs.slice(-40).join('\n')}`;
    expect(ended.status!.attempts![0], context()).toMatchObject({ number: 1, outcome: 'infrastructure_failed', reason: 'InstallFailed', retried: true });
    expect(ended.status!.attempts![0]!.message, context()).toMatch(/npm error code E503/);
    up = true;
    const flippedAt = Date.now();
    const downServed = npm.served.filter((s) => s.status === 503).length;

    const done = await runWhen(ns, 'npm-down', final, 300_000);
    const items = await streamOf(f, 'npm-down', done.status!.attempts!.length);
    // Attempt 1: its driver's own result says the install failed on E503 and may be retried, before any session.
    const first = resultOf(items, 1)!;
    expect(first, JSON.stringify(items.filter((i) => i.kind === 'result'))).toMatchObject({ outcome: 'infrastructure_failed', retryable: true, sessions: [], attempt: { number: 1, of: 4 } });
    expect(first.stages).toContainEqual(expect.objectContaining({ stage: 'install_harness', status: 'failed' }));
    // On the stream too, tagged attempt 1, while the registry was still down.
    expect(stageAt(items, 1, 'install_harness', 'failed')).toBeLessThan(flippedAt);
    // A later attempt installed the stand-in (its install_harness completed, the probe read its version), then failed.
    // Usually attempt 2; but the registry is flipped when this test has seen attempt 1 end, and on a loaded machine
    // attempt 2 (back-off 1 s) can reach the registry before that: it then fails on E503 too and is retried.
    const { installing, installedAt } = expectInstalledAfterInstallFailures(done, items, dispatcher.logs);
    expect(installing).toBeGreaterThan(1);
    // Only once the registry was back.
    expect(installedAt).toBeGreaterThan(flippedAt);
    // The registry was down for every request before the flip, and the tarball was fetched after it.
    expect(downServed).toBeGreaterThan(0);
    expect(npm.served.filter((s) => s.at < flippedAt).every((s) => s.status === 503)).toBe(true);
    expect(npm.served.some((s) => s.at >= flippedAt && s.url.endsWith('.tgz') && s.status === 200)).toBe(true);

    const firstEnd = Date.parse(first.finished_at);
    const firstInstall = stageAt(items, 1, 'install_harness', 'started')!;
    process.stderr.write(`supply faults, npm registry down until attempt 1 ended: attempt 1's install failed after ${seconds(firstEnd - firstInstall)} (${downServed} requests answered 503: npm's own retries), `
      + `attempt 1 end -> attempt ${installing}'s install completed ${seconds(installedAt - firstEnd)}, flip -> installed ${seconds(installedAt - flippedAt)}, outcome of attempt ${installing} ${done.status!.outcome}\n`);
  }, 600_000);

  it.concurrent('the npm registry down for 30 s from the Run\'s creation: attempts until one installs, each one before it InstallFailed and retried', async () => {
    const f = await fault('npm-window');
    const ns = f.ns;
    let downUntil = Number.POSITIVE_INFINITY;
    const npm = await startNpmStub(await fakeHarnessTarball(), () => Date.now() >= downUntil);
    const dispatcher = await npmDispatcher(f, await podUrl(npm.url));
    const created = Date.now();
    downUntil = created + 30_000;
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(claudeRun(ns, 'npm-window')))).code).toBe(0);

    const done = await runWhen(ns, 'npm-window', final, 420_000);
    const attempts = done.status!.attempts!;
    const items = await streamOf(f, 'npm-window', attempts.length);
    const context = `${JSON.stringify(done.status, null, 2)}\n${dispatcher.logs.slice(-40).join('\n')}`;
    const { installing, installedAt } = expectInstalledAfterInstallFailures(done, items, dispatcher.logs);
    // The outage was met (requests answered 503) and nothing installed during it.
    const downServed = npm.served.filter((s) => s.status === 503);
    expect(downServed.length, `no registry request during the 30 s outage: the Pod reached its install after it ended\n${context}`).toBeGreaterThan(0);
    expect(installedAt).toBeGreaterThanOrEqual(downUntil);
    const installStarted = stageAt(items, installing, 'install_harness', 'started')!;
    process.stderr.write(`supply faults, npm registry down 30 s from the Run's creation: ${attempts.length} attempt(s), installed by attempt ${installing} `
      + `(${downServed.length} requests answered 503, ${seconds(downServed[0]!.at - created)} to ${seconds(downServed.at(-1)!.at - created)} after creation); that attempt's install took ${seconds(installedAt - installStarted)}; `
      + `outage end -> installed ${seconds(installedAt - downUntil)}, creation -> installed ${seconds(installedAt - created)}\n`);
  }, 600_000);

});
