// Issue 33: every cluster test runs with the chart's NetworkPolicies on. Tests that run driver Pods from a dispatcher
// in the test process (not through the chart) get the chart's own driver policy in their namespace, rendered by helm
// from charts/tcab, with the one exception those tests need, written here: their NATS, stub models and OTLP
// collector are processes on the host, bridged into the node at HOST_SERVICES_IP (node/real-node.ts
// exposeHostPort), so that address is an allowed destination. Those dispatchers keep the cluster's DNS
// (TCAB_DRIVER_DNS unset), so the policy allows it as the chart does with driver.dns=cluster. Everything else a
// driver Pod might reach (the apiserver, the kubelet, other Pods, the stand-ins, the registries) stays refused.
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { HOST_SERVICES_IP } from './node/network.ts';
import { runCaptured } from './support.ts';

const CHART = join(import.meta.dirname, '..', '..', 'charts', 'tcab');
/** The name it has in a test's namespace (not the chart's: a chart installed there keeps its own). */
export const TEST_DRIVER_POLICY = 'test-suite-driver';

let rendered: Promise<V1NetworkPolicy> | undefined;

/** The chart's `<release>-tcab-driver` policy with the host-services exception, for `namespace`. */
export async function driverNetworkPolicy(helmBinDir: string, namespace: string): Promise<V1NetworkPolicy> {
  rendered ??= (async () => {
    const values = JSON.stringify({
      nats: { url: 'nats://host-services:4222', auth: { enabled: false } },
      npmCache: { enabled: false },
      egress: { enabled: false },
      driver: { dns: 'cluster' },
      networkPolicy: { driverEgress: [{ to: [{ ipBlock: { cidr: `${HOST_SERVICES_IP}/32` } }] }] },
    });
    const out = await runCaptured(join(helmBinDir, 'helm'), ['template', 'test', CHART, '--show-only', 'templates/networkpolicies.yaml', '-f', '-'], values);
    if (out.code !== 0) throw new Error(`helm template networkpolicies: ${out.stderr}`);
    const policy = parseAllDocuments(out.stdout).map((d) => d.toJS() as V1NetworkPolicy).find((p) => p?.metadata?.name === 'test-tcab-driver');
    if (!policy) throw new Error('the chart renders no driver NetworkPolicy');
    return policy;
  })();
  const policy = structuredClone(await rendered);
  policy.metadata = { name: TEST_DRIVER_POLICY, namespace };
  return policy;
}
