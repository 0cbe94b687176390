// The chart as users install it, on the test suite's real node (kubelet + containerd + runc; test/cluster/
// real-node-context.ts), installed by real-chart.ts (shared with `npm run bench -- e2e`): the five images built
// from deploy/images and pushed to the node's registry, named only by `registry.tcab.test:5000/tcab/<name>:<tag>`
// values as a user names their own registry; the bundled NATS and the npm cache (Verdaccio) enabled, their volumes
// from the cluster's default StorageClass; the chart's extraCA set to this machine's proxy CA; a stub model server
// running in the cluster (a Deployment + Service of the driver image, driver/stub-models/serve.ts) that driver Pods
// reach through cluster DNS, as a real model gateway. Runs go
// `kubectl apply` -> dispatcher -> driver container -> bundled NATS -> `tcab events follow` outside the cluster (the
// NATS Service forwarded to loopback) -> Run Succeeded with usage and cost; pull_image/start_container come from
// the real kubelet's Events. The bundled NATS runs with the chart's default JWT auth (nats.auth): the dispatcher
// creates the keys at its first start, each driver gets its own run credential, and everything read from outside
// uses the read-only reader.creds of the auth Secret, as NOTES.txt tells an operator; a connection without
// credentials is refused and the reader cannot publish. The hardening is read from inside the running containers
// (the driver as root with only its listed capabilities, the harness's shell as uid 1000 that can neither read the
// driver's environment or NATS credential nor signal it). An adversarial gg Run (its workspace holds the attempts of
// test/cluster/adversary-attempts.ts, which the scripted model runs in the harness's shell) tries NATS with no
// credential (its own node script speaking the NATS protocol to the Service the driver uses: forged results for its
// own run and another, subscribe tcab.run.>, purge) and the driver's secrets; each fails, its record is its
// driver's alone, the other Run is unchanged, and its leaked credential is revoked once final. A canary API key
// appears in no event, log, status or Kubernetes Event, and every stage is timed (stages.ts).
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { CoreV1Event, V1PersistentVolume, V1Pod, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { DRIVER_CAPABILITIES, NATS_CREDS_PATH } from '../../dispatcher/pods/driver-pod.ts';
import { readRunStream } from '../../nats/reader.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { eventSubject, resultEnvelope, resultSubject } from '../../nats/envelope.ts';
import { messageHeaders } from '../../nats/publisher.ts';
import { jetstream } from '@nats-io/jetstream';
import type { RunResult } from '../../shared/run.ts';
import { clusterConfig, createNamespace, kubectl, waitFor, watchAll } from '../cluster/support.ts';
import { agentEvent, nextServerError, runResult } from '../support/nats-auth.ts';
import { pushImages, realNode } from '../cluster/real-node-context.ts';
import type { RealNodeContext } from '../cluster/real-node-context.ts';
import { LogCapture, inContainer } from './in-cluster.ts';
import { CHART, NATS_AUTH_SECRET, RELEASE, STUB_PORTS, forwardService, helmOf, installChart, proxyCa, writeReaderCreds } from './real-chart.ts';
import type { ClusterAccess } from './real-chart.ts';
import { RunTimeline, runStages } from './stages.ts';
import { ATTEMPTS, RUN_ATTEMPTS_COMMAND, adversaryFiles, natsAttempts, pub, reportsOf } from '../cluster/adversary-attempts.ts';
import type { Attempt } from '../cluster/adversary-attempts.ts';
import { driverRecord, fromDispatcher, rejectedResults, storedCount } from './run-record.ts';
import { runCredentialsSecretName } from '../../dispatcher/auth/run-credentials.ts';
import { runInboxPrefix } from '../../nats/auth/permissions.ts';
import type { StreamEvent } from './stages.ts';
import { EVALUATION_NAME, EXPECTED_VERDICTS, evaluationObject, expectCellFromResults, slotsOfEvaluation } from './evaluation-on-chart.ts';
import type { EvaluationObject } from '../../kube/resources.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const exec = promisify(execFile);
const CANARY = 'sk-ant-fake-e2e-canary-93b1';
/** An NKey seed of any kind (S + operator/account/user prefix + base32). */
const NKEY_SEED = /\bS[OAU][A-Z2-7]{56}\b/;

// Read by the gg harness's shell tool inside the driver container (its output goes back to the stub model, which
// lists it at /_stub/tool-results). /proc/1 is the driver process itself (the container's PID namespace); the shell
// is its child. key=value lines. No `$(`: Kubernetes would take it for a variable reference in the stub's env.
const PROBE = [
  "sed -n 's/^\\(Uid\\|CapPrm\\|CapEff\\|CapBnd\\|CapAmb\\|NoNewPrivs\\|Seccomp\\):[[:space:]]*\\([^[:space:]]*\\).*/driver.\\1=\\2/p' /proc/1/status",
  "sed -n 's/^\\(CapEff\\|NoNewPrivs\\|Seccomp\\):[[:space:]]*\\([^[:space:]]*\\).*/shell.\\1=\\2/p' /proc/self/status",
  'if touch /probe-write 2>/dev/null; then echo rootfs=writable; else echo rootfs=readonly; fi',
  'if touch /tmp/probe-write 2>/dev/null; then echo scratch=writable; else echo scratch=readonly; fi',
  'if [ -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then echo token=present; else echo token=absent; fi',
  // The run user against the driver (root): its environment, its NATS credential (present, root-only), a signal.
  "sed -n 's/^\\(Uid\\|CapPrm\\):[[:space:]]*\\([^[:space:]]*\\).*/shell.\\1=\\2/p' /proc/self/status",
  'if tr "\\0" "\\n" < /proc/1/environ >/dev/null 2>&1; then echo driver.environ=readable; else echo driver.environ=denied; fi',
  `if [ -e ${NATS_CREDS_PATH} ]; then echo creds=present; else echo creds=absent; fi`,
  `if cat ${NATS_CREDS_PATH} >/dev/null 2>&1; then echo creds.read=allowed; else echo creds.read=denied; fi`,
  'if kill -0 1 2>/dev/null; then echo driver.signal=allowed; else echo driver.signal=denied; fi',
  'for v in SSL_CERT_FILE GIT_SSL_CAINFO REQUESTS_CA_BUNDLE CURL_CA_BUNDLE; do printenv "$v" | sed "s/^/ca.$v=/"; done',
  'grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt | sed "s/^/ca.system=/"',
  'grep -c "BEGIN CERTIFICATE" /etc/tcab/extra-ca/ca.crt | sed "s/^/ca.extra=/"',
  'grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE" | sed "s/^/ca.bundle=/"',
  // git over HTTPS to the npm registry (through the chart's egress proxy, the node's NAT and this machine's
  // TLS-intercepting proxy) with that bundle: TLS verifies, then the registry answers 404 (it is no git server).
  'timeout 30 git ls-remote https://registry.npmjs.org/tcab-e2e-probe.git 2>&1 | head -n 2 | tr "\\n" " " | sed "s/^/git=/"; echo',
].join('\n');
// The second step runs the attempts the Run's workspace holds (only the adversary Run's has any).
const GG_SCRIPT = { steps: [{ tool: { name: 'shell', args: { command: PROBE } } }, { tool: { name: 'shell', args: { command: RUN_ATTEMPTS_COMMAND } } }, { tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } }, { text: 'Wrote hello.txt.' }] };
const CLAUDE_SCRIPT = { steps: [{ text: 'Hello from the stub model.' }] };
// The newer CLIs (issue 41), each in its own tool names: a shell command that writes and shows a file, a read of it
// (relative: the driver Pod's workspace path is the driver's to choose), a final answer.
const PI_SCRIPT = {
  steps: [
    { thinking: 'A shell command can create and show the file.', text: 'I will create hello.txt.', tool: { name: 'bash', args: { command: "printf 'hello\\n' > hello.txt && cat hello.txt" } } },
    { tool: { name: 'read', args: { path: 'hello.txt' } } },
    { text: 'Created hello.txt.' },
  ],
};
// Grok runs only a model its endpoint lists; its shell tool takes a description.
const GROK_SCRIPT = {
  models: ['grok-code-fast-1'],
  steps: [
    { thinking: 'A shell command can create and show the file.', text: 'I will create hello.txt.', tool: { name: 'run_terminal_command', args: { command: "printf 'hello\\n' > hello.txt && cat hello.txt", description: 'Create hello.txt and show it' } } },
    { tool: { name: 'read_file', args: { target_file: 'hello.txt' } } },
    { text: 'Created hello.txt.' },
  ],
};

let node: RealNodeContext;
let ns: string;
let removeNs: () => Promise<void>;
let images: Record<string, string>;
let logs: LogCapture;
let workDir: string;
let nats: { address: string; close: () => void };
/** The auth Secret's reader.creds, written by writeReaderCreds: how everything outside the cluster reads NATS. */
let readerCreds: string;
let stub: { address: string; close: () => void };
/** Every run's stream as the subscriber got it, for the canary check. */
const streams: string[] = [];
const stages: Record<string, Record<string, number>> = {};

const cluster = (): ClusterAccess => ({ kubeconfig: inject('kubeconfig'), binDir: inject('clusterBinDir') });
const helm = (args: string[]) => helmOf(cluster())(args);
const getJson = async <T>(...args: string[]): Promise<T> => {
  const out = await kubectl(['get', ...args, '-o', 'json']);
  if (out.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${out.stderr}`);
  return JSON.parse(out.stdout) as T;
};
const report = (text: string) => new Map(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
/** A gg shell tool result ({exit_code, output}) as the model got it: the command's output. */
const shellOutput = (result: string): string => {
  try {
    return String((JSON.parse(result) as { output?: unknown }).output ?? '');
  } catch {
    return result;
  }
};

/** The forwarded NATS as `tcab events` reaches it: the reader credential (its own inbox is set by nats/reader.ts). */
const readerSettings = (): NatsSettings => natsSettings(`nats://${nats.address}`, { credsFile: readerCreds });

/**
 * How the bundled NATS answers one connection the server is expected to refuse (no credential, a revoked one):
 * 'connected' or the error. Through a port-forward of its own: kubectl port-forward exits when the server resets
 * a connection it forwards, which a refusal may do, and the shared forward must outlive it.
 */
async function connectOnce(settings: Omit<NatsSettings, 'servers'>, name: string): Promise<string> {
  const own = await forwardService(cluster(), ns, `${RELEASE}-tcab-nats`, 4222);
  try {
    return await connectNats({ ...settings, servers: [`nats://${own.address}`] }, { name }).then(async (nc) => {
      await nc.close();
      return 'connected';
    }, (error: Error) => error.message);
  } finally {
    own.close();
  }
}

/** A run's stream from the first message, read with the reader credential, until `done` (test/cluster's readRunUntil, with credentials). */
async function readRunUntil(runId: string, done: (items: StreamItem[]) => boolean, timeoutMs: number): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    for await (const item of readRunStream({ settings: readerSettings(), runId, replay: true, untilResult: false, signal: abort.signal })) {
      items.push(item);
      if (done(items)) return items;
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  throw new Error(`timed out after ${timeoutMs}ms reading run ${runId}: ${JSON.stringify(items.map((i) => (i.kind === 'event' ? i.event.type : i.kind)))}`);
}

/** The capabilities mask /proc/<pid>/status shows (CapEff etc.) for capability names, 16 hex digits. */
const CAPABILITY_BITS: Record<string, number> = { CHOWN: 0, DAC_OVERRIDE: 1, DAC_READ_SEARCH: 2, FOWNER: 3, FSETID: 4, KILL: 5, SETGID: 6, SETUID: 7, SETPCAP: 8, NET_BIND_SERVICE: 10, NET_RAW: 13, SYS_CHROOT: 18, SYS_PTRACE: 19, SYS_ADMIN: 21, MKNOD: 27, AUDIT_WRITE: 29, SETFCAP: 31 };
const capabilityMask = (names: readonly string[]) => names.reduce((mask, name) => mask | (1n << BigInt(CAPABILITY_BITS[name]!)), 0n).toString(16).padStart(16, '0');

interface Followed {
  events: (StreamEvent & Record<string, unknown>)[];
  code: number | null;
  stderr: string;
  stdout: string;
}

/** `tcab events follow <run> --json` against the forwarded NATS, from before the Run exists to its result. */
function follow(runId: string, timeline: RunTimeline, timeoutMs: number): Promise<Followed> {
  return new Promise((resolve, reject) => {
    // As NOTES.txt says: the reader credential through TCAB_NATS_CREDS.
    const env = { ...process.env, TCAB_NATS_CREDS: readerCreds };
    const child = spawn(process.execPath, [join(ROOT, 'cli', 'main.ts'), 'events', 'follow', runId, '--nats', `nats://${nats.address}`, '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      timeline.markFirstEvent();
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      streams.push(stdout);
      const events = stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Followed['events'][number]);
      resolve({ events, code, stderr, stdout });
    });
  });
}

async function applyRun(name: string, spec: object): Promise<void> {
  const applied = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec }));
  expect(applied.code, applied.stderr).toBe(0);
}

async function finished(name: string, timeoutMs: number): Promise<RunObject> {
  const [done] = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (runs) => ['Succeeded', 'Failed'].includes(runs[0]?.status?.phase ?? ''), timeoutMs, { fieldSelector: `metadata.name=${name}` });
  return done!;
}

/** One Run from apply to result, timed; returns the stream and the finished Run. */
async function timedRun(name: string, spec: object, timeoutMs: number): Promise<{ followed: Followed; done: RunObject; stages: Record<string, number> }> {
  const timeline = await RunTimeline.watch(clusterConfig(), ns, name);
  const followed = follow(`${ns}_${name}`, timeline, timeoutMs);
  timeline.applied();
  await applyRun(name, spec);
  const result = await followed;
  const done = await finished(name, 60_000);
  timeline.markFinished();
  const t = timeline.stop();
  const s = runStages(t, result.events);
  stages[name] = s;
  process.stderr.write(`e2e stages ${name}: ${JSON.stringify(s)} (${t.pullMessage ?? 'no Pulled event'})\n`);
  return { followed: result, done, stages: s };
}

// The adversarial Run's steps, in the order its test takes them.

/** Tokens no stub session reports: a forged result's usage. */
const ABSURD_TOKENS = { input: 987_654_321, output: 987_654_321, cache_read: 0, cache_write: 0, reasoning: 0 };
/** The attempts that speak the NATS protocol (natsAttempts). */
const NATS_ATTEMPTS = ['nats-connect', 'nats-other-run', 'nats-own-result', 'nats-subscribe', 'nats-purge'];

/** The adversary's attempts: the driver-identity ones, and NATS with no credential at the address its driver is given. */
async function adversaryAttempts(own: string, victim: string): Promise<Attempt[]> {
  // The address the driver is given (the bundled NATS Service, by cluster DNS): the agent connects there itself.
  const natsUrl = (await kubectl(['get', 'deployment', `${RELEASE}-tcab-dispatcher`, '-n', ns, '-o', 'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="TCAB_NATS_URL")].value}'])).stdout;
  const target = new URL(natsUrl.split(',')[0]!);
  expect(target.hostname).toContain(`${RELEASE}-tcab-nats`);
  const forged = (runId: string) => JSON.stringify({ ...runResult(runId, 'forged by the agent', 1), tokens: ABSURD_TOKENS, comparable_cost_usd: 123_456 });
  return [
    ...ATTEMPTS.filter((a) => ['environ', 'memory', 'credential', 'signal', 'ptrace'].includes(a.name)),
    ...natsAttempts({
      host: target.hostname,
      port: Number(target.port || 4222),
      attempts: {
        'nats-connect': [],
        'nats-other-run': [...pub(resultSubject(victim), forged(victim)), ...pub(eventSubject(victim, 'agent'), JSON.stringify(agentEvent('forged into another run')))],
        'nats-own-result': pub(resultSubject(own), forged(own)),
        'nats-subscribe': ['SUB tcab.run.> 1'],
        'nats-purge': pub('$JS.API.STREAM.PURGE.TCAB_RUNS', '{}'),
      },
    }),
  ];
}

interface VictimBefore {
  victim: { status: RunObject['status']; count: number; items: StreamItem[] };
  rejected: Record<string, Record<string, number>>;
  /** The other run's record now: its status, its stored count and its whole stream. */
  record: () => Promise<VictimBefore['victim']>;
  dispatchers: string[];
}

/** The other run's record once complete, and the dispatchers' rejection counters, before the adversary runs. */
async function victimBefore(victim: string): Promise<VictimBefore> {
  const dispatchers = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/component=dispatcher')).items.map((p) => p.metadata!.name!);
  const record = async () => {
    const count = await storedCount(readerSettings(), victim);
    return { status: (await getJson<RunObject>('run', 'hello', '-n', ns)).status, count, items: await readRunUntil(victim, (all) => all.length === count, 30_000) };
  };
  // The other run's record is complete once the dispatcher has put its Pod's deletion on it (after the result).
  const podDeleted = (i: StreamItem) => i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'teardown' && i.event.status === 'completed' && fromDispatcher(i.event);
  await readRunUntil(victim, (all) => all.some(podDeleted), 60_000);
  const before = { victim: await record(), rejected: await rejectedResults(ns, dispatchers, 9090), record, dispatchers };
  expect(before.victim.items.some((i) => i.kind === 'result')).toBe(true);
  return before;
}

/** What each attempt printed inside the driver container, as the model got it: every one failed. */
async function expectEveryAttemptFailed(attempts: readonly Attempt[]): Promise<void> {
  const results = (await (await fetch(`http://${stub.address}/_stub/tool-results`)).json()) as string[];
  const output = shellOutput(results.find((t) => t.includes('attempt=nats-connect')) ?? '');
  const r = reportsOf(output);
  for (const a of attempts) expect(r.has(a.name), `${a.name} in ${output}`).toBe(true);
  // Each NATS attempt reached the server (its INFO asks for authentication), said CONNECT with no credential and
  // its lines; the server answered only that, and closed the connection: no +OK, PONG or MSG. (Closing while
  // the agent's lines are still unread resets the connection: the agent then sees ECONNRESET.)
  for (const name of NATS_ATTEMPTS) {
    const { [`${name}.socketError`]: socketError, ...seen } = Object.fromEntries(r.get(name)!);
    expect([undefined, 'ECONNRESET'], name).toContain(socketError);
    expect(seen, name).toEqual({ [`${name}.authRequired`]: 'true', [`${name}.sent`]: 'true', [`${name}.replies`]: "-ERR 'Authorization Violation'", [`${name}.closedBy`]: 'server' });
  }
  // The driver (root) against the run user: the same denials as test/cluster/driver-identity.test.ts, here in
  // the chart's driver Pod with its real run credential mounted.
  for (const [attempt, key] of [['environ', 'environ'], ['environ', 'fd'], ['memory', 'mem'], ['credential', 'creds']] as const) {
    expect(r.get(attempt)!.get(`${key}.exit`), key).not.toBe('0');
    expect(r.get(attempt)!.get(`${key}.error`), key).toMatch(/Permission denied/);
  }
  expect(r.get('credential')!.get('creds.stat')).toBe('400 0 0');
  for (const key of ['term', 'kill', 'stop']) expect(r.get('signal')!.get(`${key}.error`), key).toMatch(/Operation not permitted/);
  expect(Object.fromEntries(r.get('ptrace')!)).toEqual({ 'ptrace.result': '-1', 'ptrace.errno': '1' });
}

/**
 * The run succeeded with its true record: the stream (read whole with the reader) holds exactly what the driver
 * wrote (its log) plus the dispatcher's own Pod events, and the driver's result, which is the Run's status.
 */
async function expectTrueRecord(own: string, followed: Followed, done: RunObject): Promise<void> {
  expect(followed.code, followed.stderr).toBe(0);
  const driverLog = Object.entries(logs.logs()).find(([name]) => name.startsWith('tcab-run-adversary_'))?.[1] ?? '';
  const driver = driverRecord(driverLog);
  expect(driver.result, driverLog).toMatchObject({ run_id: own, outcome: 'succeeded' });
  const count = await storedCount(readerSettings(), own);
  const items = await readRunUntil(own, (all) => all.length === count, 30_000);
  streams.push(JSON.stringify(items));
  expect(items.filter((i) => i.kind === 'invalid')).toEqual([]);
  expect(items.flatMap((i) => (i.kind === 'event' && !fromDispatcher(i.event) ? [i.event] : []))).toEqual(driver.events);
  expect(items.flatMap((i) => (i.kind === 'result' ? [i.result] : []))).toEqual([driver.result]);
  expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', message: driver.result!.message, sessionIds: driver.result!.session_ids, usage: driver.result!.tokens, comparableCostUsd: driver.result!.comparable_cost_usd });
  expect(done.status!.usage!.input).not.toBe(ABSURD_TOKENS.input);
  expect(JSON.stringify(items)).not.toContain('forged');
}

/** The other run: its status and its whole stream as before; no forged result reached the dispatcher, so none needed refusing. */
async function expectVictimUnchanged(before: VictimBefore): Promise<void> {
  expect(await before.record()).toEqual(before.victim);
  expect(await rejectedResults(ns, before.dispatchers, 9090)).toEqual(before.rejected);
}

/**
 * Its credential, leaked (read from its Secret, as only the driver could): revoked once the Run is final, so it
 * cannot publish a second result (the server refuses the connection).
 */
async function expectLeakedCredentialRevoked(own: string, done: RunObject): Promise<void> {
  const run = await getJson<RunObject>('run', 'adversary', '-n', ns);
  const secret = runCredentialsSecretName({ namespace: ns, name: 'adversary', uid: run.metadata!.uid! });
  const leaked = await kubectl(['get', 'secret', secret, '-n', ns, '-o', 'jsonpath={.data.nats\\.creds}']);
  expect(leaked.code, leaked.stderr).toBe(0);
  const { servers: _, ...leakedSettings } = natsSettings('nats://unused', { credsText: Buffer.from(leaked.stdout, 'base64').toString(), inboxPrefix: runInboxPrefix(own) });
  await vi.waitFor(async () => expect(await connectOnce(leakedSettings, 'e2e-leaked')).toMatch(/authorization violation|revoked/i), { timeout: 30_000, interval: 250 });
  expect((await getJson<RunObject>('run', 'adversary', '-n', ns)).status).toEqual(done.status);
}

beforeAll(async () => {
  const t0 = Date.now();
  node = realNode();
  ({ name: ns, remove: removeNs } = await createNamespace('e2e', { driverPolicy: false }));
  logs = new LogCapture(ns);
  workDir = mkdtempSync(join(tmpdir(), 'tcab-e2e-'));
  // As a user would: build the five images, push them to a registry the cluster pulls from, name it in values.
  images = await pushImages(['driver', 'dispatcher', 'nats', 'npm-cache', 'egress-proxy'], node);
  const pushedMs = Date.now() - t0;
  // The provider key is a canary: it must appear in no event, log, status or Kubernetes Event.
  const install = await installChart(cluster(), { namespace: ns, images, providerKey: CANARY, providerKeys: { openrouter: CANARY, xai: CANARY }, stubScripts: { gg: GG_SCRIPT, claude: CLAUDE_SCRIPT, pi: PI_SCRIPT, grok: GROK_SCRIPT, aider: CLAUDE_SCRIPT }, workDir, timeoutSeconds: 240,
    // The node's release store (issue 36) in this test's own directory: the test nodes share the machine's disk.
    overrides: { driver: { releaseStore: { hostPath: join(workDir, 'releases') } } } });
  expect(install.stdout + install.stderr).toContain('STATUS: deployed');
  expect(install.stdout).toContain('kubectl apply'); // NOTES.txt tells how to submit a Run
  nats = await forwardService(cluster(), ns, `${RELEASE}-tcab-nats`, 4222);
  readerCreds = await writeReaderCreds(cluster(), ns, join(workDir, 'reader.creds'));
  stub = await forwardService(cluster(), ns, 'stub-models', STUB_PORTS.gg);
  process.stderr.write(`e2e setup: images pushed in ${pushedMs} ms, chart installed and ready in ${Date.now() - t0 - pushedMs} ms\n`);
}, 600_000);

afterAll(async () => {
  process.stderr.write(`e2e stages: ${JSON.stringify(stages)}\n`);
  await helm(['uninstall', RELEASE, '-n', ns, '--wait']).catch(() => undefined);
  nats?.close();
  stub?.close();
  logs?.close();
  await removeNs?.();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('helm install on a real node -> kubectl apply Run -> bundled NATS -> tcab events follow', () => {
  it('installs: every Pod on a real node from its local registry (the two dispatchers on two nodes where there are several), bundled NATS and Verdaccio on their volumes, the dispatcher\'s RBAC as narrow as before', async () => {
    const pods = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', `app.kubernetes.io/instance=${RELEASE}`)).items;
    const byComponent = (c: string) => pods.filter((p) => p.metadata?.labels?.['app.kubernetes.io/component'] === c);
    expect(byComponent('dispatcher').map((p) => p.status?.phase)).toEqual(['Running', 'Running']);
    expect(byComponent('nats').map((p) => p.status?.phase)).toEqual(['Running']);
    expect(byComponent('npm-cache').map((p) => p.status?.phase)).toEqual(['Running']);
    // The NATS Pod waited for the auth Secret the dispatcher creates; how the two converged (a dispatcher that
    // could not reach NATS yet exits and is restarted).
    const restarts = Object.fromEntries(pods.map((p) => [p.metadata!.name!, p.status?.containerStatuses?.[0]?.restartCount ?? 0]));
    const readyAt = (p: V1Pod) => Date.parse(String(p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime)) - Date.parse(String(p.metadata!.creationTimestamp));
    process.stderr.write(`e2e install: restarts ${JSON.stringify(restarts)}; created -> Ready (ms): ${JSON.stringify(Object.fromEntries(pods.map((p) => [p.metadata!.name!, readyAt(p)])))}\n`);
    for (const pod of pods) {
      expect(node.nodeNames).toContain(pod.spec?.nodeName);
      const image = pod.spec!.containers[0]!.image ?? '';
      expect(image.startsWith(`${node.registry}/`), image).toBe(true);
      expect(pod.status?.containerStatuses?.[0]?.imageID, pod.metadata?.name).toMatch(new RegExp(`^${node.registry.replace(/\./g, '\\.')}/[a-z-]+@sha256:[0-9a-f]{64}$`));
    }
    expect(byComponent('dispatcher').every((p) => p.spec?.serviceAccountName === `${RELEASE}-tcab-dispatcher`)).toBe(true);
    // The chart's anti-affinity between the replicas (dispatcher.affinity {}): a node lost takes one of them at most.
    expect(new Set(byComponent('dispatcher').map((p) => p.spec?.nodeName)).size).toBe(Math.min(2, node.nodeNames.length));
    // The StatefulSets' claims, provisioned by the cluster's default StorageClass (the node's local-path).
    const claims = (await getJson<{ items: { metadata: { name: string }; spec: { storageClassName?: string }; status: { phase: string } }[] }>('pvc', '-n', ns)).items;
    expect(claims.map((c) => [c.metadata.name, c.status.phase]).sort()).toEqual([[`data-${RELEASE}-tcab-nats-0`, 'Bound'], [`storage-${RELEASE}-tcab-npm-cache-0`, 'Bound']]);
    const defaultClass = (await kubectl(['get', 'storageclass', '-o', 'jsonpath={.items[?(@.metadata.annotations.storageclass\\.kubernetes\\.io/is-default-class=="true")].metadata.name}'])).stdout.trim();
    expect(defaultClass).not.toBe('');
    expect(claims.map((c) => c.spec.storageClassName)).toEqual([defaultClass, defaultClass]);
    // The images were pulled by the kubelet of the node each Pod runs on (its Events, its host name).
    const events = (await getJson<{ items: CoreV1Event[] }>('events', '-n', ns, '--field-selector', 'reason=Pulled')).items;
    const nodeOfPod = new Map(pods.map((p) => [p.metadata!.name!, p.spec?.nodeName]));
    const pulled = events.filter((e) => nodeOfPod.has(e.involvedObject.name ?? ''));
    expect(pulled.length).toBeGreaterThan(0);
    expect(pulled.every((e) => e.source?.component === 'kubelet' && e.source.host === nodeOfPod.get(e.involvedObject.name!))).toBe(true);
    // The dispatcher's token may list/watch the credentials Secrets named in values, and no other Secret.
    const canI = async (...args: string[]) => (await kubectl(['auth', 'can-i', ...args, '-n', ns, `--as=system:serviceaccount:${ns}:${RELEASE}-tcab-dispatcher`])).stdout.trim();
    expect(await canI('watch', 'secrets/provider-keys')).toBe('yes');
    expect(await canI('list', 'secrets')).toBe('no');
    expect(await canI('get', 'secrets/provider-keys')).toBe('no');
    expect(await canI('watch', `secrets/${RELEASE}-tcab-api-token`)).toBe('no');
    // NATS auth: it may read its key Secret by name and create Secrets (that one, the runs' credentials), and may
    // neither rewrite the keys nor read any other Secret.
    expect(await canI('get', `secrets/${NATS_AUTH_SECRET}`)).toBe('yes');
    expect(await canI('create', 'secrets')).toBe('yes');
    expect(await canI('update', `secrets/${NATS_AUTH_SECRET}`)).toBe('no');
    expect(await canI('get', `secrets/${RELEASE}-tcab-api-token`)).toBe('no');
    expect(await canI('get', `serviceaccounts/${RELEASE}-tcab-dispatcher`)).toBe('yes');
    expect(await canI('list', 'serviceaccounts')).toBe('no');
    // The Evaluation controller reads ConfigMaps of test cases (spec.testCasesFrom) and never writes one.
    expect(await canI('watch', 'configmaps')).toBe('yes');
    expect(await canI('update', 'configmaps')).toBe('no');
    // The keys: made by the dispatcher at its first start (no Helm object), the three keys, immutable, owned by the
    // dispatcher's ServiceAccount (so they go with helm uninstall); the NATS Pod mounts only auth.conf.
    const authSecret = await getJson<V1Secret>('secret', NATS_AUTH_SECRET, '-n', ns);
    expect(Object.keys(authSecret.data!).sort()).toEqual(['auth.conf', 'bundle.json', 'reader.creds']);
    expect(authSecret.metadata!.labels?.['app.kubernetes.io/managed-by']).not.toBe('Helm');
    expect(authSecret.immutable).toBe(true);
    const account = await getJson<V1ServiceAccount>('serviceaccount', `${RELEASE}-tcab-dispatcher`, '-n', ns);
    expect(authSecret.metadata!.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'ServiceAccount', name: `${RELEASE}-tcab-dispatcher`, uid: account.metadata!.uid }]);
    expect(Buffer.from(authSecret.data!['auth.conf']!, 'base64').toString()).toMatch(/^operator: /m);
    const natsVolumes = byComponent('nats')[0]!.spec!.volumes!;
    expect(natsVolumes.flatMap((v) => v.projected?.sources ?? []).flatMap((src) => (src.secret ? [src.secret] : []))).toEqual([{ name: NATS_AUTH_SECRET, items: [{ key: 'auth.conf', path: 'auth.conf' }] }]);
    expect(natsVolumes.some((v) => v.secret)).toBe(false);
    expect(statSync(readerCreds).mode & 0o077).toBe(0);
  });

  it('a gg Run: the dispatcher\'s driver Pod reaches the in-cluster stub model by cluster DNS, its stream reaches `tcab events follow` through the bundled NATS, the kubelet\'s Events head it; hardening read from inside the driver', async () => {
    // The registries profile: the probe's git reaches the npm registry through the egress proxy (a CONNECT tunnel,
    // TLS verified end to end with the extraCA bundle).
    const { followed, done } = await timedRun('hello', { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'write hello.txt', maxRuntimeSeconds: 120, egress: 'registries' }, 180_000);
    expect(followed.code, followed.stderr).toBe(0);
    expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', canonicalModel: 'anthropic/claude-sonnet-4.5' });
    expect(done.status!.usage!.input).toBeGreaterThan(0);
    expect(done.status!.comparableCostUsd).toBeGreaterThan(0);
    const system = followed.events.filter((e) => e.type === 'system');
    const stagesSeen = system.map((e) => `${e.stage}:${e.status}`);
    // The real kubelet's words, relayed by the dispatcher, before anything the driver says.
    const pulled = system.find((e) => e.stage === 'pull_image' && e.status === 'completed');
    expect(pulled?.message, stagesSeen.join(' ')).toMatch(new RegExp(`(Successfully pulled image|Container image) "${images.driver!.replace(/[.]/g, '\\.')}"`));
    expect(system.find((e) => e.stage === 'start_container' && e.status === 'completed')?.message).toBe('Container started');
    expect(stagesSeen.indexOf('pull_image:completed')).toBeLessThan(stagesSeen.indexOf('start_container:completed'));
    expect(stagesSeen.indexOf('start_container:completed')).toBeLessThan(followed.events.findIndex((e) => e.type === 'command'));
    for (const type of ['command', 'write', 'agent']) expect(followed.events.some((e) => e.type === type), type).toBe(true);
    const printed = await kubectl(['get', 'runs', '-n', ns]);
    expect(printed.stdout).toMatch(/hello\s+gg\s+claude-sonnet-4-5\s+Succeeded/);

    // What the probe printed inside the driver container, as the model got it.
    const results = (await (await fetch(`http://${stub.address}/_stub/tool-results`)).json()) as string[];
    const r = report(shellOutput(results.find((t) => t.includes('driver.Uid=')) ?? ''));
    // The driver is root with exactly its listed capabilities (as `sudo tcab run` on a workstation); the harness's
    // shell is the run user with none, and can neither read the driver's environment or NATS credential nor signal it.
    const driverCaps = capabilityMask(DRIVER_CAPABILITIES);
    const zero = '0000000000000000';
    expect(Object.fromEntries(r), results.join('\n---\n')).toMatchObject({
      'driver.Uid': '0', 'driver.CapPrm': driverCaps, 'driver.CapEff': driverCaps, 'driver.CapBnd': driverCaps, 'driver.CapAmb': zero,
      'driver.NoNewPrivs': '1', 'driver.Seccomp': '2',
      'shell.Uid': '1000', 'shell.CapPrm': zero, 'shell.CapEff': zero, 'shell.NoNewPrivs': '1', 'shell.Seccomp': '2',
      'driver.environ': 'denied', creds: 'present', 'creds.read': 'denied', 'driver.signal': 'denied',
      rootfs: 'readonly', scratch: 'writable', token: 'absent',
    });
    // extraCA: the non-Node tools' variables name one bundle, the system CAs plus the proxy's.
    const bundle = r.get('ca.SSL_CERT_FILE');
    expect(bundle).toMatch(/^\/tmp\//);
    for (const v of ['GIT_SSL_CAINFO', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']) expect(r.get(`ca.${v}`), v).toBe(bundle);
    expect(Number(r.get('ca.extra'))).toBe(proxyCa().match(/BEGIN CERTIFICATE/g)!.length);
    expect(Number(r.get('ca.bundle'))).toBe(Number(r.get('ca.system')) + Number(r.get('ca.extra')));
    expect(r.get('git')).toMatch(/not found|returned error: 40\d/);
    expect(r.get('git')).not.toMatch(/certificate|SSL/i);
  }, 240_000);

  it('the bundled NATS: no connection without credentials; the reader credential reads the run but cannot publish to it, so a forged result changes nothing', async () => {
    const { servers: _, ...anonymous } = natsSettings('nats://unused');
    expect(await connectOnce(anonymous, 'e2e-anonymous')).toMatch(/authorization violation/i);
    const before = (await getJson<RunObject>('run', 'hello', '-n', ns)).status;
    expect(before?.phase).toBe('Succeeded');
    const nc = await connectNats(readerSettings(), { name: 'e2e-reader' });
    try {
      for (const subject of [resultSubject(`${ns}_hello`), eventSubject(`${ns}_hello`, 'agent')]) {
        const refused = nextServerError(nc);
        nc.publish(subject, JSON.stringify({ run_id: `${ns}_hello`, outcome: 'failed', message: 'forged' }));
        expect(await refused).toMatch(new RegExp(`permissions violation for publish to "${subject.replace(/\./g, '\\.')}"`, 'i'));
      }
    } finally {
      await nc.close();
    }
    // What the reader reads is still the run's own stream, ending in its true result.
    const items = await readRunUntil(`${ns}_hello`, (all) => all.some((i) => i.kind === 'result'), 30_000);
    expect(items.filter((i) => i.kind === 'result').map((i) => i.kind === 'result' && i.result.outcome)).toEqual(['succeeded']);
    expect((await getJson<RunObject>('run', 'hello', '-n', ns)).status).toEqual(before);
  });

  it('an adversarial agent (the harness\'s shell and node in its driver Pod, no NATS client, no credential) fails at every attempt: NATS with no credential, a forged result for its own run and another\'s, subscribe tcab.run.>, purge; the driver\'s environment, memory, credential, signals; its run still succeeds with its true events and result, the other run and the rejection counters are unchanged, and its leaked credential is revoked once it is final', async () => {
    const own = `${ns}_adversary`;
    const victim = `${ns}_hello`;
    const attempts = await adversaryAttempts(own, victim);
    const before = await victimBefore(victim);
    const { followed, done } = await timedRun('adversary', { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'look around', maxRuntimeSeconds: 180, testCase: { source: { files: adversaryFiles(attempts) } } }, 240_000);
    await expectEveryAttemptFailed(attempts);
    await expectTrueRecord(own, followed, done);
    await expectVictimUnchanged(before);
    await expectLeakedCredentialRevoked(own, done);
  }, 300_000);

  it('a run credential leaked while its Run is live (read from its Secret, connected before the result) cannot change the result: a second, different result is either refused by the server (the user revoked once the Run is final) or stored and then refused by the dispatcher (first result wins: a ResultRejected Event, tcab_results_rejected_total{reason="duplicate"}); the status stays the driver\'s', async () => {
    const own = `${ns}_leaked`;
    const dispatchers = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/component=dispatcher')).items.map((p) => p.metadata!.name!);
    const duplicates = async () => Object.values(await rejectedResults(ns, dispatchers, 9090)).reduce((sum, byReason) => sum + (byReason.duplicate ?? 0), 0);
    const duplicatesBefore = await duplicates();
    await applyRun('leaked', { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'write hello.txt', maxRuntimeSeconds: 120 });
    const uid = (await getJson<RunObject>('run', 'leaked', '-n', ns)).metadata!.uid!;
    const secret = runCredentialsSecretName({ namespace: ns, name: 'leaked', uid });
    const [leakedSecret] = await waitFor<V1Secret>(`/api/v1/namespaces/${ns}/secrets`, (all) => all.length === 1, 60_000, { fieldSelector: `metadata.name=${secret}` });
    const creds = Buffer.from(leakedSecret!.data!['nats.creds']!, 'base64').toString();
    // Connected while the Run is live: the credential is still good (the driver is using it). Through a forward of
    // its own (connectOnce says why).
    const live = await forwardService(cluster(), ns, `${RELEASE}-tcab-nats`, 4222);
    const nc = await connectNats(natsSettings(`nats://${live.address}`, { credsText: creds, inboxPrefix: runInboxPrefix(own) }), { name: 'e2e-leaked-live' });
    const seen: string[] = [];
    void (async () => {
      for await (const s of nc.status()) seen.push(s.type === 'error' ? `error: ${s.error.message}` : s.type);
    })();
    let outcome: string;
    try {
      const done = await finished('leaked', 120_000);
      expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
      // At once after the true result is written: a different one, with its own message id (not a redelivery).
      const forged: RunResult = { ...runResult(own, 'forged with a leaked credential', 1), tokens: { input: 987_654_321, output: 987_654_321, cache_read: 0, cache_write: 0, reasoning: 0 } };
      const envelope = resultEnvelope(forged, 'leaked');
      outcome = await jetstream(nc).publish(envelope.subject, JSON.stringify(forged), { msgID: envelope.msgId, headers: messageHeaders(envelope), timeout: 10_000 }).then(
        (ack) => (ack.duplicate ? 'deduplicated' : 'stored'),
        (error: Error) => `refused: ${error.message}`,
      );
      process.stderr.write(`e2e leaked credential: second result ${outcome}\n`);
      if (outcome === 'stored') {
        // First result wins: refused, counted, and an Event on the Run says why.
        await vi.waitFor(async () => expect(await duplicates()).toBe(duplicatesBefore + 1), { timeout: 30_000, interval: 500 });
        const [rejected] = await waitFor<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, (all) => all.length > 0, 30_000, { fieldSelector: `involvedObject.name=leaked,reason=ResultRejected` });
        expect(rejected!.message).toMatch(/duplicate|already/i);
      } else {
        // The server said why it dropped the connection: the user is revoked (not a network failure).
        expect(outcome).toMatch(/^refused: /);
        expect(seen.join(' | ')).toMatch(/error: .*(revoked|authorization violation)/i);
        expect(await duplicates()).toBe(duplicatesBefore);
      }
      // Either way the credential is dead now (revoked once final), and the Run's status is its driver's result.
      const { servers: _, ...leakedSettings } = natsSettings('nats://unused', { credsText: creds, inboxPrefix: runInboxPrefix(own) });
      await vi.waitFor(async () => expect(await connectOnce(leakedSettings, 'e2e-leaked-after')).toMatch(/authorization violation|revoked/i), { timeout: 30_000, interval: 250 });
      expect((await getJson<RunObject>('run', 'leaked', '-n', ns)).status).toEqual(done.status);
      expect(done.status!.usage!.input).not.toBe(987_654_321);
      process.stderr.write(`e2e leaked credential: its connection saw ${seen.join(' | ')}\n`);
    } finally {
      await nc.close().catch(() => undefined);
      live.close();
    }
  }, 240_000);

  it('real Claude Code Runs (newest release, installed in the driver Pod from the in-cluster npm cache, which fetches from the npm registry through the node\'s NAT): cold (stored in the node\'s release store), then warm (from it)', async () => {
    const spec = { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Say hello.', maxRuntimeSeconds: 300, testCase: { source: { files: [{ path: 'README.md', content: '# scratch\n' }] }, init: 'echo ready > .initialized' } };
    for (const name of ['claude-cold', 'claude-warm']) {
      const { followed, done } = await timedRun(name, spec, 360_000);
      const stagesSeen = followed.events.filter((e) => e.type === 'system').map((e) => `${e.stage}:${e.status}`);
      const order = ['pull_image:completed', 'start_container:completed', 'install_harness:completed', 'probe_harness:completed', 'init_test_case:completed', 'teardown:completed'];
      expect(order.every((s) => stagesSeen.includes(s)), followed.stderr + stagesSeen.join(' ')).toBe(true);
      expect(order.map((s) => stagesSeen.indexOf(s))).toEqual([...order.map((s) => stagesSeen.indexOf(s))].sort((a, b) => a - b));
      // The session's own events sit between init and teardown.
      expect(followed.events.findIndex((e) => e.type === 'agent')).toBeGreaterThan(followed.events.findIndex((e) => e.type === 'system' && e.stage === 'init_test_case'));
      expect(followed.code, followed.stderr).toBe(0);
      expect(done.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', authMode: 'api-key' });
      expect(done.status!.harnessVersion).toMatch(/^\d+\.\d+\.\d+/);
      expect(done.status!.usage!.input).toBeGreaterThan(0);
      expect(done.status!.comparableCostUsd).toBeGreaterThan(0);
      // The node's release store: the first run installs with npm and stores the release, the next takes it from it,
      // hard-linked: the store and the run's prefix share the hostPath mount.
      const installed = followed.events.flatMap((e) => (e.type === 'system' && e.stage === 'install_harness' && e.status === 'completed' ? [e.message] : []))[0];
      expect(installed).toMatch(name === 'claude-cold' ? /\(newest\) in [\d.]+s; stored in the release store for the next run/ : /\(newest\) from the release store: \d+ files, \d+ MB, each checked against its SHA-256 and hard-linked \(read-only\)/);
      process.stderr.write(`e2e ${name}: ${installed}\n`);
    }
    process.stderr.write(`e2e claude install+probe from the warm in-cluster cache: ${stages['claude-warm']!.driver_install_harness! + stages['claude-warm']!.driver_probe_harness!} ms (cold: ${stages['claude-cold']!.driver_install_harness! + stages['claude-cold']!.driver_probe_harness!} ms)\n`);
  }, 800_000);

  it.each([
    // Pi prints a command's exit code only when it is not 0 (its success is the tool's own status); Grok's shell tool reports it.
    ['pi', 'npm, through the in-cluster cache', 'anthropic/claude-sonnet-4.5', undefined],
    ['grok', 'PyPI with uv, through the egress proxy\'s registries profile; its tool calls only in a side file', 'grok-code-fast-1', 0],
  ])('the newest CLIs in driver Pods (issue 41): a %s Run (%s): its tool calls, usage and cost as on a workstation', async (harness, _how, model, exitCode) => {
    const spec = { harness, model, prompt: 'Create hello.txt.', maxRuntimeSeconds: 300 };
    const { followed, done } = await timedRun(`${harness}-newest`, spec, 360_000);
    expect(followed.code, followed.stderr).toBe(0);
    expect(done.status, JSON.stringify(done.status)).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', authMode: 'api-key' });
    expect(done.status!.harnessVersion).toMatch(/^\d+\.\d+\.\d+/);
    const byType = (type: string) => followed.events.filter((e) => e.type === type);
    expect(byType('command').map((e) => ({ command: e.command, exit_code: e.exit_code, is_success: e.is_success }))).toContainEqual({ command: "printf 'hello\\n' > hello.txt && cat hello.txt", exit_code: exitCode, is_success: true });
    expect(byType('read').map((e) => String(e.path))).toEqual([expect.stringMatching(/hello\.txt$/)]);
    expect(byType('reasoning').length).toBeGreaterThan(0);
    expect(byType('agent').map((e) => e.message)).toContain('Created hello.txt.');
    expect(byType('unknown')).toEqual([]);
    // Three model turns, each with the stub's usage: summed, and priced from the catalog (Pi's own estimate stays raw).
    expect(done.status!.usage!.input).toBeGreaterThan(0);
    expect(done.status!.usage!.output).toBeGreaterThan(0);
    expect(done.status!.comparableCostUsd).toBeGreaterThan(0);
  }, 400_000);

  it('an Aider Run in a driver Pod (issue 36): installed from PyPI with uv on the image\'s Python 3.11, its usage from its Tokens line, priced', async () => {
    const spec = { harness: 'aider', model: 'openrouter/anthropic/claude-sonnet-4.5', prompt: 'Say hello.', maxRuntimeSeconds: 420 };
    const { followed, done } = await timedRun('aider-newest', spec, 480_000);
    expect(followed.code, followed.stderr).toBe(0);
    expect(done.status, JSON.stringify(done.status)).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', authMode: 'api-key' });
    expect(done.status!.harnessVersion).toMatch(/^\d+\.\d+\.\d+/);
    // Best-effort: its lines are `unknown`; the stub's answer is among them.
    expect(JSON.stringify(followed.events.filter((e) => e.type === 'unknown'))).toContain('Hello from the stub model.');
    expect(done.status!.usage!.input).toBeGreaterThan(0);
    expect(done.status!.comparableCostUsd).toBeGreaterThan(0);
    const installed = followed.events.flatMap((e) => (e.type === 'system' && e.stage === 'install_harness' && e.status === 'completed' ? [e.message] : []))[0];
    process.stderr.write(`e2e aider: ${installed}\n`);
  }, 400_000);

  it('the dispatcher runs as uid 1000 with no capabilities, no_new_privs, seccomp and a read-only root (kubectl exec into its container)', async () => {
    const [pod] = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/component=dispatcher')).items;
    // /proc/1 is the dispatcher process (the container's PID namespace); /proc/self the exec'd shell, which runs
    // with the container's security context.
    const status = (file: string, prefix: string) => `sed -n 's/^\\(Uid\\|CapPrm\\|CapEff\\|CapBnd\\|CapAmb\\|NoNewPrivs\\|Seccomp\\):[[:space:]]*\\([^[:space:]]*\\).*/${prefix}.\\1=\\2/p' ${file}`;
    const out = await inContainer(ns, pod!.metadata!.name!, 'dispatcher', [
      status('/proc/1/status', 'dispatcher'),
      status('/proc/self/status', 'exec'),
      'tr "\\0" " " < /proc/1/cmdline | sed "s/^/cmdline=/"; echo',
      'if touch /probe-write 2>/dev/null; then echo rootfs=writable; else echo rootfs=readonly; fi',
    ].join('\n'));
    expect(out.code, out.stderr).toBe(0);
    const zero = '0000000000000000';
    expect(Object.fromEntries(report(out.stdout))).toMatchObject({
      'dispatcher.Uid': '1000', 'dispatcher.CapPrm': zero, 'dispatcher.CapEff': zero, 'dispatcher.CapBnd': zero, 'dispatcher.CapAmb': zero, 'dispatcher.NoNewPrivs': '1', 'dispatcher.Seccomp': '2',
      'exec.Uid': '1000', 'exec.CapEff': zero, 'exec.NoNewPrivs': '1', 'exec.Seccomp': '2', rootfs: 'readonly',
    });
    expect(report(out.stdout).get('cmdline')).toContain('/opt/tcab/dispatcher/main.ts');
  });

  it('a HarnessConfig cap of 1: three Runs go one at a time (sampled from the apiserver) and all succeed', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'HarnessConfig', metadata: { name: 'gg' }, spec: { maxParallelism: 1 } }));
    try {
      const runs = ['one', 'two', 'three'].map((name) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `capped-${name}`, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'write hello.txt', maxRuntimeSeconds: 120 } }));
      await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }));
      let peak = 0;
      const capped = (all: RunObject[]) => all.filter((r) => r.metadata?.name?.startsWith('capped-'));
      const done = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => {
        peak = Math.max(peak, capped(all).filter((r) => ['Dispatched', 'Starting', 'Running'].includes(r.status?.phase ?? '')).length);
        return capped(all).length === 3 && capped(all).every((r) => ['Succeeded', 'Failed'].includes(r.status?.phase ?? ''));
      }, 240_000);
      expect(peak).toBe(1);
      expect(capped(done).map((r) => r.status?.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
      for (const r of capped(done)) streams.push(JSON.stringify(await readRunUntil(`${ns}_${r.metadata!.name}`, (all) => all.some((i) => i.kind === 'result'), 30_000)));
    } finally {
      await kubectl(['delete', 'harnessconfig', 'gg']);
    }
  }, 300_000);

  it('an Evaluation (gg x 2 models x 5 test cases x 2 repeats: 20 Runs, made by the dispatcher): every figure of its status equals what the drivers\' results say; the agent that rewrote its workspace\'s test gets the shipped verdict; re-applied after two of its Runs are deleted, exactly those two run again; deleted, its Runs go with it', async () => {
    const evaluation = evaluationObject(ns);
    const slots = slotsOfEvaluation(ns);
    const runsPath = `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
    const evaluationsPath = `/apis/tcab.dev/v1alpha1/namespaces/${ns}/evaluations`;
    const byName = { fieldSelector: `metadata.name=${EVALUATION_NAME}` };
    const completed = (final: (e: EvaluationObject) => boolean) => async () => (await waitFor<EvaluationObject>(evaluationsPath, (all) => all[0]?.status?.phase === 'Completed' && final(all[0]), 600_000, byName))[0]!;
    const ourRuns = async () => new Map((await getJson<{ items: RunObject[] }>('runs', '-n', ns, '-l', `tcab.dev/evaluation=${EVALUATION_NAME}`)).items.map((r) => [r.metadata!.name!, r]));
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(evaluation));
    expect(applied.code, applied.stderr).toBe(0);
    const t0 = Date.now();
    // `tcab eval watch` from the start: a JSON line per status change on a pipe, until it is Completed.
    const watching = exec(process.execPath, [join(ROOT, 'cli', 'main.ts'), 'eval', 'watch', EVALUATION_NAME, '-n', ns, '--kubeconfig', inject('kubeconfig')], { env: { PATH: process.env.PATH }, timeout: 600_000 });
    const done = await completed((e) => e.status!.runs!.final === 20)();
    const watched = (await watching).stdout.trim().split('\n').map((l) => JSON.parse(l) as { status: EvaluationObject['status'] | null });
    expect(watched.length).toBeGreaterThan(2);
    expect(watched.at(-1)!.status).toEqual(done.status);
    const finals = watched.map((w) => w.status?.runs?.final ?? 0);
    expect(finals).toEqual(finals.toSorted((a, b) => a - b)); // progress only goes up
    const firstPass = Date.now() - t0;
    const runs = await ourRuns();
    // One Run per slot, named by it, owned by the Evaluation.
    expect([...runs.keys()].sort()).toEqual(slots.map((s) => s.name).sort());
    for (const run of runs.values()) expect(run.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'Evaluation', name: EVALUATION_NAME, uid: done.metadata!.uid, controller: true })]);
    // The drivers' own results, read from NATS with the reader credential.
    const results = new Map<string, RunResult>();
    for (const slot of slots) {
      const items = await readRunUntil(`${ns}_${slot.name}`, (all) => all.some((i) => i.kind === 'result'), 30_000);
      streams.push(JSON.stringify(items));
      const result = items.flatMap((i) => (i.kind === 'result' ? [i.result] : [])).at(-1)!;
      // On a failure, what the run said of it: its message and its error and warning events.
      const why = () => `${slot.name} (${slot.testCase}): ${result.message}; ${JSON.stringify(items.flatMap((i) => (i.kind === 'event' && (i.event.type === 'error' || i.event.type === 'warning' || i.event.type === 'system') ? [i.event] : [])).slice(-8))}`;
      expect(result.outcome, why()).toBe('succeeded');
      const verdict = EXPECTED_VERDICTS[slot.testCase]!;
      expect(result.check, `${slot.testCase} ${slot.name}`).toMatchObject({ passed: verdict.passed, reward: verdict.reward, exit_code: verdict.exitCode });
      expect(runs.get(slot.name)!.status!.check).toEqual({ passed: result.check!.passed, exitCode: result.check!.exit_code, reward: result.check!.reward, durationMs: result.check!.duration_ms });
      if (slot.testCase === 'tamper') {
        expect(result.check!.output_tail).toContain('shipped verify');
        expect(result.check!.output_tail).not.toContain("the workspace's verify");
      }
      results.set(slot.name, result);
    }
    // The tampering agent did rewrite its test (its shell said so to the model) in each of its four Runs.
    const toolResults = (await (await fetch(`http://${stub.address}/_stub/tool-results`)).json()) as string[];
    expect(toolResults.filter((t) => t.includes('tampered=yes')).length).toBeGreaterThanOrEqual(4);
    expect(done.status!.runs).toEqual({ total: 20, final: 20, scored: 20, passed: 8, byOutcome: { succeeded: 20 } });
    expect(done.status!.cells!.map((c) => c.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
    for (const cell of done.status!.cells!) expectCellFromResults(cell, slots, results, runs);
    expect(done.status!.comparisons).toEqual([]); // 4/10 against 4/10
    expect(done.status!.observedGeneration).toBe(done.metadata!.generation);
    // kubectl's columns, and the CLI against the cluster.
    const printed = await kubectl(['get', 'evaluations', '-n', ns]);
    expect(printed.stdout).toMatch(new RegExp(`${EVALUATION_NAME}\\s+Completed\\s+20\\s+20\\s+20\\s+8\\s`));
    const tcab = (...args: string[]) => exec(process.execPath, [join(ROOT, 'cli', 'main.ts'), 'eval', ...args, EVALUATION_NAME, '-n', ns, '--kubeconfig', inject('kubeconfig')], { env: { PATH: process.env.PATH } });
    expect(JSON.parse((await tcab('status', '--json')).stdout).status).toEqual(done.status);
    const csv = (await tcab('export', '--csv')).stdout.trim().split('\n');
    expect(csv.map((l) => l.split(',').slice(0, 6).join(','))).toEqual(['harness,model,runs,final,scored,passed', 'gg,claude-sonnet-4-5,10,10,10,4', 'gg,claude-haiku-4-5,10,10,10,4']);
    const exported = JSON.parse((await tcab('export', '--json')).stdout) as { runs: { run: string; test_case: string; check: { passed: boolean } }[] };
    expect(exported.runs.map((r) => r.run).sort()).toEqual(slots.map((s) => s.name).sort());
    expect((await tcab('resume', '--dry-run')).stdout).toContain('0 run(s) would be run again');

    // Two Runs deleted (one per model), the Evaluation applied again: exactly those two run again.
    const deleted = [slots[0]!.name, slots[15]!.name];
    const uids = new Map([...runs].map(([name, run]) => [name, run.metadata!.uid]));
    expect((await kubectl(['delete', 'runs', ...deleted, '-n', ns, '--wait'])).code).toBe(0);
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(evaluation))).code).toBe(0);
    const again = await completed((e) => e.status!.runs!.final === 20 && e.metadata!.resourceVersion !== done.metadata!.resourceVersion)();
    const rerun = await ourRuns();
    expect([...rerun.keys()].sort()).toEqual([...runs.keys()].sort());
    const changed = [...rerun].filter(([name, run]) => run.metadata!.uid !== uids.get(name)).map(([name]) => name);
    expect(changed.sort()).toEqual(deleted.toSorted());
    expect(again.status!.runs).toMatchObject({ total: 20, final: 20, scored: 20, passed: 8 });

    // Deleted: the garbage collector takes its Runs (and their Pods) with it.
    expect((await kubectl(['delete', 'evaluation', EVALUATION_NAME, '-n', ns, '--wait'])).code).toBe(0);
    await waitFor<RunObject>(runsPath, (all) => all.length === 0, 180_000, { labelSelector: `tcab.dev/evaluation=${EVALUATION_NAME}` });
    process.stderr.write(`e2e evaluation: 20 Runs made and final in ${firstPass} ms; two re-run in ${Date.now() - t0 - firstPass} ms (incl. the checks above)\n`);
  }, 900_000);

  it('helm upgrade keeps the API token users hold and the NATS keys (the reader credential still reads); the old dispatcher Pods end on SIGTERM, well before the 30 s grace period', async () => {
    const token = async () => (await kubectl(['get', 'secret', `${RELEASE}-tcab-api-token`, '-n', ns, '-o', 'jsonpath={.data.token}'])).stdout;
    const before = await token();
    expect(Buffer.from(before, 'base64').toString()).toMatch(/^[A-Za-z0-9]{40}$/);
    const natsKeys = async () => (await kubectl(['get', 'secret', NATS_AUTH_SECRET, '-n', ns, '-o', 'jsonpath={.metadata.uid} {.data}'])).stdout;
    const keysBefore = await natsKeys();
    const old = new Set((await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/component=dispatcher')).items.map((p) => p.metadata!.name!));
    // From the Pod's deletion (SIGTERM) to its removal, per old Pod: a dispatcher that ignored SIGTERM took 30 s.
    const terminating: Record<string, number> = {};
    const gone: Record<string, number> = {};
    const t0 = Date.now();
    const watch = await watchAll<V1Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app.kubernetes.io/component=dispatcher' }, (type, pod) => {
      const name = pod.metadata!.name!;
      if (!old.has(name)) return;
      if (pod.metadata?.deletionTimestamp) terminating[name] ??= Date.now();
      if (type === 'DELETED') gone[name] ??= Date.now();
    });
    try {
      const upgrade = await helm(['upgrade', RELEASE, CHART, '-n', ns, '--reuse-values', '--set', 'dispatcher.maxInFlight=5', '--wait', '--timeout', '180s']);
      expect(upgrade.code, upgrade.stderr).toBe(0);
      expect(await token()).toBe(before);
      expect(await natsKeys()).toBe(keysBefore);
      expect((await readRunUntil(`${ns}_hello`, (all) => all.some((i) => i.kind === 'result'), 30_000)).some((i) => i.kind === 'result')).toBe(true);
      await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => !pods.some((p) => old.has(p.metadata!.name!)), 60_000, { labelSelector: 'app.kubernetes.io/component=dispatcher' });
    } finally {
      watch.stop();
    }
    const stopping = Object.fromEntries([...old].map((name) => [name, (gone[name] ?? Date.now()) - (terminating[name] ?? t0)]));
    process.stderr.write(`e2e helm upgrade: old dispatcher Pods gone ${JSON.stringify(Object.fromEntries([...old].map((n) => [n, (gone[n] ?? 0) - t0])))} ms after the upgrade started; deletion -> gone ${JSON.stringify(stopping)} ms\n`);
    for (const [name, ms] of Object.entries(stopping)) expect(ms, name).toBeLessThan(20_000);
  }, 240_000);

  it('the canary API key is in no event, container log, Run status or Kubernetes Event', async () => {
    expect(streams.length).toBeGreaterThanOrEqual(4);
    for (const stream of streams) expect(stream).not.toContain(CANARY);
    const captured = logs.logs();
    const names = Object.keys(captured);
    // Every Pod's containers: dispatchers (both generations), NATS, Verdaccio, the stub models, each driver.
    for (const prefix of [`${RELEASE}-tcab-dispatcher-`, `${RELEASE}-tcab-nats-0_`, `${RELEASE}-tcab-npm-cache-0_`, 'stub-models-', 'tcab-run-hello_', 'tcab-run-capped-one_']) {
      expect(names.some((n) => n.startsWith(prefix)), `${prefix} in ${names.join(', ')}`).toBe(true);
    }
    for (const [name, text] of Object.entries(captured)) expect(text, name).not.toContain(CANARY);
    // Nor any NKey seed (operator SO…, account SA…, user SU…: the auth Secret's keys, the runs' and the reader's
    // credentials) in a log or on a stream.
    for (const [name, text] of [...Object.entries(captured), ...streams.map((t, i) => [`stream ${i}`, t] as const)]) expect(text, name).not.toMatch(NKEY_SEED);
    // And `kubectl logs` of every Pod still there (the same kubelet files, through the apiserver).
    const live = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns)).items;
    expect(live.length).toBeGreaterThanOrEqual(5);
    for (const pod of live) {
      const out = await kubectl(['logs', '-n', ns, pod.metadata!.name!, '--all-containers']);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout.length, pod.metadata!.name).toBeGreaterThan(0);
      expect(out.stdout, pod.metadata!.name).not.toContain(CANARY);
    }
    // The driver's log is its event stream (NDJSON on stdout, the same as NATS got) and its result (stderr).
    expect(captured[names.find((n) => n.startsWith('tcab-run-hello_'))!]).toMatch(/stdout F \{"type":"agent".*\n.*stderr F \{"run_id":"[^"]+_hello".*"outcome":"succeeded"/s);
    for (const kind of ['runs', 'events', 'pods', 'configmaps']) {
      const all = await kubectl(['get', kind, '-n', ns, '-o', 'json']);
      expect(all.code).toBe(0);
      expect(all.stdout, kind).not.toContain(CANARY);
    }
  });

  it('helm uninstall leaves no workload, RBAC, Service, volume claim or NATS key Secret behind', async () => {
    // Foreground cascade: helm returns once the Deployments' ReplicaSets and Pods are gone too.
    // How long each Pod takes to go (a process that ignores SIGTERM holds its Pod for the whole grace period).
    const gone: Record<string, number> = {};
    const t0 = Date.now();
    const watch = await watchAll<V1Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app.kubernetes.io/instance=${RELEASE}` }, (type, pod) => {
      if (type === 'DELETED') gone[pod.metadata!.name!] = Date.now() - t0;
    });
    const uninstall = await helm(['uninstall', RELEASE, '-n', ns, '--cascade', 'foreground', '--wait']);
    watch.stop();
    expect(uninstall.code, uninstall.stderr).toBe(0);
    process.stderr.write(`e2e helm uninstall --wait: ${Date.now() - t0} ms; Pods gone after (ms): ${JSON.stringify(gone)}\n`);
    const left = await kubectl(['get', 'deployments,statefulsets,pods,services,serviceaccounts,roles,rolebindings,configmaps', '-n', ns, '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
    const cluster = await kubectl(['get', 'clusterroles,clusterrolebindings', '-o', 'name']);
    expect(cluster.stdout).not.toContain(`${RELEASE}-tcab-${ns}-harnessconfigs`);
    // The StatefulSets' claims go with them (persistentVolumeClaimRetentionPolicy whenDeleted: Delete), and their
    // volumes with the claims (the StorageClass reclaims with Delete).
    await waitFor(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, (claims) => claims.length === 0, 60_000);
    // The NATS keys go with their owner, the dispatcher's ServiceAccount (the garbage collector deletes them).
    await waitFor(`/api/v1/namespaces/${ns}/secrets`, (secrets) => secrets.length === 0, 60_000, { fieldSelector: `metadata.name=${NATS_AUTH_SECRET}` });
    await waitFor<V1PersistentVolume>('/api/v1/persistentvolumes', (volumes) => volumes.every((v) => v.spec?.claimRef?.namespace !== ns), 60_000);
  }, 180_000);
});
