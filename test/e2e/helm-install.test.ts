// The whole path on the test control plane: `helm install` the chart (the dispatcher replicas run as Pods of the
// process kubelet under the chart's ServiceAccount token, so its RBAC is exercised for real), `kubectl apply` a
// Run, and a NATS subscriber sees the run's events and result; the Run ends Succeeded with usage and cost.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import type { RunObject } from '../../dispatcher/kube/resources.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { NatsServer, freePort } from '../support/nats-server.ts';
import { NETWORK_PASSTHROUGH } from '../../driver/child-env.ts';
import { createNamespace, kubectl, readRunUntil, waitFor } from '../cluster/support.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const CANARY = 'sk-ant-fake-e2e-canary-93b1';
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let stub: StubModelServer;
let claudeStub: StubModelServer;

const networkEnv = () => Object.fromEntries(NETWORK_PASSTHROUGH.filter((name) => process.env[name]).map((name) => [name, process.env[name]!]));
const helm = (args: string[]) => run(join(inject('clusterBinDir'), 'helm'), ['--kubeconfig', inject('kubeconfig'), ...args], { encoding: 'utf8' });

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('e2e'));
  nats = await NatsServer.start();
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } }, { text: 'Wrote hello.txt.' }] } });
  claudeStub = await startStubModelServer({ script: { steps: [{ text: 'Hello from the stub model.' }] } });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, `--from-literal=anthropic=${CANARY}`]);
});

afterAll(async () => {
  await helm(['uninstall', 'tcab', '-n', ns, '--wait']).catch(() => undefined);
  await stub?.close();
  await claudeStub?.close();
  await nats?.stop();
  await removeNs();
});

describe('helm install -> kubectl apply Run -> NATS subscriber', () => {
  it('runs a gg Run through the installed dispatcher and driver Pods', async () => {
    const values = {
      dispatcher: { api: { port: await freePort() }, leaseDurationSeconds: 5 },
      nats: { url: nats.url, bundled: { enabled: false } },
      credentials: { apiKeys: [{ env: 'ANTHROPIC_API_KEY', secret: 'provider-keys', key: 'anthropic' }] },
      // Driver Pods run as uid 1000 with HOME=/: npm's cache goes to the Pod's scratch space.
      // This machine reaches the npm registry through its CA/proxy settings: the operator's driver.env carries them.
      driver: { env: { TCAB_BASE_URL_GG: stub.url, TCAB_BASE_URL_CLAUDE: claudeStub.url, TCAB_NPM_CACHE: '/tmp/npm-cache', ...networkEnv() } },
    };
    const install = await helm(['install', 'tcab', join(ROOT, 'charts', 'tcab'), '-n', ns, '--set-json', `dispatcher=${JSON.stringify(values.dispatcher)}`, '--set-json', `nats=${JSON.stringify(values.nats)}`, '--set-json', `credentials=${JSON.stringify(values.credentials)}`, '--set-json', `driver=${JSON.stringify(values.driver)}`, '--wait', '--timeout', '120s']);
    expect(install.stdout).toContain('STATUS: deployed');
    expect(install.stdout).toContain('kubectl apply'); // NOTES.txt tells how to submit a Run
    const dispatchers = await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => pods.filter((p) => p.status?.phase === 'Running').length === 2, 60_000, { labelSelector: 'app.kubernetes.io/component=dispatcher' });
    expect(dispatchers.every((p) => p.spec?.serviceAccountName === 'tcab-tcab-dispatcher')).toBe(true);
    // The dispatcher's token may list/watch the credentials Secrets named in values, and no other Secret (the
    // Run below is only available because its metadata watch of provider-keys works under this Role).
    const canI = async (...args: string[]) => (await kubectl(['auth', 'can-i', ...args, '-n', ns, `--as=system:serviceaccount:${ns}:tcab-tcab-dispatcher`])).stdout.trim();
    expect(await canI('watch', 'secrets/provider-keys')).toBe('yes');
    expect(await canI('list', 'secrets')).toBe('no');
    expect(await canI('get', 'secrets/provider-keys')).toBe('no');
    expect(await canI('watch', 'secrets/tcab-tcab-api-token')).toBe('no');

    const applied = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'hello' }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'write hello.txt', maxRuntimeSeconds: 120 } }));
    expect(applied.code).toBe(0);
    const [done] = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (runs) => ['Succeeded', 'Failed'].includes(runs[0]?.status?.phase ?? ''), 180_000);
    expect(done!.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', harnessVersion: '0.1.0', canonicalModel: 'anthropic/claude-sonnet-4.5' });
    expect(done!.status!.comparableCostUsd).toBeGreaterThan(0);
    // A subscriber that comes late still gets the whole run from the stream.
    const items = await readRunUntil(nats.url, `${ns}_hello`, (all) => all.some((i) => i.kind === 'result'), 30_000);
    const types = new Set(items.filter((i) => i.kind === 'event').map((i) => (i.kind === 'event' ? i.event.type : '')));
    expect([...types]).toEqual(expect.arrayContaining(['system', 'write', 'agent']));
    expect(JSON.stringify(items)).not.toContain(CANARY);
    const printed = await kubectl(['get', 'runs', '-n', ns]);
    expect(printed.stdout).toMatch(/hello\s+gg\s+claude-sonnet-4-5\s+Succeeded/);

    // The API token is generated once and survives an upgrade (users keep the token they hold).
    const token = async () => (await kubectl(['get', 'secret', 'tcab-tcab-api-token', '-n', ns, '-o', 'jsonpath={.data.token}'])).stdout;
    const before = await token();
    expect(Buffer.from(before, 'base64').toString()).toMatch(/^[A-Za-z0-9]{40}$/);
    await helm(['upgrade', 'tcab', join(ROOT, 'charts', 'tcab'), '-n', ns, '--reuse-values', '--set', 'dispatcher.maxInFlight=5']);
    expect(await token()).toBe(before);
  }, 400_000);

  it('runs the real Claude Code CLI (newest release, installed in the driver Pod) with a test case; `tcab events follow` gets the ordered stream', async () => {
    const spec = { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Say hello.', maxRuntimeSeconds: 300, testCase: { source: { files: [{ path: 'README.md', content: '# scratch\n' }] }, init: 'echo ready > .initialized' } };
    expect((await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: 'claude-hello' }, spec }))).code).toBe(0);
    // `tcab events follow` from the start: replays, follows live, stops at the result; exit status = outcome.
    const follow = await run(process.execPath, [join(ROOT, 'cli/main.ts'), 'events', 'follow', `${ns}_claude-hello`, '--nats', nats.url, '--json'], { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 }).catch((error: { stdout: string; stderr: string; code: number }) => error);
    const events = follow.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; stage?: string; status?: string });
    const stages = events.filter((e) => e.type === 'system').map((e) => `${e.stage}:${e.status}`);
    const order = ['pull_image:completed', 'start_container:completed', 'install_harness:completed', 'probe_harness:completed', 'init_test_case:completed', 'teardown:completed'];
    expect(order.map((s) => stages.indexOf(s)), follow.stderr + stages.join(' ')).toEqual([...order.map((s) => stages.indexOf(s))].sort((a, b) => a - b));
    expect(order.every((s) => stages.includes(s)), stages.join(' ')).toBe(true);
    // The session's own events sit between init and teardown.
    const agentAt = events.findIndex((e) => e.type === 'agent');
    expect(agentAt).toBeGreaterThan(events.findIndex((e) => e.type === 'system' && e.stage === 'init_test_case'));
    const [done] = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (runs) => ['Succeeded', 'Failed'].includes(runs.find((r) => r.metadata?.name === 'claude-hello')?.status?.phase ?? ''), 60_000, { fieldSelector: 'metadata.name=claude-hello' });
    expect(done!.status).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', authMode: 'api-key' });
    expect(done!.status!.harnessVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(done!.status!.usage!.input).toBeGreaterThan(0);
  }, 400_000);

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
      }, 180_000);
      expect(peak).toBe(1);
      expect(capped(done).map((r) => r.status?.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    } finally {
      await kubectl(['delete', 'harnessconfig', 'gg']);
    }
  }, 300_000);

  it('helm uninstall leaves no dispatcher, RBAC or Service behind', async () => {
    // Foreground cascade: helm returns only once the Deployments' ReplicaSets and Pods are gone too (the default
    // background cascade returns while the garbage collector is still deleting the dispatcher Pods).
    await helm(['uninstall', 'tcab', '-n', ns, '--cascade', 'foreground', '--wait']);
    const left = await kubectl(['get', 'deployments,pods,services,serviceaccounts,roles,rolebindings', '-n', ns, '-l', 'app.kubernetes.io/instance=tcab', '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
    const cluster = await kubectl(['get', 'clusterroles,clusterrolebindings', '-o', 'name']);
    expect(cluster.stdout).not.toContain(`tcab-tcab-${ns}-harnessconfigs`);
  }, 120_000);
});
