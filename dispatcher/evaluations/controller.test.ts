// The Evaluation controller's reaction to ConfigMaps of test cases (spec.testCasesFrom), over in-memory caches and
// an in-memory apiserver: a ConfigMap created late turns an Invalid Evaluation into its Runs, an edited key replaces
// exactly its test case's Runs (the slots are kept per generation and ConfigMap versions, not per generation alone),
// a ConfigMap no Evaluation names enqueues nothing, and a deleted one makes the Evaluation Invalid again.
// controller.cluster.test.ts does the same against a real apiserver.
import { EventEmitter } from 'node:events';
import type { CustomObjectsApi, KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EvaluationObject, RunObject } from '../../kube/resources.ts';
import { createLogger } from '../../shared/log.ts';
import type { Cache } from '../controller/informers.ts';
import { Leadership } from '../controller/leader-aware.ts';
import type { Clock } from '../controller/work-queue.ts';
import { EvaluationController } from './controller.ts';

const NS = 'ns';

/** An informer's cache in memory: put/remove emit what the informer would. */
class FakeCache<T extends KubernetesObject> extends EventEmitter {
  readonly objects = new Map<string, T>();
  /** Lookups by name: a reconcile of an Evaluation starts with one. */
  gets = 0;
  get(name: string, namespace?: string): T | undefined {
    this.gets++;
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  list(): T[] {
    return [...this.objects.values()];
  }
  put(object: T): void {
    const key = `${object.metadata!.namespace ?? ''}/${object.metadata!.name!}`;
    const existed = this.objects.has(key);
    this.objects.set(key, object);
    this.emit(existed ? 'update' : 'add', object);
  }
  remove(namespace: string, name: string): void {
    const object = this.objects.get(`${namespace}/${name}`);
    if (!object) return;
    this.objects.delete(`${namespace}/${name}`);
    this.emit('delete', object);
  }
  asCache(): Cache<T> {
    return this as unknown as Cache<T>;
  }
}

let version = 0;
const nextVersion = () => String(++version);

let runs: FakeCache<RunObject>;
let evaluations: FakeCache<EvaluationObject>;
let configMaps: FakeCache<V1ConfigMap>;
let controller: EvaluationController;
let statusWrites: string[];

/** Time moves on at every look, so the status write interval never holds a reconcile back. */
let now = 0;
const clock: Clock = { now: () => (now += 1_000), setTimeout: () => undefined, clearTimeout: () => undefined };

beforeEach(() => {
  runs = new FakeCache();
  evaluations = new FakeCache();
  configMaps = new FakeCache();
  statusWrites = [];
  let uid = 0;
  const custom = {
    createNamespacedCustomObject: async ({ body }: { body: RunObject }) => {
      const run = { ...body, metadata: { ...body.metadata, uid: `run-${++uid}`, resourceVersion: nextVersion() } };
      runs.put(run);
      return run;
    },
    deleteNamespacedCustomObject: async ({ namespace, name }: { namespace: string; name: string }) => runs.remove(namespace, name),
    replaceNamespacedCustomObjectStatus: async ({ body }: { body: EvaluationObject }) => {
      const written = { ...body, metadata: { ...body.metadata, resourceVersion: nextVersion() } };
      statusWrites.push(body.metadata!.name!);
      evaluations.put(written);
      return written;
    },
  } as unknown as CustomObjectsApi;
  const leadership = new Leadership(() => controller.enqueueAll());
  controller = new EvaluationController({ custom, runs: runs.asCache(), evaluations: evaluations.asCache(), testCaseConfigMaps: configMaps.asCache(), leadership, clock, log: createLogger({ component: 'test', level: 'silent' }) });
  leadership.set(true);
});

const applyEvaluation = (name: string, spec: unknown, generation = 1) =>
  evaluations.put({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Evaluation', metadata: { name, namespace: NS, uid: `uid-${name}`, generation, resourceVersion: nextVersion() }, spec: spec as EvaluationObject['spec'] });
const applyConfigMap = (name: string, data: Record<string, string>, namespace = NS) =>
  configMaps.put({ metadata: { name, namespace, resourceVersion: nextVersion(), labels: { 'tcab.dev/test-cases': '' } }, data });
const runsOf = (evaluation: string) => runs.list().filter((r) => r.metadata!.labels!['tcab.dev/evaluation'] === evaluation);
const uidsOf = (evaluation: string, testCase: string) => runsOf(evaluation).filter((r) => r.metadata!.labels!['tcab.dev/test-case'] === testCase).map((r) => r.metadata!.uid!).sort();
const byTestCase = (evaluation: string) => ({ add: uidsOf(evaluation, 'add'), sum: uidsOf(evaluation, 'sum') });
const status = (name: string) => evaluations.get(name, NS)!.status!;

const spec = { matrix: [{ harness: 'gg', models: ['m-a', 'm-b'] }], testCasesFrom: [{ configMap: { name: 'cases' } }] };
const cases = { 'add.yaml': 'prompt: Write add.py\n', 'sum.yaml': 'prompt: Write sum.py\n', 'notes.txt': 'not a test case' };

describe('EvaluationController with test cases from ConfigMaps', () => {
  it('Invalid while its ConfigMap is missing; the ConfigMap created, its Runs are made', async () => {
    applyEvaluation('late', spec);
    await controller.idle();
    expect(status('late')).toEqual({ phase: 'Invalid', message: 'spec refused, no Run made: spec.testCasesFrom[0].configMap "cases": not found (or not labelled tcab.dev/test-cases)', observedGeneration: 1 });
    expect(runsOf('late')).toEqual([]);

    applyConfigMap('cases', cases);
    await controller.idle();
    expect(runsOf('late').map((r) => [r.metadata!.labels!['tcab.dev/test-case'], r.spec.prompt]).sort()).toEqual([['add', 'Write add.py'], ['add', 'Write add.py'], ['sum', 'Write sum.py'], ['sum', 'Write sum.py']]);
    expect(status('late')).toMatchObject({ phase: 'Running', runs: { total: 4, final: 0 } });
    expect(status('late').message).toBeUndefined();
  });

  it('an edited key replaces exactly its test case\'s Runs, at the same generation; a deleted ConfigMap makes it Invalid', async () => {
    applyConfigMap('cases', cases);
    applyEvaluation('edit', spec);
    await controller.idle();
    const before = byTestCase('edit');
    expect(before.add).toHaveLength(2);
    expect(before.sum).toHaveLength(2);

    applyConfigMap('cases', { ...cases, 'sum.yaml': 'prompt: Write sum.py, tested\n' });
    await controller.idle();
    const after = byTestCase('edit');
    expect(after.add).toEqual(before.add);
    expect(after.sum).toHaveLength(2);
    expect(after.sum.filter((uid) => before.sum.includes(uid))).toEqual([]);
    expect(runsOf('edit').filter((r) => r.metadata!.labels!['tcab.dev/test-case'] === 'sum').every((r) => r.spec.prompt === 'Write sum.py, tested')).toBe(true);
    expect(evaluations.get('edit', NS)!.metadata!.generation).toBe(1);

    configMaps.remove(NS, 'cases');
    await controller.idle();
    expect(status('edit')).toMatchObject({ phase: 'Invalid', message: expect.stringContaining('spec.testCasesFrom[0].configMap "cases": not found') });
  });

  it('a ConfigMap no Evaluation names (another name, another namespace, or no longer named) enqueues nothing', async () => {
    applyConfigMap('cases', cases);
    applyEvaluation('quiet', spec);
    await controller.idle();
    expect(statusWrites.length).toBeGreaterThan(0);
    const reconciles = evaluations.gets;
    // The one it names does enqueue it (what the counts below would see).
    applyConfigMap('cases', { ...cases, 'notes.txt': 'changed' });
    await controller.idle();
    expect(evaluations.gets).toBeGreaterThan(reconciles);

    const looked = evaluations.gets;
    applyConfigMap('other', { 'x.yaml': 'prompt: x' });
    applyConfigMap('cases', { 'x.yaml': 'prompt: x' }, 'elsewhere');
    await controller.idle();
    expect(evaluations.gets).toBe(looked);

    // The spec no longer names "cases": editing it changes nothing here.
    applyEvaluation('quiet', { matrix: spec.matrix, testCases: [{ name: 'inline', prompt: 'x' }] }, 2);
    await controller.idle();
    const inline = evaluations.gets;
    applyConfigMap('cases', { 'changed.yaml': 'prompt: y' });
    await controller.idle();
    expect(evaluations.gets).toBe(inline);
    expect(runsOf('quiet').map((r) => r.metadata!.labels!['tcab.dev/test-case'])).toEqual(['inline', 'inline']);
  });
});
