// NATS auth from the dispatcher's side, against the test control plane (its garbage collector included), a real
// nats-server in operator mode and a real driver Pod on the real node:
//   - the install's auth Secret is created once (two replicas racing get the same keys), owned by the dispatcher's
//     ServiceAccount, and reused, unchanged, by a restarted dispatcher; deleting the ServiceAccount (what
//     `helm uninstall` does) removes it;
//   - a claimed Run gets its own credential Secret, owned by the Run and mounted by its Pod; with it one may publish
//     that run's subjects and nothing else; deleting the Run revokes the user and the Secret goes with the Run;
//   - a Run succeeds through a real driver holding only its own credential, which is revoked once the Run is final.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { startStubModelServer } from '../driver/stub-models/server.ts';
import type { StubModelServer } from '../driver/stub-models/server.ts';
import { credentialsClaims, runInboxPrefix } from '../nats/auth/index.ts';
import type { NatsAuthBundle } from '../nats/auth/index.ts';
import { RunStream } from '../nats/result-consumer.ts';
import { connectNats, natsSettings } from '../nats/settings.ts';
import { createLogger } from '../shared/log.ts';
import { podUrl, realNode } from '../test/cluster/real-node-context.ts';
import { clusterConfig, createNamespace, kubectl, waitFor } from '../test/cluster/support.ts';
import { nextServerError, rejection } from '../test/support/nats-auth.ts';
import { NatsServer } from '../test/support/nats-server.ts';
import { ensureNatsAuthSecret } from './auth/auth-secret.ts';
import { startNatsAuth } from './auth/nats-identity.ts';
import { CREDS_KEY, NATS_USER_EXPIRES_LABEL, NATS_USER_LABEL, runCredentialsSecretName } from './auth/run-credentials.ts';
import { dispatcherConfig } from './config.ts';
import { Dispatcher } from './controller/dispatcher.ts';
import { dispatcherMetrics } from './controller/metrics.ts';
import type { RunObject } from '../kube/resources.ts';
import { driverPodName } from './pods/driver-pod.ts';

const AUTH_SECRET = 'tcab-nats-auth';
const SERVICE_ACCOUNT = 'tcab-dispatcher';
let ns: string;
let removeNs: () => Promise<void>;
let core: CoreV1Api;
let nats: NatsServer | undefined;
let stub: StubModelServer;
let env: Record<string, string>;
const logs: string[] = [];
const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('nats-auth'));
  core = clusterConfig().makeApiClient(CoreV1Api);
  expect((await kubectl(['apply', '-f', join(import.meta.dirname, '..', 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  expect((await kubectl(['create', 'serviceaccount', SERVICE_ACCOUNT, '-n', ns])).code).toBe(0);
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'echo hi' } } }, { text: 'All done.' }] } });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, '--from-literal=anthropic=sk-ant-fake-nats-auth']);
  env = {
    TCAB_NAMESPACE: ns,
    TCAB_DRIVER_IMAGE: realNode().images.driver,
    TCAB_DRIVER_CPU: '100m',
    TCAB_DRIVER_MEMORY: '512Mi',
    TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'provider-keys', key: 'anthropic' }]),
    TCAB_DRIVER_ENV: JSON.stringify({ TCAB_BASE_URL_GG: await podUrl(stub.url) }),
    TCAB_RESULT_GRACE_SECONDS: '15',
    TCAB_NATS_AUTH_SECRET: AUTH_SECRET,
    TCAB_SERVICE_ACCOUNT: SERVICE_ACCOUNT,
  };
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await stub?.close();
  await nats?.dispose();
  await removeNs?.();
});

const readSecret = (name: string) => core.readNamespacedSecret({ namespace: ns, name });
const secretGone = (name: string) => waitFor<V1Secret>(`/api/v1/namespaces/${ns}/secrets`, (all) => all.length === 0, 60_000, { fieldSelector: `metadata.name=${name}` });
const apply = async (name: string) => {
  const run = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120 } };
  const out = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(run));
  expect(out.code, out.stderr).toBe(0);
};
const runWhere = async (name: string, done: (run: RunObject) => boolean, ms = 150_000) => (await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.some(done), ms, { fieldSelector: `metadata.name=${name}` }))[0]!;
const podOf = async (run: RunObject) => (await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (all) => all.length === 1, 60_000, { fieldSelector: `metadata.name=${driverPodName({ namespace: ns, name: run.metadata!.name!, uid: run.metadata!.uid! })}` }))[0]!;
const credsIn = (secret: V1Secret) => Buffer.from(secret.data![CREDS_KEY]!, 'base64').toString('utf8');

/** A dispatcher as main.ts starts one with auth on: the Secret, its own identity, per-run credentials. */
async function startDispatcher(overrides: Record<string, string> = {}) {
  const settings = dispatcherConfig({ ...env, ...overrides, TCAB_NATS_URL: await podUrl(nats!.url) });
  const auth = await startNatsAuth(core, settings, natsSettings(nats!.url), log);
  const stream = await RunStream.connect(auth.settings);
  const dispatcher = new Dispatcher({ config: clusterConfig(), settings, events: stream, metrics: dispatcherMetrics(), log, natsAuth: auth });
  await dispatcher.start();
  dispatcher.setLeading(true); // the only replica
  await stream.consumeResults((runId, result, ack) => dispatcher.onResult(runId, result, ack), (m) => logs.push(m));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await dispatcher.stop();
    await stream.close();
    await auth.close();
  };
  stops.push(stop);
  return { bundle: auth.bundle, stop };
}

describe('NATS auth, the dispatcher\'s side', () => {
  let bundle: NatsAuthBundle;
  let created: V1Secret;

  it('creates the auth Secret once (two replicas racing get the same keys), immutable, owned by its ServiceAccount', async () => {
    const ref = { namespace: ns, name: AUTH_SECRET, serviceAccount: SERVICE_ACCOUNT };
    const [a, b] = await Promise.all([ensureNatsAuthSecret(core, ref, log), ensureNatsAuthSecret(core, ref, log)]);
    expect(a).toEqual(b);
    bundle = a;
    created = await readSecret(AUTH_SECRET);
    const account = await core.readNamespacedServiceAccount({ namespace: ns, name: SERVICE_ACCOUNT });
    expect(created).toMatchObject({ immutable: true, metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ServiceAccount', name: SERVICE_ACCOUNT, uid: account.metadata!.uid }] } });
    expect(Object.keys(created.data!).sort()).toEqual(['auth.conf', 'bundle.json', 'reader.creds']);
    nats = await NatsServer.start({ auth: bundle });
  });

  it('gives a claimed Run its own credential: owned by the Run, mounted by its Pod, good for that run\'s subjects only; deleting the Run revokes it and removes the Secret', async () => {
    // Its Pod can never be scheduled (no node has 64 CPUs): the Run stays claimed and its credential live.
    const first = await startDispatcher({ TCAB_DRIVER_CPU: '64' });
    expect(first.bundle).toEqual(bundle);
    await apply('parked');
    const run = await runWhere('parked', (r) => r.status?.phase === 'Dispatched', 60_000);
    const ref = { namespace: ns, name: 'parked', uid: run.metadata!.uid! };
    const name = runCredentialsSecretName(ref);
    const secret = await readSecret(name);
    expect(secret.metadata!.ownerReferences).toEqual([{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', name: 'parked', uid: ref.uid, controller: true, blockOwnerDeletion: true }]);
    const pod = await podOf(run);
    expect(pod.spec!.volumes).toContainEqual(expect.objectContaining({ secret: expect.objectContaining({ secretName: name, defaultMode: 0o400 }) }));
    for (const label of [NATS_USER_LABEL, NATS_USER_EXPIRES_LABEL]) expect(pod.metadata!.labels![label]).toBe(secret.metadata!.labels![label]);
    expect(credentialsClaims(credsIn(secret))).toEqual({ publicKey: secret.metadata!.labels![NATS_USER_LABEL], expiresAt: new Date(Number(secret.metadata!.labels![NATS_USER_EXPIRES_LABEL]) * 1000) });
    // Its only NATS identity is its own: no shared user, password, token or other creds file reaches the Pod.
    const natsEnv = pod.spec!.containers[0]!.env!.filter((e) => e.name.startsWith('TCAB_NATS_'));
    expect(natsEnv.map((e) => e.name).sort()).toEqual(['TCAB_NATS_CREDS', 'TCAB_NATS_INBOX_PREFIX', 'TCAB_NATS_URL']);
    expect(natsEnv.find((e) => e.name === 'TCAB_NATS_INBOX_PREFIX')!.value).toBe(runInboxPrefix(`${ns}_parked`));

    const runId = `${ns}_parked`;
    const driver: NatsConnection = await connectNats(natsSettings(nats!.url, { credsText: credsIn(secret), inboxPrefix: runInboxPrefix(runId) }), { name: 'as the driver' });
    try {
      const js = jetstream(driver, { timeout: 5000 });
      await expect(js.publish(`tcab.run.${runId}.event.agent`, '{}')).resolves.toMatchObject({ stream: 'TCAB_RUNS' });
      expect(await rejection(js.publish(`tcab.run.${ns}_other.result`, '{}'))).toMatch(/Permissions Violation for Publish/);
      const refused = nextServerError(driver);
      driver.subscribe('tcab.run.>');
      expect(await refused).toMatch(/Permissions Violation for Subscription to "tcab\.run\.>"/);

      const dropped = nextServerError(driver);
      expect((await kubectl(['delete', 'run', 'parked', '-n', ns, '--wait=false'])).code).toBe(0);
      expect(await dropped).toMatch(/revoked|Authorization Violation/i);
    } finally {
      await driver.close();
    }
    await secretGone(name);
    await first.stop();
  }, 200_000);

  it('a restarted dispatcher reuses the Secret unchanged; a Run succeeds through a real driver on its own credential, revoked once final', async () => {
    await startDispatcher();
    const reread = await readSecret(AUTH_SECRET);
    expect(reread.metadata).toMatchObject({ uid: created.metadata!.uid, resourceVersion: created.metadata!.resourceVersion });
    expect(reread.data).toEqual(created.data);

    await apply('real');
    const run = await runWhere('real', (r) => ['Succeeded', 'Failed'].includes(r.status?.phase ?? ''));
    expect(run.status, logs.slice(-40).join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
    const name = runCredentialsSecretName({ namespace: ns, name: 'real', uid: run.metadata!.uid! });
    const creds = credsIn(await readSecret(name));
    const settings = natsSettings(nats!.url, { credsText: creds, inboxPrefix: runInboxPrefix(`${ns}_real`) });
    // Revoked in the background once final: the server refuses the credential from then on.
    await vi.waitFor(async () => expect(await rejection(connectNats({ ...settings }, { name: 'after the end' }).then((nc) => nc.close()))).toMatch(/Authorization Violation|revoked/i), { timeout: 15_000, interval: 250 });

    expect((await kubectl(['delete', 'run', 'real', '-n', ns, '--wait=false'])).code).toBe(0);
    await secretGone(name);
  }, 300_000);

  it('removes the auth Secret with its owner (what `helm uninstall` does to the ServiceAccount)', async () => {
    for (const stop of stops) await stop();
    expect((await kubectl(['delete', 'serviceaccount', SERVICE_ACCOUNT, '-n', ns])).code).toBe(0);
    await secretGone(AUTH_SECRET);
  }, 90_000);
});
