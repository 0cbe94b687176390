// Issue 22: in a driver Pod the driver and the harness are two identities, as on a workstation's `sudo tcab run`:
// the driver is uid 0 with a few capabilities (dispatcher/pods/driver-pod.ts DRIVER_CAPABILITIES), the harness and
// everything it starts uid 1000 with none. A gg run in a real driver Pod (built by buildDriverPod, run by the real
// node's kubelet, containerd and runc) whose "agent" is the stub model: it has the harness's shell run each
// attempt an untrusted agent might make against the driver; each must fail, and the run still succeeds with its
// normal events. The container is the run's alone, so the driver is PID 1 of its PID namespace.
//
// Attempts are data (adversary-attempts.ts): one shell step of the scripted agent each, printing `key=value` lines
// that come back as the tool result the model got. More attempts (e.g. NATS ones) are one entry there and one `it`
// here reading reportOf(<its name>).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { createAccount, createUser } from '@nats-io/nkeys';
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { DRIVER_CAPABILITIES, buildDriverPod, clusterRunId, driverPodName } from '../../dispatcher/pods/driver-pod.ts';
import { ATTEMPTS, ZERO, capabilityMask } from './adversary-attempts.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { RunSpec } from '../../shared/run.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { toolResults } from '../../driver/stub-models/tool-results.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { NatsServer } from '../support/nats-server.ts';
import { createNamespace, kubectl, readRunUntil, waitFor } from './support.ts';
import { ggDriverEnv } from './gg-driver-env.ts';

const CANARY = 'sk-ant-fake-identity-canary-51f2';
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let stub: StubModelServer;
let podName: string;
let runId: string;
let pod: V1Pod;
let events: StreamItem[];
let podLog = '';
/** The same Pod with SYS_PTRACE added, as the namespace's baseline admission answered it (server dry run). */
let refusedPtrace: { code: number; stderr: string };
/** Each attempt's key=value lines, from what the model got back. */
const reports = new Map<string, Map<string, string>>();

/** A gg shell tool result ({exit_code, timed_out, output}) as the model got it: the command's output. */
function shellOutput(result: string): string {
  try {
    return String((JSON.parse(result) as { output?: unknown }).output ?? '');
  } catch {
    return result;
  }
}

function reportOf(name: string): Map<string, string> {
  const r = reports.get(name);
  if (!r) throw new Error(`attempt ${name} reported nothing; tool results: ${JSON.stringify(toolResults(stub.requests))}\n${podLog}`);
  return r;
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('identity'));
  nats = await NatsServer.start();
  const script = { steps: [...ATTEMPTS.map((a) => ({ tool: { name: 'shell', args: { command: `echo attempt=${a.name}\n${a.script}` } } })), { text: 'All done.' }] };
  stub = await startStubModelServer({ script });
  const run = { namespace: ns, name: 'adversary', uid: randomUUID() };
  podName = driverPodName(run);
  runId = clusterRunId(run);
  const config = dispatcherConfig({
    ...(await ggDriverEnv({ namespace: ns, natsUrl: nats.url, stubUrl: stub.url })),
    // gg signs in with a key; the Secret is mounted all the same, for the agent to try.
    TCAB_SUBSCRIPTION_SECRETS: JSON.stringify({ gg: 'gg-subscription' }),
  });
  expect((await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, `--from-literal=anthropic=${CANARY}`])).code).toBe(0);
  const subscription = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gg-subscription', namespace: ns }, stringData: { 'credentials.json': '{"token":"sk-fake-subscription-token-0d4e"}' } };
  expect((await kubectl(['apply', '-f', '-'], JSON.stringify(subscription))).code).toBe(0);
  // A creds file of the right shape for a user no operator trusts (this NATS has no auth; the driver reads it).
  const dummyCreds = fmtCreds(await encodeUser('tcab-identity-test-dummy', createUser(), createAccount()), createUser());
  const credsSecret = `${podName}-nats`;
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: credsSecret, namespace: ns }, stringData: { 'nats.creds': new TextDecoder().decode(dummyCreds) } };
  expect((await kubectl(['apply', '-f', '-'], JSON.stringify(secret))).code).toBe(0);
  const spec = RunSpec.parse({
    harness: 'gg',
    model: 'claude-sonnet-4-5',
    prompt: 'look around',
    maxRuntimeSeconds: 120,
    // A test case, so the driver's root also seeds a workspace it hands to the run user.
    testCase: { source: { files: [{ path: 'README.md', content: '# scratch\n' }] }, init: 'echo ready > .initialized' },
  });
  const built = buildDriverPod(run, spec, config, ['ANTHROPIC_API_KEY'], { natsCredsSecret: credsSecret });
  // No Run object and no dispatcher here: no owner (the garbage collector would remove a Pod whose owner is
  // missing), and no start_container event to wait for.
  built.metadata!.ownerReferences = [];
  for (const e of built.spec!.containers[0]!.env!) if (e.name === 'TCAB_AWAIT_POD_START_SECONDS') e.value = '0';
  // The apiserver's PodSecurity admission enforces the baseline standard here: the driver's root fits it.
  expect((await kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=baseline'])).code).toBe(0);
  const withPtrace = structuredClone(built);
  withPtrace.spec!.containers[0]!.securityContext!.capabilities!.add!.push('SYS_PTRACE');
  refusedPtrace = await kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(withPtrace));
  const created = await kubectl(['apply', '-f', '-'], JSON.stringify(built));
  expect(created.code, created.stderr).toBe(0);

  const finished = (p: V1Pod) => p.metadata?.name === podName && ['Succeeded', 'Failed'].includes(p.status?.phase ?? '');
  pod = (await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => pods.some(finished), 240_000)).find(finished)!;
  podLog = (await kubectl(['logs', podName, '-n', ns])).stdout;
  events = await readRunUntil(nats.url, runId, (items) => items.some((i) => i.kind === 'result'), 60_000);
  for (const result of toolResults(stub.requests)) {
    const lines = shellOutput(result).split('\n').filter((l) => l.includes('='));
    const name = lines.find((l) => l.startsWith('attempt='))?.slice('attempt='.length);
    if (name) reports.set(name, new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const)));
  }
}, 420_000);

afterAll(async () => {
  await stub?.close();
  await nats?.stop();
  await removeNs?.();
});

describe('a driver Pod: the driver (uid 0) and the harness (uid 1000) are two identities', () => {
  it('the run succeeds with its normal events: every attempt ran as a command, the result is the driver\'s', () => {
    expect(pod.status?.phase, podLog).toBe('Succeeded');
    const stages = events.flatMap((i) => (i.kind === 'event' && i.event.type === 'system' ? [`${i.event.stage}:${i.event.status}`] : []));
    expect(stages, podLog).toEqual(expect.arrayContaining(['probe_harness:completed', 'init_test_case:completed', 'teardown:completed']));
    expect(stages.filter((s) => s.endsWith(':failed')), podLog).toEqual([]);
    const commands = events.filter((i) => i.kind === 'event' && i.event.type === 'command');
    expect(commands).toHaveLength(ATTEMPTS.length);
    const result = events.find((i) => i.kind === 'result');
    expect(result?.kind === 'result' && result.result, podLog).toMatchObject({ outcome: 'succeeded', harness_slug: 'gg', run_id: runId });
    expect(JSON.stringify(events)).not.toContain(CANARY);
    for (const attempt of ATTEMPTS) expect(reports.has(attempt.name), attempt.name).toBe(true);
  });

  it('the Pod is admitted under the Pod Security Standards\' baseline (enforced by the apiserver), which refuses the same Pod with SYS_PTRACE', () => {
    expect(pod.status?.phase).toBe('Succeeded'); // admitted, and it ran to the end
    expect(refusedPtrace.code).not.toBe(0);
    expect(refusedPtrace.stderr).toMatch(/violates PodSecurity "baseline:[^"]*": non-default capabilities \(container "driver" must not include "SYS_PTRACE"/);
  });

  it('the harness\'s shell is uid/gid 1000 with no supplementary group, no capability (CapEff, CapPrm 0), no_new_privs, seccomp, a read-only root and no ServiceAccount token; the driver is PID 1, uid 0 with exactly the driver\'s capabilities', () => {
    const r = Object.fromEntries(reportOf('identity'));
    expect(r['driver.cmdline']).toContain('/opt/tcab/driver/main.ts');
    expect(r).toMatchObject({
      'shell.Uid': '1000\t1000\t1000\t1000',
      'shell.Gid': '1000\t1000\t1000\t1000',
      'shell.CapInh': ZERO,
      'shell.CapPrm': ZERO,
      'shell.CapEff': ZERO,
      'shell.CapAmb': ZERO,
      'shell.NoNewPrivs': '1',
      'shell.Seccomp': '2',
      'shell.rootfs': 'readonly',
      'shell.token': 'absent',
      // gg's own key and endpoint (what the harness is meant to have); none of the driver's (TCAB_NATS_*, TCAB_RUN_*).
      'shell.tcabVariables': 'TCAB_GG_API_KEY TCAB_GG_BASE_URL ',
      'driver.Uid': '0\t0\t0\t0',
      'driver.CapPrm': capabilityMask(DRIVER_CAPABILITIES),
      'driver.CapEff': capabilityMask(DRIVER_CAPABILITIES),
      'driver.CapBnd': capabilityMask(DRIVER_CAPABILITIES),
      'driver.NoNewPrivs': '1',
      'driver.Seccomp': '2',
    });
    // No fsGroup: the run user is in no group but its own.
    expect(r['shell.Groups'] ?? '').toBe('');
  });

  it('cannot read the driver\'s environment (nor see its working directory)', () => {
    const r = reportOf('environ');
    expect(r.get('environ.exit')).not.toBe('0');
    expect(r.get('environ.error')).toMatch(/Permission denied/);
    expect(r.get('cwd.exit')).not.toBe('0');
    expect(r.get('cwd.error')).toMatch(/Permission denied/);
    expect(r.get('fd.exit')).not.toBe('0');
    expect(r.get('fd.error')).toMatch(/Permission denied/);
  });

  it('cannot read the driver\'s memory or its mappings', () => {
    const r = reportOf('memory');
    expect(r.get('mem.exit')).not.toBe('0');
    expect(r.get('mem.error')).toMatch(/Permission denied/);
    expect(r.get('maps.exit')).not.toBe('0');
    expect(r.get('maps.error')).toMatch(/Permission denied/);
  });

  it('cannot read the run\'s NATS credential nor the mounted subscription Secret: both 0400 root:root (no fsGroup)', () => {
    const r = reportOf('credential');
    for (const key of ['creds', 'subscription']) {
      expect(r.get(`${key}.exit`), key).not.toBe('0');
      expect(r.get(`${key}.error`), key).toMatch(/Permission denied/);
      expect(r.get(`${key}.stat`), key).toBe('400 0 0');
    }
  });

  it('cannot signal the driver (SIGTERM, SIGKILL, SIGSTOP: EPERM)', () => {
    const r = reportOf('signal');
    for (const key of ['term', 'kill', 'stop']) {
      expect(r.get(`${key}.exit`), key).not.toBe('0');
      expect(r.get(`${key}.error`), key).toMatch(/Operation not permitted/);
    }
  });

  it('a daemon the agent left in its own session is found (by the run user, the driver lacking SYS_PTRACE) and killed at teardown', () => {
    expect(reportOf('daemon').get('daemon.pid')).toMatch(/^\d+$/);
    const warning = events.find((i) => i.kind === 'event' && i.event.type === 'warning' && i.event.code === 'leftover_processes');
    expect(warning?.kind === 'event' && warning.event.type === 'warning' && warning.event.message, podLog).toMatch(/killed: sleep \(\d+\)/);
    const teardown = events.find((i) => i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'teardown' && i.event.status === 'completed');
    expect(teardown?.kind === 'event' && teardown.event.type === 'system' && teardown.event.message, podLog).toMatch(/^run home, workspace and install prefix removed; killed 1 process/);
  });

  it('sticky directories the agent made (its HOME included) do not stop teardown from removing the run\'s directories', () => {
    expect(reportOf('sticky').get('sticky.made')).toBe('yes');
    const failed = events.filter((i) => i.kind === 'event' && i.event.type === 'system' && i.event.stage === 'teardown' && i.event.status === 'failed');
    expect(failed, podLog).toEqual([]);
  });

  it('cannot ptrace the driver (PTRACE_ATTACH: EPERM)', () => {
    const r = reportOf('ptrace');
    expect(r.get('ptrace.result')).toBe('-1');
    expect(r.get('ptrace.errno')).toBe('1');
  });
});
