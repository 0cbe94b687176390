// Placement on a cluster of several nodes (issue 35), rendered with the pinned helm: the driver Pods' nodeSelector,
// tolerations, spread and node-lost seconds reach the dispatcher as one JSON variable (TCAB_DRIVER_PLACEMENT) that its
// config parses into the Pods it builds; the dispatcher's replicas prefer different nodes unless dispatcher.affinity
// says otherwise; the values schema refuses a bad placement with its path named.
import { describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import { dispatcherEnv, one, refused, render } from './chart-render.ts';
import { dispatcherConfig } from '../../dispatcher/config.ts';
import { buildDriverPod } from '../../dispatcher/pods/driver-pod.ts';
import { RunSpec } from '../../shared/run.ts';

const dispatcherPod = async (...set: string[]) => one<V1Deployment>(await render(...set), 'Deployment', 't-tcab-dispatcher')!.spec!;
const nodeLost = (seconds: number) => ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds }));

describe('charts/tcab placement (issue 35)', () => {
  it('defaults: TCAB_DRIVER_PLACEMENT spreads driver Pods by harness over nodes and evicts them 30 s after their node is lost', async () => {
    const value = dispatcherEnv(await render()).TCAB_DRIVER_PLACEMENT!;
    expect(JSON.parse(value)).toEqual({ nodeSelector: {}, tolerations: [], spread: { enabled: true, maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' }, nodeLostTolerationSeconds: 30 });
    const pod = buildDriverPod({ namespace: 'ns', name: 'r', uid: 'u' }, RunSpec.parse({ harness: 'claude', model: 'm', prompt: 'p' }), dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value }), []).spec!;
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.tolerations).toEqual(nodeLost(30));
    expect(pod.topologySpreadConstraints).toEqual([{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'tcab-driver', 'tcab.dev/harness': 'claude' } }, nodeTaintsPolicy: 'Honor' }]);
  });

  it('passes driver.nodeSelector, tolerations, spread and nodeLostTolerationSeconds as given; the dispatcher reads them back', async () => {
    const tolerations = [{ key: 'tcab.dev/drivers', operator: 'Exists', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 }];
    const set = ['--set-json', 'driver.nodeSelector={"tcab.dev/pool":"drivers"}', '--set-json', `driver.tolerations=${JSON.stringify(tolerations)}`, '--set', 'driver.spread.topologyKey=topology.kubernetes.io/zone', '--set', 'driver.spread.whenUnsatisfiable=DoNotSchedule', '--set', 'driver.spread.maxSkew=2', '--set', 'driver.nodeLostTolerationSeconds=10'];
    const value = dispatcherEnv(await render(...set)).TCAB_DRIVER_PLACEMENT!;
    const want = { nodeSelector: { 'tcab.dev/pool': 'drivers' }, tolerations, spread: { enabled: true, maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }, nodeLostTolerationSeconds: 10 };
    expect(JSON.parse(value)).toEqual(want);
    expect(dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value }).TCAB_DRIVER_PLACEMENT).toEqual(want);
    const pod = buildDriverPod({ namespace: 'ns', name: 'r', uid: 'u' }, RunSpec.parse({ harness: 'gg', model: 'm', prompt: 'p' }), dispatcherConfig({ TCAB_DRIVER_PLACEMENT: value }), []).spec!;
    // The operator's unreachable toleration wins over the chart's; not-ready gets the chart's 10 s.
    expect(pod.tolerations).toEqual([...tolerations, nodeLost(10)[0]]);
    expect(JSON.parse(dispatcherEnv(await render('--set', 'driver.spread.enabled=false')).TCAB_DRIVER_PLACEMENT!).spread.enabled).toBe(false);
  });

  it('the dispatcher replicas prefer different nodes (anti-affinity on its own selector labels); dispatcher.affinity replaces it', async () => {
    const spec = await dispatcherPod();
    expect(spec.template.spec!.affinity).toEqual({
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: spec.selector.matchLabels } } }] },
    });
    expect(spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'tcab', 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'dispatcher' });
    const own = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'tcab.dev/pool', operator: 'In', values: ['control'] }] }] } } };
    expect((await dispatcherPod('--set-json', `dispatcher.affinity=${JSON.stringify(own)}`)).template.spec!.affinity).toEqual(own);
  });

  it.each([
    [['--set', 'driver.spread.whenUnsatisfiable=Sometimes'], '/driver/spread/whenUnsatisfiable'],
    [['--set', 'driver.nodeLostTolerationSeconds=-1'], '/driver/nodeLostTolerationSeconds'],
    [['--set', 'driver.spread.maxSkew=0'], '/driver/spread/maxSkew'],
    [['--set-json', 'driver.tolerations=[{"key":"a","efect":"NoSchedule"}]'], '/driver/tolerations/0'],
    [['--set-json', 'driver.nodeSelector={"pool":1}'], '/driver/nodeSelector/pool'],
    [['--set-json', 'dispatcher.affinity=[]'], '/dispatcher/affinity'],
  ])('the values schema refuses %j naming %s', async (set, path) => {
    expect(await refused(...set)).toContain(path);
  });
});
