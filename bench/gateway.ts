// The model gateway's cost (issue 34): what it adds to each request and to the time to the first streamed byte,
// against the same stub model server reached directly, and requests/s through one gateway process (one event loop:
// one core), with that process's CPU time. The stub and the gateway each run in a process of their own
// (bench/gateway-child.ts); this process is the client. Loopback only; bounded counts.
//
// Latency: requests one at a time over a kept-alive connection, alternating direct and through the gateway so
// drift on a shared machine hits both alike; `added_paired` compares each gateway request with the direct one just
// before it, `added_percentiles` the two distributions' percentiles; `gateway_own_added_latency` is the gateway's own
// histogram of the time it spends on a request (its Prometheus buckets: bounds, not exact figures). Goal: p99 added
// time to first byte < 2 ms, judged on the paired figure (the strictest: the client's and the stub's scheduling
// jitter lands in it too).
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';

const CHILD = join(import.meta.dirname, 'gateway-child.ts');

interface Ready {
  type: 'ready';
  url: string;
  token?: string;
}

function start(args: string[]): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(CHILD, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: Ready) => resolve({ child, ready: m }));
    child.once('exit', (code) => reject(new Error(`gateway-child ${args[0]} exited ${code}`)));
  });
}

function ask<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m: T) => resolve(m));
    child.send({ type });
  });
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
  return { p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: at(1), n: sorted.length };
}

interface Timing {
  ttfb: number;
  total: number;
}

const BODY = (stream: boolean) => JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, stream, messages: [{ role: 'user', content: 'Say hello.' }] });

async function once(dispatcher: Agent, url: string, key: string, stream: boolean): Promise<Timing> {
  const t0 = performance.now();
  const res = await request(`${url}/v1/messages`, { dispatcher, method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: BODY(stream) });
  let ttfb = 0;
  for await (const _chunk of res.body) if (ttfb === 0) ttfb = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`bench request answered ${res.statusCode}`);
  return { ttfb, total: performance.now() - t0 };
}

async function latency(dispatcher: Agent, direct: string, gateway: string, token: string, stream: boolean, count: number) {
  const d: Timing[] = [];
  const g: Timing[] = [];
  for (let i = 0; i < count; i++) {
    d.push(await once(dispatcher, direct, 'sk-ant-fake-bench-key', stream));
    g.push(await once(dispatcher, gateway, token, stream));
  }
  const paired = (f: (t: Timing) => number) => stats(g.map((t, i) => f(t) - f(d[i]!)));
  const ttfb = { direct: stats(d.map((t) => t.ttfb)), gateway: stats(g.map((t) => t.ttfb)), added_paired: paired((t) => t.ttfb) };
  const total = { direct: stats(d.map((t) => t.total)), gateway: stats(g.map((t) => t.total)), added_paired: paired((t) => t.total) };
  const added = (a: ReturnType<typeof stats>, b: ReturnType<typeof stats>) => ({ p50_ms: +(a.p50_ms - b.p50_ms).toFixed(3), p99_ms: +(a.p99_ms - b.p99_ms).toFixed(3) });
  return { ttfb: { ...ttfb, added_percentiles: added(ttfb.gateway, ttfb.direct) }, total: { ...total, added_percentiles: added(total.gateway, total.direct) } };
}

async function throughput(url: string, key: string, concurrency: number, seconds: number, cpuOf?: () => Promise<number>) {
  const dispatcher = new Agent({ connections: concurrency, pipelining: 1 });
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const cpuBefore = await cpuOf?.();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await once(dispatcher, url, key, false);
        done += 1;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuOf && cpuBefore !== undefined ? ((await cpuOf()) - cpuBefore) / 1000 : undefined;
  await dispatcher.close();
  const rps = done / wall;
  return { concurrency, seconds: +wall.toFixed(2), requests: done, requests_per_s: Math.round(rps), ...(cpu !== undefined ? { gateway_cpu_s: +cpu.toFixed(2), gateway_cpu_utilization: +(cpu / wall).toFixed(2), requests_per_cpu_s: Math.round(done / cpu) } : {}) };
}

interface MetricJson {
  name: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/** The gateway's own added-latency histogram (arrival to dispatch + response head to client head), as bucket bounds. */
async function ownAddedLatency(child: ChildProcess) {
  const { value } = await ask<{ value: MetricJson[] }>(child, 'metrics');
  const histogram = value.find((m) => m.name === 'tcab_gateway_added_latency_seconds');
  const buckets = (histogram?.values ?? []).filter((v) => v.metricName === 'tcab_gateway_added_latency_seconds_bucket').map((v) => ({ le: Number(v.labels.le), count: v.value }));
  const total = buckets.at(-1)?.count ?? 0;
  const bound = (q: number) => buckets.find((b) => b.count >= q * total)?.le ?? null;
  const share = (le: number) => +((buckets.find((b) => b.le === le)?.count ?? 0) / (total || 1)).toFixed(4);
  return { requests: total, p50_at_most_ms: (bound(0.5) ?? NaN) * 1000, p99_at_most_ms: (bound(0.99) ?? NaN) * 1000, share_within_1ms: share(0.001), share_within_2ms: share(0.002) };
}

export async function benchGateway(log: (msg: string) => void, count = Number(process.env.TCAB_BENCH_GATEWAY_REQUESTS || 2000)) {
  const stub = await start(['stub']);
  const gw = await start(['gateway', stub.ready.url]);
  const gatewayBase = `${gw.ready.url}/p/anthropic`;
  const token = gw.ready.token!;
  const cpuOf = async () => {
    const m = await ask<{ user_ms: number; system_ms: number }>(gw.child, 'cpu');
    return m.user_ms + m.system_ms;
  };
  const dispatcher = new Agent({ connections: 1 });
  try {
    log(`gateway: warm-up`);
    await latency(dispatcher, stub.ready.url, gatewayBase, token, true, 300);
    log(`gateway: ${count} streamed (SSE) requests each way, one at a time`);
    const sse = await latency(dispatcher, stub.ready.url, gatewayBase, token, true, count);
    log(`gateway: ${count} JSON requests each way, one at a time`);
    const json = await latency(dispatcher, stub.ready.url, gatewayBase, token, false, count);
    const own = await ownAddedLatency(gw.child);
    log('gateway: requests/s through one gateway process (5 s, 32 concurrent), and directly to the stub');
    const through = await throughput(gatewayBase, token, 32, 5, cpuOf);
    const direct = await throughput(stub.ready.url, 'sk-ant-fake-bench-key', 32, 5);
    const p99AddedTtfb = sse.ttfb.added_paired.p99_ms;
    return {
      streamed: sse,
      json,
      gateway_own_added_latency: own,
      throughput: { through_gateway: through, direct_to_stub: direct },
      target_p99_added_ttfb_ms: 2,
      p99_added_ttfb_ms: p99AddedTtfb,
      p99_added_ttfb_by_percentiles_ms: sse.ttfb.added_percentiles.p99_ms,
      meets_target: p99AddedTtfb < 2,
    };
  } finally {
    await dispatcher.close();
    gw.child.send({ type: 'stop' });
    stub.child.send({ type: 'stop' });
  }
}
