// The chart on a cluster of this file's own real nodes (test/cluster/node/with-plane.ts): the five images pushed
// into every node's registry (each node pulls from its own, under the same names), then installChart. One copy for
// test/cluster/multi-node.test.ts and `npm run bench -- nodes` (bench/cluster-throughput.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RealNode } from '../cluster/node/real-node.ts';
import { pushImages } from '../cluster/real-node-context.ts';
import { installChart } from './real-chart.ts';
import type { Captured, ClusterAccess, InstallOptions } from './real-chart.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export async function installChartOnNodes(nodes: readonly RealNode[], access: ClusterAccess, options: Omit<InstallOptions, 'images'>): Promise<Captured & { images: Record<string, string> }> {
  const imageTag = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  let images: Record<string, string> = {};
  for (const node of nodes) images = await pushImages(['driver', 'dispatcher', 'nats', 'npm-cache', 'egress-proxy'], { netnsPath: node.netnsPath, registry: `${node.registry}/tcab`, registryInNode: `${node.registryInNode}/tcab`, imageTag });
  return { ...(await installChart(access, { ...options, images })), images };
}
