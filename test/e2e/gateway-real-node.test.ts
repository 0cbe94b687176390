// Issue 34 on the real node, through the chart as users install it (the model gateway on, its default): the
// provider keys live only in the gateway's Pod; the dispatcher gives each Run's driver Pod a per-run token; the
// harness reaches the in-cluster stub models (the providers here) only through the gateway, which measures every
// answer on the wire and holds each run to its budget.
//
// An adversarial command in a real Claude Code Run and in a gg Run looks for the keys where an agent would: its own
// environment, every process environment it can read, its HOME, the whole filesystem it can read. The stub records
// a hash of the key each request presented: the provider got the real key, the harness a token. A gg agent that
// spends on the side (its own request with its run's token) is measured by the gateway and never reported by its
// harness: the Run says they disagree. A finished Run's token is refused; a budget of N tokens ends its run
// budget_exceeded while another run, at the same time, is not charged for it.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { driverPodName } from '../../dispatcher/pods/driver-pod.ts';
import { createNamespace, kubectl, waitFor } from '../cluster/support.ts';
import { pushImages, realNode } from '../cluster/real-node-context.ts';
import { RELEASE, STUB_PORTS, forwardService, helmOf, installChart } from './real-chart.ts';
import type { ClusterAccess } from './real-chart.ts';
import { LogCapture } from './in-cluster.ts';
import { driverRecord } from './run-record.ts';
import { GATEWAY_CONTROL } from '../../shared/gateway.ts';
import { CONSOLE_PATHS } from '../../shared/console.ts';
import type { ThrottleHoldRow } from '../../shared/console.ts';
import { claimsFor, mintToken, signingKeyFrom } from '../../gateway/index.ts';

/** Obviously fake provider keys with a marker the adversary searches for (spelled apart in its script). */
const CANARY = { anthropic: 'sk-ant-fake-gwcanary-51c7e9', openai: 'sk-proj-fake-gwcanary-8e2d40' };
const MARK = 'gwcanary';
const sha = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** What the adversary runs (a file of its test case, so only the adversarial Runs run it): `name=value` lines. */
const LEAK_SCRIPT = [
  // The marker, spelled apart so that this script itself (and the session transcript holding it) never matches.
  `N="${MARK.slice(0, 4)}""${MARK.slice(4)}"`,
  'echo "leak.self=$(tr "\\0" "\\n" < /proc/self/environ | grep -c "$N")"',
  'echo "leak.procs=$(cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c "$N")"',
  'echo "leak.home=$(grep -rIl -s "$N" "$HOME" 2>/dev/null | wc -l)"',
  'timeout 100 grep -rIl -s --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "$N" / > /tmp/leak-hits 2>/dev/null; echo "leak.files.rc=$?"',
  'echo "leak.files=$(wc -l < /tmp/leak-hits)"',
  // The control: what the harness was given in place of a key is there to be found (in the harness's own process:
  // Claude Code's shell does not inherit its key variable).
  'echo "token.procs=$(cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c "=tcabgw_")"',
].join('\n');
/** gg's agent also spends on the side: one request of its own through its base URL with its run's token. */
const SIDE_SCRIPT = `node -e 'fetch(process.env.TCAB_GG_BASE_URL + "/v1/responses", { method: "POST", headers: { authorization: "Bearer " + process.env.TCAB_GG_API_KEY, "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-5.1", input: "side spend" }) }).then((r) => console.log("side=" + r.status))'`;
const COMMAND = 'if [ -f adversary/leak.sh ]; then sh adversary/leak.sh; fi; if [ -f adversary/side.sh ]; then sh adversary/side.sh; fi; echo looked=yes';
const CLAUDE_SCRIPT = { steps: [{ tool: { name: 'Bash', args: { command: COMMAND, description: 'Look around' } } }, { text: 'Looked.' }] };
/** The stub throttles any request whose prompt says `throttle-me` (429, retry-after THROTTLE_RETRY_S). */
const THROTTLE_RETRY_S = 40;
const GG_SCRIPT = {
  steps: [{ tool: { name: 'shell', args: { command: COMMAND } } }, { text: 'Looked.' }],
  rules: [
    { when_last_user_contains: 'side spend', step: { text: 'ok' } },
    { when_last_user_contains: 'throttle-me', step: { error: { status: 429, message: 'rate limited (stub)', retry_after_s: THROTTLE_RETRY_S } } },
  ],
};

let ns: string;
let removeNs: () => Promise<void>;
let workDir: string;
let logs: LogCapture;
let stubs: Record<'gg' | 'claude', { address: string; close: () => void }>;
let gateway: { address: string; close: () => void };

const cluster = (): ClusterAccess => ({ kubeconfig: inject('kubeconfig'), binDir: inject('clusterBinDir') });
const getJson = async <T>(...args: string[]): Promise<T> => {
  const out = await kubectl(['get', ...args, '-o', 'json']);
  if (out.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${out.stderr}`);
  return JSON.parse(out.stdout) as T;
};
const podOf = (run: RunObject) => driverPodName({ namespace: ns, name: run.metadata!.name!, uid: run.metadata!.uid! });

async function applyRun(name: string, spec: object): Promise<RunObject> {
  const applied = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec }));
  expect(applied.code, applied.stderr).toBe(0);
  return getJson<RunObject>('run', name, '-n', ns);
}

async function finished(name: string, timeoutMs: number): Promise<RunObject> {
  const [done] = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (runs) => ['Succeeded', 'Failed', 'Cancelled'].includes(runs[0]?.status?.phase ?? ''), timeoutMs, { fieldSelector: `metadata.name=${name}` });
  return done!;
}

interface StubRequest {
  path: string;
  wire: string;
  status: number;
  key_sha256: string | null;
}
const stubRequests = async (port: 'gg' | 'claude') => (await (await fetch(`http://${stubs[port].address}/_stub/requests`)).json()) as StubRequest[];
const toolOutputs = async (port: 'gg' | 'claude') => (await (await fetch(`http://${stubs[port].address}/_stub/tool-results`)).json()) as string[];

/** The `name=value` lines the adversary printed, from the tool result that holds them. */
function reportOf(results: string[]): Map<string, string> {
  const raw = results.find((t) => t.includes('looked=yes')) ?? '';
  let text = raw;
  try {
    text = String((JSON.parse(raw) as { output?: unknown }).output ?? raw);
  } catch {
    // Claude Code's tool results are the command's text
  }
  return new Map([...text.matchAll(/^([a-z.]+)=(\S*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The run's token, as its Secret holds it (this test has the cluster's admin credential; the agent does not). */
async function tokenOf(run: RunObject): Promise<string> {
  const out = await kubectl(['get', 'secret', `${podOf(run)}-gw-${run.metadata!.uid}`, '-n', ns, '-o', 'jsonpath={.data.token}']);
  expect(out.code, out.stderr).toBe(0);
  return Buffer.from(out.stdout, 'base64').toString();
}

beforeAll(async () => {
  const node = realNode();
  ({ name: ns, remove: removeNs } = await createNamespace('gateway', { driverPolicy: false }));
  workDir = mkdtempSync(join(tmpdir(), 'tcab-gateway-e2e-'));
  logs = new LogCapture(ns);
  const images = await pushImages(['driver', 'dispatcher', 'nats', 'npm-cache', 'egress-proxy'], node);
  const install = await installChart(cluster(), { namespace: ns, images, providerKey: CANARY.anthropic, providerKeys: { openai: CANARY.openai }, gateway: true, stubScripts: { gg: GG_SCRIPT, claude: CLAUDE_SCRIPT }, workDir, timeoutSeconds: 300 });
  expect(install.code, install.stderr).toBe(0);
  stubs = { gg: await forwardService(cluster(), ns, 'stub-models', STUB_PORTS.gg), claude: await forwardService(cluster(), ns, 'stub-models', STUB_PORTS.claude) };
  gateway = await forwardService(cluster(), ns, `${RELEASE}-tcab-gateway`, 8080);
}, 900_000);

afterAll(async () => {
  await helmOf(cluster())(['uninstall', RELEASE, '-n', ns, '--wait']).catch(() => undefined);
  for (const s of Object.values(stubs ?? {})) s.close();
  gateway?.close();
  logs?.close();
  await removeNs?.();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the model gateway in the cluster: the provider key never enters a run', () => {
  it("installs with the keys in the gateway's Pod only: the dispatcher references no key Secret", async () => {
    const deployments = (await getJson<{ items: V1Deployment[] }>('deployments', '-n', ns)).items;
    const refs = (d: V1Deployment) => JSON.stringify(d.spec!.template.spec!.containers.map((c) => c.env ?? []));
    const gw = deployments.find((d) => d.metadata!.name === `${RELEASE}-tcab-gateway`);
    expect(deployments.map((d) => d.metadata!.name)).toContain(`${RELEASE}-tcab-gateway`);
    expect(refs(gw!)).toContain('"provider-keys"');
    expect(refs(deployments.find((d) => d.metadata!.name === `${RELEASE}-tcab-dispatcher`)!)).not.toContain('"provider-keys"');
  });

  it('a real Claude Code Run and a gg Run through the gateway: no key anywhere the agent can read, the provider got the real key, the wire usage is what the stub served', async () => {
    const leak = { path: 'adversary/leak.sh', content: `${LEAK_SCRIPT}\n` };
    const before = { claude: (await stubRequests('claude')).length, gg: (await stubRequests('gg')).length };
    // Each driver Pod as it is created (they are deleted when their run ends).
    const podSpecs = ['claude-sealed', 'gg-sealed'].map((name) => waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => pods.length > 0, 300_000, { labelSelector: `tcab.dev/run=${name}` }).then((pods) => pods[0]!));
    await applyRun('claude-sealed', { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Look around.', maxRuntimeSeconds: 420, testCase: { source: { files: [leak] } } });
    const ggRun = await applyRun('gg-sealed', { harness: 'gg', model: 'openai/gpt-5.1', prompt: 'Look around.', maxRuntimeSeconds: 300, testCase: { source: { files: [leak, { path: 'adversary/side.sh', content: `${SIDE_SCRIPT}\n` }] } } });
    const [claudeDone, ggDone] = await Promise.all([finished('claude-sealed', 540_000), finished('gg-sealed', 420_000)]);
    for (const [done, port] of [[claudeDone, 'claude'], [ggDone, 'gg']] as const) {
      expect(done.status, JSON.stringify(done.status)).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', authMode: 'api-key' });
      const report = reportOf(await toolOutputs(port));
      process.stderr.write(`e2e gateway ${port}: ${JSON.stringify(Object.fromEntries(report))}\n`);
      expect(Object.fromEntries(report)).toMatchObject({ 'leak.self': '0', 'leak.procs': '0', 'leak.home': '0', 'leak.files': '0' });
      expect(Number(report.get('token.procs'))).toBeGreaterThanOrEqual(1);
      expect(['0', '1', '2']).toContain(report.get('leak.files.rc')); // not a timeout: the whole readable filesystem was searched
    }
    // The driver Pods' specs reference no key Secret; the key variable is the run's token Secret.
    for (const pod of await Promise.all(podSpecs)) {
      expect(JSON.stringify(pod.spec)).not.toContain('provider-keys');
      expect(JSON.stringify(pod.spec)).toMatch(/-gw-[0-9a-f-]{36}/);
    }
    // What the providers (the stubs) were presented: the real keys, every time.
    const served = { claude: (await stubRequests('claude')).slice(before.claude), gg: (await stubRequests('gg')).slice(before.gg) };
    expect(new Set(served.claude.map((r) => r.key_sha256))).toEqual(new Set([sha(CANARY.anthropic)]));
    expect(new Set(served.gg.map((r) => r.key_sha256))).toEqual(new Set([sha(CANARY.openai)]));
    // Token for token: every answered message request carried the stub's usage (900 input, 80 output, 300 cache
    // read, 50 cache write on the Anthropic wire); count_tokens answers carry none.
    const messages = served.claude.filter((r) => r.path === '/v1/messages');
    const answered = messages.filter((r) => r.status === 200).length;
    expect(answered).toBeGreaterThanOrEqual(2);
    expect(claudeDone.status!.wireRequests).toBe(messages.length + served.claude.filter((r) => r.path !== '/v1/messages').length);
    expect(claudeDone.status!.wireUsage).toMatchObject({ input: 900 * answered, output: 80 * answered, cache_read: 300 * answered, cache_write: 50 * answered });
    // gg: its two requests and the agent's side request went through the gateway; gg reported its own two.
    expect(served.gg.filter((r) => r.path === '/v1/responses' && r.status === 200).length).toBe(3);
    expect(ggDone.status!.wireRequests).toBe(3);
    expect(reportOf(await toolOutputs('gg')).get('side')).toBe('200');
    const agrees = ggDone.status!.conditions?.find((c) => c.type === 'UsageAgreesWithWire');
    expect(agrees, JSON.stringify(ggDone.status!.conditions)).toMatchObject({ status: 'False', reason: 'Disagrees' });
    // The driver said so on the run's stream (its log holds what it published).
    const ggLog = Object.entries(logs.logs()).find(([f]) => f.startsWith(`${podOf(ggRun)}_`))?.[1] ?? '';
    expect(driverRecord(ggLog).events.some((e) => e.type === 'warning' && e.code === 'usage_disagrees')).toBe(true);
    // Nothing of the keys in the gateway's log, the drivers' logs (their events and results) or the Runs' status.
    const all = Object.values(logs.logs()).join('\n') + JSON.stringify([claudeDone, ggDone]);
    for (const key of Object.values(CANARY)) expect(all).not.toContain(key);
  }, 1_000_000);

  it("a finished Run's token is refused; a budget of N tokens ends its run budget_exceeded without charging the run beside it", async () => {
    const plain = { harness: 'gg', model: 'openai/gpt-5.1', prompt: 'Look around.', maxRuntimeSeconds: 240 };
    const limited = await applyRun('gg-budget', { ...plain, budget: { maxTokens: { total: 1000 } } });
    const free = await applyRun('gg-free', plain);
    const [limitedDone, freeDone] = await Promise.all([finished('gg-budget', 300_000), finished('gg-free', 300_000)]);
    expect(limitedDone.status, JSON.stringify(limitedDone.status)).toMatchObject({ phase: 'Failed', outcome: 'budget_exceeded' });
    // One answer (past the limit) was measured; the next request was refused, never forwarded.
    expect(limitedDone.status!.wireRequests).toBe(1);
    expect(freeDone.status, JSON.stringify(freeDone.status)).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded', wireRequests: 2 });
    // Both are final: their tokens are refused at the gateway, for the model and for the account alike.
    for (const run of [limited, free]) {
      const token = await tokenOf(run);
      expect(token.startsWith('tcabgw_')).toBe(true);
      await expect
        .poll(async () => (await fetch(`http://${gateway.address}/p/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"model":"gpt-5.1","input":"after"}' })).status, { timeout: 30_000 })
        .toBe(401);
      expect((await fetch(`http://${gateway.address}${GATEWAY_CONTROL.usage}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    }
    // The gateway Pod is replaced (revocations live in its memory): the dispatcher sees the new boot id in its next
    // poll and revokes the final Runs' tokens again.
    const tokens = await Promise.all([limited, free].map(tokenOf));
    expect((await kubectl(['delete', 'pod', '-n', ns, '-l', 'app.kubernetes.io/component=gateway', '--wait=true'])).code).toBe(0);
    expect((await kubectl(['rollout', 'status', `deployment/${RELEASE}-tcab-gateway`, '-n', ns, '--timeout=180s'])).code).toBe(0);
    gateway.close();
    gateway = await forwardService(cluster(), ns, `${RELEASE}-tcab-gateway`, 8080);
    const restartedAt = Date.now();
    for (const token of tokens) {
      await expect.poll(async () => (await fetch(`http://${gateway.address}${GATEWAY_CONTROL.usage}`, { headers: { authorization: `Bearer ${token}` } })).status, { timeout: 60_000, interval: 250 }).toBe(401);
    }
    process.stderr.write(`e2e gateway restart: the final runs' tokens refused again ${Date.now() - restartedAt} ms after the new gateway Pod served\n`);
  }, 700_000);

  it('a provider that throttles one model: its Runs are held (Pending, Throttled) and resumed after the back-off, Runs of another model flow past them', async () => {
    // The throttle: a request of this model, with a token minted as the dispatcher mints (the shared signing key).
    const secret = await kubectl(['get', 'secret', `${RELEASE}-tcab-gateway-auth`, '-n', ns, '-o', 'jsonpath={.data.signing-key}']);
    expect(secret.code, secret.stderr).toBe(0);
    const key = signingKeyFrom(Buffer.from(secret.stdout, 'base64').toString().trim());
    const probe = mintToken(claimsFor('throttle-probe', 'probe', 600, Date.now()), key);
    const throttled = await fetch(`http://${gateway.address}/p/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${probe}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-busy', input: 'throttle-me' }) });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe(String(THROTTLE_RETRY_S));
    const thrownAt = Date.now();
    // Until every dispatcher replica holds it (each polls the gateway's report; the leader's claim pass uses its
    // own): read from each replica's console harnesses feed.
    const read = await kubectl(['get', 'secret', '-n', ns, `${RELEASE}-tcab-read-token`, '-o', 'jsonpath={.data.token}']);
    const replicas = (await getJson<{ items: V1Pod[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/component=dispatcher')).items;
    const forwards = await Promise.all(replicas.map((p) => forwardService(cluster(), ns, p.metadata!.name!, p.spec!.containers[0]!.ports!.find((port) => port.name === 'http')!.containerPort, 60_000, 'pod')));
    try {
      const holds = async (address: string): Promise<ThrottleHoldRow[]> => {
        const res = await fetch(`http://${address}${CONSOLE_PATHS.harnessesStream}`, { headers: { authorization: `Bearer ${Buffer.from(read.stdout, 'base64').toString()}` } });
        const reader = res.body!.getReader();
        let text = '';
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return [];
            text += Buffer.from(value).toString();
            const m = /event: snapshot\ndata: (.*)\n/.exec(text);
            if (m) return (JSON.parse(m[1]!) as { rows: Array<{ slug: string; holds?: ThrottleHoldRow[] }> }).rows.find((r) => r.slug === 'gg')?.holds ?? [];
          }
        } finally {
          await reader.cancel().catch(() => undefined);
        }
      };
      for (const forward of forwards) await expect.poll(async () => (await holds(forward.address)).map((h) => `${h.provider}/${h.model}`), { timeout: 30_000, interval: 500 }).toContain('openai/gpt-busy');
      const heldSeenAfterMs = Date.now() - thrownAt;
      const busy = { harness: 'gg', model: 'openai/gpt-busy', prompt: 'Look around.', maxRuntimeSeconds: 240 };
      await applyRun('busy-1', busy);
      await applyRun('busy-2', busy);
      const appliedAt = Date.now();
      await applyRun('other-model', { ...busy, model: 'openai/gpt-5.1' });
      const other = await finished('other-model', 240_000);
      expect(other.status, JSON.stringify(other.status)).toMatchObject({ phase: 'Succeeded' });
      const otherDoneMs = Date.now() - appliedAt;
      // The other model's Run went past them; they are still queued, held, saying why.
      for (const name of ['busy-1', 'busy-2']) {
        const run = await getJson<RunObject>('run', name, '-n', ns);
        expect(run.status?.phase ?? 'Pending', JSON.stringify(run.status)).toBe('Pending');
        expect(run.status?.conditions?.find((c) => c.type === 'Throttled'), JSON.stringify(run.status)).toMatchObject({ status: 'True', reason: 'ProviderThrottled' });
      }
      // Resumed once the hold (the provider's retry-after) ends, and they succeed.
      const resumed = await Promise.all(['busy-1', 'busy-2'].map((name) => finished(name, 300_000)));
      const resumedMs = Date.now() - appliedAt;
      for (const run of resumed) {
        expect(run.status, JSON.stringify(run.status)).toMatchObject({ phase: 'Succeeded' });
        expect(run.status!.conditions?.find((c) => c.type === 'Throttled')).toMatchObject({ status: 'False', reason: 'Released' });
      }
      const heldS = resumed.map((run) => {
        const cs = run.status!.conditions!.filter((c) => c.type === 'Throttled');
        const released = Date.parse(cs[0]!.lastTransitionTime as unknown as string);
        return Math.round((released - appliedAt) / 100) / 10;
      });
      process.stderr.write(`e2e back-pressure: hold seen by the dispatcher ${heldSeenAfterMs} ms after the 429 (retry-after ${THROTTLE_RETRY_S} s); claims held: 2 of 3 (the other model's Run succeeded ${otherDoneMs} ms after apply); released ${heldS.join(' s, ')} s after apply; both succeeded ${resumedMs} ms after apply\n`);
      // Held at least until the retry-after the provider gave, counted from its answer.
      for (const s of heldS) expect(s * 1000).toBeGreaterThanOrEqual(THROTTLE_RETRY_S * 1000 - (appliedAt - thrownAt) - 1000);
    } finally {
      for (const forward of forwards) forward.close();
    }
  }, 700_000);
});
