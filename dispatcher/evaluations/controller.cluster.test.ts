// The Evaluation controller against the test cluster's real apiserver (and its garbage collector), with no node and
// no dispatcher: Runs stay queued, and this test writes their final statuses as the dispatcher would. What the chart
// test (test/e2e/helm-real-node.test.ts) does not: a spec edited (only the Runs of the slots it changed are replaced),
// a spec refused (Invalid, the field named, no Run), a slot whose name another Run holds, a status that follows
// each Run's end, a replica that starts leading late, and test cases from a labelled ConfigMap (missing, then made,
// then a key edited).
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLeanInformer } from '../../kube/lean-informer.ts';
import type { ListPageFn } from '../../kube/lean-informer.ts';
import { leanObject } from '../../kube/lean-transforms.ts';
import { EVALUATIONS, evaluationsPath, GROUP, RUNS, runsPath, VERSION } from '../../kube/resources.ts';
import type { EvaluationObject, RunObject } from '../../kube/resources.ts';
import { createLogger } from '../../shared/log.ts';
import type { EvaluationSpecInput } from '../../shared/evaluation/schema.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { clusterConfig, createNamespace, kubectl, waitFor } from '../../test/cluster/support.ts';
import { TEST_CASES_LABEL } from '../../shared/evaluation/test-case-sources.ts';
import { leanTestCaseConfigMap } from '../controller/informers.ts';
import type { Cache } from '../controller/informers.ts';
import { Leadership } from '../controller/leader-aware.ts';
import { EvaluationController } from './controller.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let ns: string;
let removeNs: () => Promise<void>;
let custom: CustomObjectsApi;
let leadership: Leadership;
let controller: EvaluationController;
const informers: { stop: () => Promise<void> }[] = [];

const spec = {
  matrix: [{ harness: 'gg', models: ['m-a', 'm-b'] }],
  testCases: [
    { name: 'one', prompt: 'first', testCase: { check: { command: 'true' } } },
    { name: 'two', prompt: 'second', testCase: { check: { command: 'true' } } },
  ],
  repeats: 2,
} satisfies EvaluationSpecInput;

const evaluationsOf = () => waitFor<EvaluationObject>(evaluationsPath(ns), () => true, 1000);
const evaluationWhen = async (name: string, done: (e: EvaluationObject) => boolean) => (await waitFor<EvaluationObject>(evaluationsPath(ns), (all) => all.length === 1 && done(all[0]!), 60_000, { fieldSelector: `metadata.name=${name}` }))[0]!;
const runsWhen = (name: string, done: (runs: RunObject[]) => boolean) => waitFor<RunObject>(runsPath(ns), done, 60_000, { labelSelector: `tcab.dev/evaluation=${name}` });
const apply = async (name: string, s: unknown) => {
  const out = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Evaluation', metadata: { name }, spec: s }));
  expect(out.code, out.stderr).toBe(0);
};
/** A ConfigMap of test cases, labelled so the controller reads it. */
const applyConfigMap = async (name: string, data: Record<string, string>) => {
  const out = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { [TEST_CASES_LABEL]: '' } }, data }));
  expect(out.code, out.stderr).toBe(0);
};
/** What the dispatcher writes when a Run ends: its phase, outcome and the check's verdict. */
const finish = (run: RunObject, passed: boolean) => {
  const status: RunStatus = { phase: 'Succeeded', outcome: 'succeeded', check: { passed, exitCode: passed ? 0 : 1, reward: null, durationMs: 5 }, startTime: '2026-12-07T10:00:00Z', completionTime: '2026-12-07T10:00:10Z', usage: { input: 10, output: 1, cache_read: null, cache_write: null, reasoning: null }, actualCostUsd: 0.1, comparableCostUsd: 0.1 };
  return custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: ns, plural: RUNS, name: run.metadata!.name!, body: { ...run, status } });
};

beforeAll(async () => {
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/evaluations.tcab.dev', '--timeout=30s']);
  ({ name: ns, remove: removeNs } = await createNamespace('evaluations', { driverPolicy: false }));
  const config = clusterConfig();
  custom = config.makeApiClient(CustomObjectsApi);
  const lean = <T extends RunObject | EvaluationObject>(path: string, plural: string) =>
    makeLeanInformer<T>(config, path, ((page) => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural, ...page })) as ListPageFn<T>, { transform: leanObject });
  const runs = lean<RunObject>(runsPath(ns), RUNS) as unknown as Cache<RunObject>;
  const evaluations = lean<EvaluationObject>(evaluationsPath(ns), EVALUATIONS) as unknown as Cache<EvaluationObject>;
  // As the dispatcher caches them (informers.ts): the namespace's ConfigMaps labelled tcab.dev/test-cases.
  const core = config.makeApiClient(CoreV1Api);
  const testCaseConfigMaps = makeLeanInformer<V1ConfigMap>(config, `/api/v1/namespaces/${ns}/configmaps`, ((page) => core.listNamespacedConfigMap({ namespace: ns, labelSelector: TEST_CASES_LABEL, ...page })) as ListPageFn<V1ConfigMap>, { transform: leanTestCaseConfigMap, labelSelector: TEST_CASES_LABEL }) as unknown as Cache<V1ConfigMap>;
  informers.push(runs, evaluations, testCaseConfigMaps);
  leadership = new Leadership(() => controller.enqueueAll());
  controller = new EvaluationController({ custom, runs, evaluations, testCaseConfigMaps, leadership, log: createLogger({ component: 'test', level: 'silent' }) });
  await Promise.all([runs.start(), evaluations.start(), testCaseConfigMaps.start()]);
});

afterAll(async () => {
  await controller?.shutDown();
  await Promise.all(informers.map((i) => i.stop()));
  await removeNs?.();
});

describe('the Evaluation controller on a real apiserver', () => {
  it('a replica that starts leading makes the Runs of an Evaluation applied before; their ends reach the status; an edited test case replaces exactly its Runs', async () => {
    await apply('edit', spec);
    // Following: nothing is written.
    expect((await evaluationsOf()).find((e) => e.metadata!.name === 'edit')!.status).toBeUndefined();
    leadership.set(true);
    const runs = await runsWhen('edit', (all) => all.length === 8);
    expect((await evaluationWhen('edit', (e) => e.status?.runs?.total === 8)).status).toMatchObject({ phase: 'Running', runs: { total: 8, final: 0 } });

    // Three Runs end, two of them passing: the status follows.
    const byTestCase = (t: string) => runs.filter((r) => r.metadata!.labels!['tcab.dev/test-case'] === t);
    await Promise.all([finish(byTestCase('one')[0]!, true), finish(byTestCase('one')[1]!, true), finish(byTestCase('two')[0]!, false)]);
    const counted = await evaluationWhen('edit', (e) => e.status?.runs?.final === 3);
    expect(counted.status!.runs).toEqual({ total: 8, final: 3, scored: 3, passed: 2, byOutcome: { succeeded: 3 } });

    // Test case "two" edited: its four Runs are replaced by four new ones; "one"'s (two of them final) stay.
    const before = new Map(runs.map((r) => [r.metadata!.name!, r.metadata!.uid]));
    await apply('edit', { ...spec, testCases: [spec.testCases[0]!, { ...spec.testCases[1]!, prompt: 'second, edited' }] });
    const after = await runsWhen('edit', (all) => all.length === 8 && all.filter((r) => !before.has(r.metadata!.name!)).length === 4);
    expect(after.filter((r) => before.get(r.metadata!.name!) === r.metadata!.uid).map((r) => r.metadata!.labels!['tcab.dev/test-case'])).toEqual(['one', 'one', 'one', 'one']);
    expect(after.filter((r) => !before.has(r.metadata!.name!)).every((r) => r.spec.prompt === 'second, edited')).toBe(true);
    const edited = await evaluationWhen('edit', (e) => e.status?.observedGeneration === e.metadata!.generation && e.status?.runs?.final === 2);
    expect(edited.status!.runs).toMatchObject({ total: 8, final: 2, scored: 2, passed: 2 });
  });

  it('a refused spec is Invalid with the field named and makes no Run; fixed, it makes them', async () => {
    await apply('refused', { ...spec, testCases: [spec.testCases[0]!, { ...spec.testCases[1]!, name: 'one' }] });
    const refused = await evaluationWhen('refused', (e) => e.status?.phase === 'Invalid');
    expect(refused.status!.message).toMatch(/^spec refused, no Run made: spec\.testCases\[1\]\.name: "one" names two test cases/);
    expect((await runsWhen('refused', () => true)).length).toBe(0);
    await apply('refused', spec);
    await runsWhen('refused', (all) => all.length === 8);
    expect((await evaluationWhen('refused', (e) => e.status?.phase === 'Running')).status!.message).toBeUndefined();
  });

  it('a slot whose Run name another Run holds is not run, and its status says so; deleted, the Evaluation takes its Runs with it and leaves the other', async () => {
    const one = { ...spec, repeats: 1 };
    await apply('taken', one);
    const made = await runsWhen('taken', (all) => all.length === 4);
    await kubectl(['delete', 'evaluation', 'taken', '-n', ns, '--wait']);
    await runsWhen('taken', (all) => all.length === 0);
    // A Run of nobody's, under the name of one of the slots.
    const squatted = made[0]!.metadata!.name!;
    const squat = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Run', metadata: { name: squatted }, spec: { harness: 'gg', model: 'x', prompt: 'mine' } }));
    expect(squat.code, squat.stderr).toBe(0);
    await apply('taken', one);
    const status = (await evaluationWhen('taken', (e) => e.status?.message !== undefined)).status!;
    expect(status.message).toContain(`1 slot(s) not run: a Run of another owner has the name (${squatted})`);
    const owned = await runsWhen('taken', (all) => all.length === 3);
    expect(owned.map((r) => r.metadata!.name)).not.toContain(squatted);
    expect((await kubectl(['get', 'run', squatted, '-n', ns, '-o', 'jsonpath={.spec.prompt}'])).stdout).toBe('mine');
    await kubectl(['delete', 'evaluation', 'taken', '-n', ns, '--wait']);
    const left = await runsWhen('taken', (all) => all.length === 0);
    expect(left).toEqual([]);
    expect((await kubectl(['get', 'run', squatted, '-n', ns, '-o', 'name'])).stdout.trim()).toBe(`run.tcab.dev/${squatted}`);
  });
  it('test cases from a labelled ConfigMap: Invalid with the field named while it is missing, its Runs once it is made; an edited key replaces exactly its Runs', async () => {
    leadership.set(true);
    await apply('from-map', { matrix: spec.matrix, testCasesFrom: [{ configMap: { name: 'cases' } }] });
    const missing = await evaluationWhen('from-map', (e) => e.status?.phase === 'Invalid');
    expect(missing.status!.message).toBe('spec refused, no Run made: spec.testCasesFrom[0].configMap "cases": not found (or not labelled tcab.dev/test-cases)');
    expect((await runsWhen('from-map', () => true)).length).toBe(0);

    // Made: two test cases (README.md is not one) in two cells, once each.
    const cases = { 'add.yaml': 'prompt: Write add.py\ntestCase: { check: { command: "test -f add.py" } }\n', 'sum.json': '{"prompt": "Write sum.py"}', 'README.md': 'notes' };
    await applyConfigMap('cases', cases);
    const runs = await runsWhen('from-map', (all) => all.length === 4);
    const testCaseOf = (r: RunObject) => r.metadata!.labels!['tcab.dev/test-case'];
    expect(runs.map((r) => [testCaseOf(r), r.spec.prompt]).sort()).toEqual([['add', 'Write add.py'], ['add', 'Write add.py'], ['sum', 'Write sum.py'], ['sum', 'Write sum.py']]);
    const valid = await evaluationWhen('from-map', (e) => e.status?.phase === 'Running');
    expect(valid.status!.message).toBeUndefined();
    expect(valid.status!.runs!.total).toBe(4);

    // sum.json edited (the Evaluation is not): its two Runs are replaced, add's two stay.
    const before = new Map(runs.map((r) => [r.metadata!.name!, r.metadata!.uid]));
    await applyConfigMap('cases', { ...cases, 'sum.json': '{"prompt": "Write sum.py, tested"}' });
    const after = await runsWhen('from-map', (all) => all.length === 4 && all.filter((r) => !before.has(r.metadata!.name!)).length === 2);
    expect(after.filter((r) => before.get(r.metadata!.name!) === r.metadata!.uid).map(testCaseOf)).toEqual(['add', 'add']);
    expect(after.filter((r) => !before.has(r.metadata!.name!)).map((r) => [testCaseOf(r), r.spec.prompt])).toEqual([['sum', 'Write sum.py, tested'], ['sum', 'Write sum.py, tested']]);
    expect((await evaluationWhen('from-map', (e) => e.status?.phase === 'Running')).metadata!.generation).toBe(1);
  });
});
