// OpenTelemetry export on the cluster path: the chart rendered with driver.otel on (an endpoint and a headersSecret)
// gives the dispatcher its driver settings (the dispatcher container's literal env, as the Deployment would), the
// dispatcher runs in this process against the real node, a gg Run goes through a real driver Pod against the stub
// model, and the Pod exports to a real Jaeger on the host (test/support/jaeger.ts), reached through a recording
// pass-through that keeps the Authorization header of every OTLP request. The trace is read back from Jaeger's
// query API: the run span with the Run's id, the session and its tools under it, usage equal to the Run status's;
// the canary API key and the OTLP token nowhere in Jaeger's JSON, the NATS stream or the Pod's literal env.
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import { dispatcherMetrics } from '../../dispatcher/controller/metrics.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { electDispatcher } from '../../dispatcher/leadership.ts';
import type { RunObject } from '../../kube/resources.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { natsSettings } from '../../nats/settings.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { SECRET_MARKER } from '../../driver/scrub.ts';
import { createLogger } from '../../shared/log.ts';
import { NatsServer } from '../support/nats-server.ts';
import { Jaeger, tagsOf } from '../support/jaeger.ts';
import type { JaegerSpan } from '../support/jaeger.ts';
import { podUrl, realNode } from './real-node-context.ts';
import { clusterConfig, createNamespace, kubectl, readRunUntil, runCaptured, waitFor } from './support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CANARY = 'sk-ant-fake-canary-otel-cluster-4b2e';
const OTEL_TOKEN = 'fake-otel-token-9d3a61c0';
const OTEL_HEADER = `Bearer ${OTEL_TOKEN}`;
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let stub: StubModelServer;
let jaeger: Jaeger;
let proxy: Server;
/** The Authorization header of every OTLP request the pass-through forwarded to Jaeger. */
const authorizations: (string | undefined)[] = [];
const logs: string[] = [];
const stops: (() => Promise<void>)[] = [];

/** Forwards every request to Jaeger's OTLP receiver unchanged, noting its Authorization header. */
function recordingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The dispatcher container's literal env from `helm template` with these values (what the Deployment gives it). */
async function chartEnv(set: string[]): Promise<Record<string, string>> {
  const rendered = await runCaptured(join(inject('clusterBinDir'), 'helm'), ['template', 'tcab', join(ROOT, 'charts', 'tcab'), '-n', ns, '--show-only', 'templates/deployment.yaml', ...set]);
  expect(rendered.code, rendered.stderr).toBe(0);
  const deployment = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as V1Deployment).find((d) => d?.kind === 'Deployment')!;
  const env = deployment.spec!.template.spec!.containers[0]!.env ?? [];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

async function startDispatcher(identity: string, fromChart: Record<string, string>) {
  // The driver settings as the chart renders them; the image and its size are the test node's.
  const driverSettings = Object.fromEntries(Object.entries(fromChart).filter(([name]) => name.startsWith('TCAB_DRIVER_') || ['TCAB_NATS_URL', 'TCAB_API_KEY_SECRETS'].includes(name)));
  const settings = dispatcherConfig({ ...driverSettings, TCAB_NAMESPACE: ns, TCAB_DRIVER_IMAGE: realNode().images.driver, TCAB_DRIVER_CPU: '100m', TCAB_DRIVER_MEMORY: '512Mi' });
  const stream = await RunStream.connect(natsSettings(nats.url));
  const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', bindings: { identity }, destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
  const dispatcher = new Dispatcher({ config: clusterConfig(), settings: { ...settings, TCAB_RESULT_GRACE_SECONDS: 2 }, events: stream, metrics: dispatcherMetrics(), log });
  await dispatcher.start();
  const elector = electDispatcher(clusterConfig(), { dispatcher, stream, namespace: ns, name: 'tcab-dispatcher', identity, leaseDurationSeconds: 10, retryMs: 1000, log });
  stops.push(async () => {
    await elector.stop();
    await dispatcher.stop();
    await stream.close();
  });
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('otel'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  jaeger = await Jaeger.start();
  proxy = await recordingProxy(jaeger.otlpEndpoint);
  // The model says the key and the OTLP token and runs a command echoing the key: the driver must scrub all three.
  stub = await startStubModelServer({
    script: {
      steps: [
        { text: `The key is ${CANARY}; the collector wants ${OTEL_HEADER}.`, tool: { name: 'shell', args: { command: `echo ${CANARY}` } } },
        { tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } },
        { text: 'All done.' },
      ],
    },
  });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, `--from-literal=anthropic=${CANARY}`]);
  await kubectl(['create', 'secret', 'generic', 'otel-headers', '-n', ns, `--from-literal=headers=authorization=${OTEL_HEADER}`]);
});

afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  await stub?.close();
  await new Promise((r) => proxy?.close(r) ?? r(undefined));
  await jaeger?.stop();
  await nats?.stop();
  await removeNs();
});

/** The chart's values for this test's NATS, key Secret and stub model, driver.otel on with `otel` on top. */
async function chartWithOtel(otel: string[]) {
  return chartEnv([
    '--set', `nats.url=${await podUrl(nats.url)}`, '--set', 'nats.auth.enabled=false',
    '--set-json', 'credentials.apiKeys=[{"env":"ANTHROPIC_API_KEY","secret":"provider-keys","key":"anthropic"}]',
    '--set-json', `driver.env=${JSON.stringify({ TCAB_BASE_URL_GG: await podUrl(stub.url) })}`,
    '--set', 'driver.otel.enabled=true', ...otel,
  ]);
}

/** Applies a gg Run; returns its driver Pod as the dispatcher made it (deleted after the run) and the ended Run. */
async function runGg(name: string) {
  const run = { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'say hi', maxRuntimeSeconds: 120 } };
  await kubectl(['apply', '-f', '-'], JSON.stringify(run));
  const podName = `tcab-run-${name}`;
  const pod = (await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => pods.some((p) => p.metadata?.name === podName), 60_000)).find((p) => p.metadata?.name === podName);
  const runs = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.some((r) => r.metadata?.name === name && ['Succeeded', 'Failed'].includes(r.status?.phase ?? '')), 180_000);
  const done = runs.find((r) => r.metadata?.name === name)!;
  expect(done.status, logs.join('\n')).toMatchObject({ phase: 'Succeeded', outcome: 'succeeded' });
  expect(done.status!.usage!.output).toBeGreaterThan(0);
  const env = pod!.spec!.containers.flatMap((c) => c.env ?? []);
  return { pod: pod!, env: (n: string) => env.find((e) => e.name === n), done, runId: `${ns}_${name}` };
}

/** Reads the run's trace back from Jaeger and checks its tree, attributes, usage and scrubbing; returns Jaeger's JSON. */
async function checkTrace(runId: string, done: RunObject): Promise<string> {
  const usage = done.status!.usage!;
  // Two tools and one session under the run, two stages at least: >= 5 spans before the trace is read whole.
  const { text, trace } = await jaeger.runTrace(runId, 5);
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  const parentOf = (s: JaegerSpan) => byId.get(s.references.find((r) => r.refType === 'CHILD_OF')?.spanID ?? '');
  const named = (op: string) => trace.spans.filter((s) => s.operationName === op);
  const roots = named('invoke_workflow tcab.run');
  expect(roots).toHaveLength(1);
  const root = roots[0]!;
  expect(parentOf(root)).toBeUndefined();
  expect(trace.processes[root.processID]!.serviceName).toBe('tcab');
  expect(tagsOf(root)).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.agent.name': 'gg', 'gen_ai.request.model': 'claude-sonnet-4-5', 'tcab.run.id': runId, 'tcab.outcome': 'succeeded' });
  // The run span's gen_ai.usage.* is the Run status's usage (input_tokens counts the cached classes too).
  const inputs = [usage.input, usage.cache_read, usage.cache_write].filter((n): n is number => n !== null);
  const expected: Record<string, number> = { 'gen_ai.usage.output_tokens': usage.output! };
  if (inputs.length) expected['gen_ai.usage.input_tokens'] = inputs.reduce((a, b) => a + b, 0);
  if (usage.cache_read !== null) expected['gen_ai.usage.cache_read.input_tokens'] = usage.cache_read;
  if (usage.cache_write !== null) expected['gen_ai.usage.cache_creation.input_tokens'] = usage.cache_write;
  if (usage.reasoning !== null) expected['gen_ai.usage.reasoning.output_tokens'] = usage.reasoning;
  expect(Object.fromEntries(Object.entries(tagsOf(root)).filter(([k]) => k.startsWith('gen_ai.usage.')))).toEqual(expected);

  const sessions = named('invoke_agent gg');
  expect(sessions).toHaveLength(1);
  expect(parentOf(sessions[0]!)).toBe(root);
  expect(tagsOf(sessions[0]!)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.usage.output_tokens': usage.output });
  const tools = trace.spans.filter((s) => s.operationName.startsWith('execute_tool '));
  expect(tools.map((t) => t.operationName).sort()).toEqual(['execute_tool shell', 'execute_tool write_file']);
  for (const tool of tools) expect(parentOf(tool)).toBe(sessions[0]);
  // Scrubbed as the events are: the echoed key carries the marker, and the key is nowhere, not even a fragment.
  expect(tools.map((t) => String(tagsOf(t)['tcab.command'] ?? '')).some((c) => c.includes(`echo ${SECRET_MARKER}`))).toBe(true);
  for (const secret of [CANARY, CANARY.slice(8)]) expect(text).not.toContain(secret);
  return text;
}

/** The agent messages of the trace's session (span events), as Jaeger returned them. */
function agentMessages(text: string): string[] {
  const [trace] = (JSON.parse(text) as { data: { spans: JaegerSpan[] }[] }).data;
  return trace!.spans.flatMap((s) => s.logs).map((l) => Object.fromEntries(l.fields.map((f) => [f.key, f.value]))).filter((f) => f.event === 'tcab.agent').map((f) => String(f['tcab.message']));
}

describe('OpenTelemetry export from a driver Pod (chart driver.otel on)', () => {
  it('with an endpoint: a gg Run is one trace in Jaeger (run span with the Run id, session, tools, the status usage), the canary key nowhere', async () => {
    const fromChart = await chartWithOtel(['--set', `driver.otel.endpoint=${await podUrl(jaeger.otlpEndpoint)}`]);
    expect(fromChart).not.toHaveProperty('TCAB_DRIVER_OTEL_HEADERS_SECRET');
    await startDispatcher('otel-endpoint', fromChart);
    const { env, done, runId } = await runGg('gg-otel');
    expect(env('OTEL_EXPORTER_OTLP_ENDPOINT')?.value).toBe(await podUrl(jaeger.otlpEndpoint));
    expect(env('TCAB_OTEL')?.value).toBe('1');
    expect(env('OTEL_EXPORTER_OTLP_HEADERS')).toBeUndefined();
    await checkTrace(runId, done);
    const events = await readRunUntil(nats.url, runId, (all) => all.some((i) => i.kind === 'result'), 30_000);
    expect([JSON.stringify(events), JSON.stringify(done), logs.join('\n')].join('\n')).not.toContain(CANARY);
  }, 300_000);

  it('with a headersSecret: the OTLP token reaches the collector on every request by secretKeyRef only, and is scrubbed from spans and events', async () => {
    for (const stop of stops.splice(0)) await stop();
    const otlpForPods = await podUrl(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    const fromChart = await chartWithOtel(['--set', `driver.otel.endpoint=${otlpForPods}`, '--set', 'driver.otel.headersSecret.name=otel-headers']);
    expect(JSON.parse(fromChart.TCAB_DRIVER_ENV!)).toMatchObject({ TCAB_OTEL: '1', OTEL_EXPORTER_OTLP_ENDPOINT: otlpForPods });
    expect(JSON.parse(fromChart.TCAB_DRIVER_OTEL_HEADERS_SECRET!)).toEqual({ secret: 'otel-headers', key: 'headers' });
    await startDispatcher('otel-headers', fromChart);
    const { pod, env, done, runId } = await runGg('gg-otel-headers');
    expect(env('OTEL_EXPORTER_OTLP_HEADERS')).toEqual({ name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otel-headers', key: 'headers', optional: true } } });
    expect(env('OTEL_EXPORTER_OTLP_ENDPOINT')?.value).toBe(otlpForPods);
    for (const secret of [OTEL_TOKEN, CANARY]) expect(JSON.stringify(pod)).not.toContain(secret);

    const text = await checkTrace(runId, done);
    // The driver knew the token (from the Secret): the model's message naming it carries the marker instead.
    expect(agentMessages(text).filter((m) => m.includes('the collector wants'))).toEqual([`The key is ${SECRET_MARKER}; the collector wants ${SECRET_MARKER}.`]);
    expect(text).not.toContain(OTEL_TOKEN);
    // Every export request of this run carried the header (the first test's went to Jaeger directly, not here).
    expect(authorizations.length).toBeGreaterThan(0);
    expect(new Set(authorizations)).toEqual(new Set([OTEL_HEADER]));
    const events = await readRunUntil(nats.url, runId, (all) => all.some((i) => i.kind === 'result'), 30_000);
    for (const secret of [CANARY, OTEL_TOKEN]) expect([JSON.stringify(events), JSON.stringify(done), logs.join('\n')].join('\n')).not.toContain(secret);
  }, 300_000);
});
