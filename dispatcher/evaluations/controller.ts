// The Evaluation controller (issue 39): one Run per slot of each Evaluation (owned by it, so deleting the Evaluation
// deletes them), a deleted or missing Run made again, and the status kept current as the Runs change. It reads the
// dispatcher's own caches: the Run informer's events update an index of Runs by owning Evaluation as they arrive (no
// list, no second watch of Runs), and each change enqueues its Evaluation's key, so a burst of Runs ending costs one
// reconcile per Evaluation at a time (the work queue dedupes), whose summary is over the index in memory. The
// dispatcher's caps still decide what runs: an Evaluation only creates Runs. Leader only, like every write.
// Test cases from ConfigMaps (spec.testCasesFrom) are read from the cache of ConfigMaps labelled tcab.dev/test-cases:
// a change to one enqueues the Evaluations of its namespace that name it (an index kept from the Evaluation events),
// and the slots are kept per generation and versions of those ConfigMaps, so an edited key replaces its Runs.
import type { CustomObjectsApi, V1ConfigMap } from '@kubernetes/client-node';
import { stringify as stableStringify } from 'safe-stable-stringify';
import type { Logger } from '../../shared/log.ts';
import { concurrently } from '../../shared/concurrently.ts';
import { errorMessage, isAlreadyExists, isConflict, isNotFound } from '../../kube/errors.ts';
import { leanObject } from '../../kube/lean-transforms.ts';
import { EVALUATIONS, GROUP, RUNS, VERSION } from '../../kube/resources.ts';
import type { EvaluationObject, RunObject } from '../../kube/resources.ts';
import type { EvaluationStatus } from '../../shared/evaluation/schema.ts';
import type { Cache } from '../controller/informers.ts';
import type { Leadership } from '../controller/leader-aware.ts';
import { systemClock, WorkQueue } from '../controller/work-queue.ts';
import type { Clock, ReconcileResult } from '../controller/work-queue.ts';
import { invalidStatus, planEvaluation, slotsOf } from './plan.ts';
import { configMapNamesOf } from '../../shared/evaluation/test-case-sources.ts';
import { evaluationOwnerOf } from '../../kube/evaluation-owner.ts';
import type { EvaluationSlots } from './plan.ts';

/** Creates and deletes in flight at once per Evaluation: 10,000 Runs are made in seconds without a burst of 10,000. */
const WRITE_CONCURRENCY = 16;
/** At most one status write per Evaluation per this long: while thousands of Runs end, the apiserver sees a few a second. */
export const STATUS_WRITE_INTERVAL_MS = 250;

export interface EvaluationControllerDeps {
  custom: CustomObjectsApi;
  runs: Cache<RunObject>;
  evaluations: Cache<EvaluationObject>;
  /**
   * The ConfigMaps labelled tcab.dev/test-cases (informers.ts): where spec.testCasesFrom is read. Without it, every
   * Evaluation naming a ConfigMap is Invalid (not found).
   */
  testCaseConfigMaps?: Cache<V1ConfigMap>;
  leadership: Leadership;
  clock?: Clock;
  log: Logger;
  /** Called after each status write with how long after the oldest Run change it reflects was seen (the bench's lag). */
  onStatusWrittenLag?: (key: string, lagMs: number) => void;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export class EvaluationController {
  private readonly deps: EvaluationControllerDeps;
  private readonly clock: Clock;
  private readonly queue: WorkQueue;
  /** Runs by owning Evaluation uid, then by name: kept from the Run informer's events. */
  private readonly owned = new Map<string, Map<string, RunObject>>();
  /** The slots of each Evaluation's current generation and versions of the ConfigMaps it reads (by uid). */
  private readonly slotMemo = new Map<string, { generation: number | undefined; sources: string; slots: EvaluationSlots }>();
  /** Evaluation keys by the ConfigMap key (namespace/name) they read test cases from, and the other way round. */
  private readonly readers = new Map<string, Set<string>>();
  private readonly readsOf = new Map<string, string[]>();
  /** Per Evaluation key: when its status was last written, and when a Run of it last changed (not yet written). */
  private readonly lastWrite = new Map<string, number>();
  /** Per Evaluation key: the object the last status write returned, and the resourceVersion it replaced. */
  private readonly lastWritten = new Map<string, { replaced: string | undefined; object: EvaluationObject }>();
  private readonly pendingSince = new Map<string, number>();

  constructor(deps: EvaluationControllerDeps) {
    this.deps = deps;
    this.clock = deps.clock ?? systemClock;
    const onError = (key: string, error: unknown) => deps.log.error({ evaluation: key, err: errorMessage(error) }, 'evaluation reconcile failed; retrying with backoff');
    this.queue = new WorkQueue(deps.leadership.wrap((key) => this.reconcile(key)), { name: 'evaluations', concurrency: 2, clock: this.clock, onError });
    deps.runs.on('add', (run) => this.onRun(run));
    deps.runs.on('update', (run) => this.onRun(run));
    deps.runs.on('delete', (run) => this.onRun(run, true));
    deps.testCaseConfigMaps?.on('add', (c) => this.onConfigMap(c));
    deps.testCaseConfigMaps?.on('update', (c) => this.onConfigMap(c));
    deps.testCaseConfigMaps?.on('delete', (c) => this.onConfigMap(c));
    deps.evaluations.on('add', (e) => this.onEvaluation(e));
    deps.evaluations.on('update', (e) => this.onEvaluation(e));
    deps.evaluations.on('delete', (e) => {
      this.slotMemo.delete(e.metadata!.uid!);
      const key = keyOf(e.metadata!.namespace!, e.metadata!.name!);
      this.indexReads(key, e.metadata!.namespace!, []);
      this.lastWrite.delete(key);
      this.lastWritten.delete(key);
      this.pendingSince.delete(key);
    });
  }

  private onEvaluation(e: EvaluationObject): void {
    const key = keyOf(e.metadata!.namespace!, e.metadata!.name!);
    this.indexReads(key, e.metadata!.namespace!, configMapNamesOf(e.spec));
    this.queue.add(key);
  }

  /** Records which ConfigMaps the Evaluation `key` reads (none: forgets it). */
  private indexReads(key: string, namespace: string, names: readonly string[]): void {
    for (const old of this.readsOf.get(key) ?? []) {
      const keys = this.readers.get(old);
      keys?.delete(key);
      if (keys?.size === 0) this.readers.delete(old);
    }
    const reads = [...new Set(names)].map((name) => keyOf(namespace, name));
    if (reads.length === 0) this.readsOf.delete(key);
    else this.readsOf.set(key, reads);
    for (const read of reads) {
      let keys = this.readers.get(read);
      if (!keys) this.readers.set(read, (keys = new Set()));
      keys.add(key);
    }
  }

  /** A ConfigMap of test cases added, edited or deleted: the Evaluations that read it look again. */
  private onConfigMap(configMap: V1ConfigMap): void {
    for (const key of this.readers.get(keyOf(configMap.metadata!.namespace!, configMap.metadata!.name!)) ?? []) this.queue.add(key);
  }

  /** Every Evaluation looked at again: a replica that starts leading missed what happened while it followed. */
  enqueueAll(): void {
    for (const e of this.deps.evaluations.list()) this.queue.add(keyOf(e.metadata!.namespace!, e.metadata!.name!));
  }

  async shutDown(): Promise<void> {
    await this.queue.shutDown();
  }

  /** Resolves once no Evaluation waits or is being reconciled (timers may be pending): for tests. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Runs owned per Evaluation, for tests and the bench. */
  get indexedRuns(): number {
    let n = 0;
    for (const runs of this.owned.values()) n += runs.size;
    return n;
  }

  private onRun(run: RunObject, deleted = false): void {
    const owner = evaluationOwnerOf(run);
    if (!owner) return;
    const name = run.metadata!.name!;
    let runs = this.owned.get(owner.uid);
    if (deleted) {
      runs?.delete(name);
      if (runs?.size === 0) this.owned.delete(owner.uid);
    } else {
      if (!runs) this.owned.set(owner.uid, (runs = new Map()));
      runs.set(name, run);
    }
    const key = keyOf(run.metadata!.namespace!, owner.name);
    if (!this.pendingSince.has(key)) this.pendingSince.set(key, this.clock.now());
    this.queue.add(key);
  }

  private slotsFor(evaluation: EvaluationObject): EvaluationSlots {
    const uid = evaluation.metadata!.uid!;
    const namespace = evaluation.metadata!.namespace!;
    const generation = evaluation.metadata!.generation;
    const configMap = (name: string) => this.deps.testCaseConfigMaps?.get(name, namespace);
    // What the slots follow from besides the spec: each ConfigMap it names, at its version (or absent).
    const sources = configMapNamesOf(evaluation.spec).map((name) => `${name}@${configMap(name)?.metadata?.resourceVersion ?? ''}`).join(',');
    const memo = this.slotMemo.get(uid);
    if (memo && memo.generation === generation && memo.sources === sources) return memo.slots;
    const slots = slotsOf(evaluation, configMap);
    this.slotMemo.set(uid, { generation, sources, slots });
    return slots;
  }

  private async reconcile(key: string): Promise<ReconcileResult> {
    // Never in the Run watch's call stack (the work queue may start a key at once): a 10,000-slot summary takes
    // tens of milliseconds, and the dispatcher's claims share this event loop.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Within the write interval, nothing is computed: the changes of the next 250 ms are summed up once, then.
    const wait = (this.lastWrite.get(key) ?? -Infinity) + STATUS_WRITE_INTERVAL_MS - this.clock.now();
    if (wait > 0) return { requeueAfterMs: wait };
    // The oldest Run change this reconcile reflects: given back when it ends without the status being current.
    const since = this.pendingSince.get(key);
    this.pendingSince.delete(key);
    const outcome = { status: 'behind' as 'written' | 'current' | 'behind' };
    try {
      return await this.reconcileNow(key, outcome);
    } finally {
      if (outcome.status === 'written') this.deps.onStatusWrittenLag?.(key, since === undefined ? 0 : this.clock.now() - since);
      else if (outcome.status === 'behind' && since !== undefined) this.pendingSince.set(key, Math.min(since, this.pendingSince.get(key) ?? Infinity));
    }
  }

  /**
   * The cached Evaluation, or the one this controller's last status write returned while the cache still holds the
   * version that write replaced: writing on top of the stale one would only earn a 409 and a backoff.
   */
  private freshest(key: string, cached: EvaluationObject): EvaluationObject {
    const mine = this.lastWritten.get(key);
    return mine && mine.replaced === cached.metadata?.resourceVersion ? mine.object : cached;
  }

  private async reconcileNow(key: string, outcome: { status: 'written' | 'current' | 'behind' }): Promise<ReconcileResult> {
    const [namespace, name] = key.split('/') as [string, string];
    const cached = this.deps.evaluations.get(name, namespace);
    if (!cached || cached.metadata?.deletionTimestamp) return;
    const evaluation = this.freshest(key, cached);
    const slots = this.slotsFor(evaluation);
    if (!slots.valid) return this.writeStatus(key, evaluation, invalidStatus(evaluation, slots.message), outcome);
    const owned = this.owned.get(evaluation.metadata!.uid!) ?? new Map<string, RunObject>();
    const plan = planEvaluation(evaluation, slots, owned, (run) => this.deps.runs.get(run, namespace));
    await this.apply(namespace, plan.create, plan.remove, key);
    if (plan.taken.length > 0) this.deps.log.warn({ evaluation: key, taken: plan.taken.length }, 'slots not run: a Run of another owner has the name');
    return this.writeStatus(key, evaluation, plan.status, outcome);
  }

  /** Creates the missing Runs and deletes the ones no slot names, a few at a time; the first error is thrown after all. */
  private async apply(namespace: string, create: readonly RunObject[], remove: readonly string[], key: string): Promise<void> {
    const { custom } = this.deps;
    const jobs: (() => Promise<unknown>)[] = [
      ...create.map((body) => () => custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUNS, body }).catch((error: unknown) => {
        if (!isAlreadyExists(error)) throw error; // the cache is behind: the Run's add event comes
      })),
      ...remove.map((name) => () => custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUNS, name, propagationPolicy: 'Background' }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      })),
    ];
    if (jobs.length === 0) return;
    const errors: unknown[] = [];
    // Every job is tried (a failure is kept, not thrown, so one bad create does not leave the rest undone).
    await concurrently(jobs, WRITE_CONCURRENCY, (job) => job().catch((error: unknown) => errors.push(error)));
    this.deps.log.info({ evaluation: key, created: create.length, deleted: remove.length, failed: errors.length }, 'evaluation runs made');
    if (errors.length > 0) throw errors[0];
  }

  private async writeStatus(key: string, evaluation: EvaluationObject, status: EvaluationStatus, outcome: { status: 'written' | 'current' | 'behind' }): Promise<ReconcileResult> {
    if (stableStringify(evaluation.status ?? {}) === stableStringify(status)) {
      outcome.status = 'current';
      return;
    }
    const { namespace, name, resourceVersion } = evaluation.metadata as { namespace: string; name: string; resourceVersion?: string };
    let written: EvaluationObject;
    try {
      written = (await this.deps.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace, plural: EVALUATIONS, name, body: { ...evaluation, status } })) as EvaluationObject;
    } catch (error) {
      if (isConflict(error)) return { requeue: true }; // someone else wrote (the spec changed): its update event comes
      if (isNotFound(error)) return;
      throw error;
    }
    this.lastWrite.set(key, this.clock.now());
    this.lastWritten.set(key, { replaced: resourceVersion, object: leanObject(written) });
    outcome.status = 'written';
    return;
  }
}
