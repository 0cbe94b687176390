// `npm run bench -- nodes`: gg Runs end to end per minute at a fixed cap, on one real node and on three (issue 35).
// For each node count: a control plane of its own and its real nodes (test/cluster/node/with-plane.ts; three nodes
// are linked Pod network, each with its own registry), the chart as users install it (test/e2e/chart-on-nodes.ts:
// bundled NATS, npm cache, NetworkPolicies, in-cluster stub models) with dispatcher.maxInFlight = the cap, then
// TCAB_BENCH_NODES_RUNS gg Runs applied at once: runs/min from the first create to the last Succeeded, each Run's
// create -> Succeeded p50/p95, and where its driver ran. Same values on both sizes (one dispatcher, one NATS), so
// the node count is the only difference. All nodes share this machine's cores: three nodes measure what spreading
// costs or gains here, not three machines' capacity. A benchmark, not a test: not in CI.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunObject } from '../kube/resources.ts';
import { isFinal } from '../dispatcher/status/transitions.ts';
import { upPlaneWithRealNode, upPlaneWithRealNodes } from '../test/cluster/node/with-plane.ts';
import type { RealNode } from '../test/cluster/node/real-node.ts';
import { installChartOnNodes } from '../test/e2e/chart-on-nodes.ts';
import { kubectlOf } from '../test/e2e/real-chart.ts';
import type { ClusterAccess } from '../test/e2e/real-chart.ts';

const NS = 'bench-nodes';
const GG_SCRIPT = { steps: [{ tool: { name: 'write_file', args: { path: 'hello.txt', content: 'hello\n' } } }, { text: 'Wrote hello.txt.' }] };

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

async function onNodes(count: number, runs: number, cap: number, log: (m: string) => void): Promise<Record<string, unknown>> {
  const load: Record<string, number[]> = { start: loadavg().map((l) => Math.round(l * 100) / 100) };
  const t0 = Date.now();
  const names = Array.from({ length: count }, (_, i) => `tcab-bench-n${i + 1}`);
  const up = count === 1 ? await upPlaneWithRealNode(names[0]!, { taint: false }) : await upPlaneWithRealNodes(names, { taint: false });
  const nodes: RealNode[] = 'nodes' in up ? up.nodes : [up.node];
  const setupMs: Record<string, number> = { plane_and_nodes: Date.now() - t0 };
  const dir = mkdtempSync(join(tmpdir(), 'tcab-bench-nodes-'));
  try {
    const access: ClusterAccess = { kubeconfig: up.plane.kubeconfig, binDir: up.plane.binDir };
    const kubectl = async (args: string[], input?: string) => {
      const out = await kubectlOf(access)(args, input);
      if (out.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${out.stderr}`);
      return out.stdout;
    };
    let t = Date.now();
    await kubectl(['create', 'namespace', NS]);
    log(`${count} node(s): images into each node's registry, helm install (maxInFlight ${cap})`);
    const install = await installChartOnNodes(nodes, access, { namespace: NS, providerKey: 'sk-ant-fake-bench-nodes', stubScripts: { gg: GG_SCRIPT, claude: GG_SCRIPT }, workDir: dir, timeoutSeconds: 600, overrides: { dispatcher: { maxInFlight: cap } } });
    if (install.code !== 0) throw new Error(`helm install: ${install.stderr}`);
    setupMs.images_and_install = Date.now() - t;

    log(`${count} node(s): ${runs} gg Runs at once`);
    const items = Array.from({ length: runs }, (_, i) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `gg-${i}`, namespace: NS }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'write hello.txt', maxRuntimeSeconds: 120 } }));
    t = Date.now();
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    let done: RunObject[] = [];
    const deadline = Date.now() + 60 * 60_000;
    for (;;) {
      done = (JSON.parse(await kubectl(['get', 'runs', '-n', NS, '-o', 'json'])) as { items: RunObject[] }).items;
      if (done.length === runs && done.every((r) => isFinal(r.status ?? {}))) break;
      if (Date.now() > deadline) throw new Error(`${count} node(s): ${done.filter((r) => isFinal(r.status ?? {})).length} of ${runs} Runs final after an hour`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const wallMs = Date.now() - t;
    load.end = loadavg().map((l) => Math.round(l * 100) / 100);
    const perRun = done.map((r) => new Date(r.status!.completionTime!).getTime() - new Date(r.metadata!.creationTimestamp!).getTime());
    const byNode: Record<string, number> = {};
    for (const r of done) for (const a of r.status!.attempts ?? []) byNode[a.node ?? 'none'] = (byNode[a.node ?? 'none'] ?? 0) + 1;
    return {
      nodes: count,
      cap,
      runs,
      succeeded: done.filter((r) => r.status!.phase === 'Succeeded').length,
      wall_ms: wallMs,
      runs_per_min: Math.round((runs / (wallMs / 60_000)) * 10) / 10,
      create_to_final_ms: { p50: percentile(perRun, 50), p95: percentile(perRun, 95), max: Math.max(...perRun) },
      attempts_by_node: byNode,
      setup_ms: setupMs,
      load_average_1_5_15: load,
    };
  } finally {
    await up.down();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchClusterThroughput(log: (m: string) => void, runs = 60, cap = 8, counts: readonly number[] = [1, 3]): Promise<Record<string, unknown>> {
  const sizes: Record<string, unknown>[] = [];
  for (const count of counts) sizes.push(await onNodes(count, runs, cap, log));
  const rate = (n: number) => sizes.find((s) => s.nodes === n)?.runs_per_min as number | undefined;
  const one = rate(1);
  const three = rate(3);
  return {
    sizes,
    ratio_3_to_1: one && three ? Math.round((three / one) * 100) / 100 : null,
    what: 'gg Runs (stub model: one write_file call, a reply) applied at once; runs_per_min = runs / (first create -> last final); create_to_final_ms per Run from its creationTimestamp to status.completionTime; every node is a namespace of this one machine, sharing its cores',
  };
}
