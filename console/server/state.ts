// The console's live state, one per server: a row per Run (its Kubernetes half from the Runs source, its activity
// from the NATS activity source), per-harness counts, and the listeners of the runs and harnesses streams, fed in
// coalesced batches (batcher.ts). Rows are the only copy it keeps; Kubernetes objects are never retained.
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { Activity, HarnessRow, RunRow } from '../../shared/console.ts';
import { activityOf } from './activity.ts';
import { EvaluationRows } from './evaluation-rows.ts';
import { KeyedBatcher } from './batcher.ts';
import { HarnessTally, harnessRow } from './harness-rows.ts';
import { rowOf, sameRow, withActivity } from './run-row.ts';
import type { ConsoleSources, RunChange, StreamedEvent, Stoppable, Unsubscribe } from './sources.ts';

/** Coalescing interval of the runs and harnesses streams (issue 23: at most every ~200 ms). */
export const BATCH_MS = 200;
/** Activities of runs not (yet) known: an event may arrive before the watch shows its Run. Bounded, oldest dropped. */
const MAX_ORPHAN_ACTIVITIES = 10_000;
/** Back-off of a failed activity consumer: 1 s, doubling to a minute. */
export const ACTIVITY_RETRY_MS = 1000;
const MAX_ACTIVITY_RETRY_MS = 60_000;

export interface RowsListener {
  onRows(upserts: RunRow[], removes: string[]): void;
}
export interface HarnessListener {
  onHarnesses(rows: HarnessRow[]): void;
}

interface LastEvent {
  seq: number;
  activity: Activity;
  at: string;
}

export class ConsoleState {
  private readonly rows = new Map<string, RunRow>();
  private readonly keyByRunId = new Map<string, string>();
  private readonly activities = new Map<string, LastEvent>();
  private readonly orphans = new Map<string, LastEvent>();
  private readonly tally = new HarnessTally();
  private readonly rowListeners = new Set<RowsListener>();
  private readonly harnessListeners = new Set<HarnessListener>();
  private readonly rowBatch = new KeyedBatcher<RunRow>(BATCH_MS, (up, rm) => this.rowListeners.forEach((l) => l.onRows(up, rm)));
  private readonly harnessBatch = new KeyedBatcher<string>(BATCH_MS, (slugs) => this.emitHarnesses(slugs));
  private readonly unsubscribes: Unsubscribe[] = [];
  private activity: Stoppable | undefined;
  natsProblem: string | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 0;

  readonly sources: ConsoleSources;
  /** Every Evaluation's row (issue 39), live; `available` false without an Evaluations source. */
  readonly evaluations: EvaluationRows;

  constructor(sources: ConsoleSources) {
    this.sources = sources;
    this.evaluations = new EvaluationRows(sources.evaluations, BATCH_MS);
  }

  async start(): Promise<void> {
    this.unsubscribes.push(this.sources.runs.subscribe((change) => this.onRunChange(change)));
    for (const run of this.sources.runs.list()) this.onRunChange({ type: 'upsert', run });
    this.evaluations.start();
    this.unsubscribes.push(this.sources.configs.subscribe(() => this.sources.harnesses.list().forEach((h) => this.harnessBatch.upsert(h.slug, h.slug))));
    if (this.sources.throttles) this.unsubscribes.push(this.sources.throttles.subscribe(() => this.sources.harnesses.list().forEach((h) => this.harnessBatch.upsert(h.slug, h.slug))));
    if (this.sources.activity) await this.followActivity();
  }

  /**
   * The activity consumer; when it ends with an error (a permission refused, the consumer lost) it is started
   * again after a back-off, so a replica never stops updating activities. Its replay of the last event of each
   * subject is idempotent (the highest stream sequence wins).
   */
  private async followActivity(): Promise<void> {
    if (this.stopped) return;
    try {
      this.activity = await this.sources.activity!.start(
        (events) => {
          this.natsProblem = undefined;
          this.retryMs = 0;
          this.onEvents(events);
        },
        (error) => this.activityFailed(error),
      );
    } catch (error) {
      this.activityFailed(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private activityFailed(error: Error): void {
    this.natsProblem = error.message;
    if (this.stopped || this.retry) return;
    const reading = this.activity;
    this.activity = undefined;
    void reading?.stop().catch(() => undefined);
    this.retryMs = Math.min(Math.max(this.retryMs * 2, ACTIVITY_RETRY_MS), MAX_ACTIVITY_RETRY_MS);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.followActivity();
    }, this.retryMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.unsubscribes.splice(0).forEach((u) => u());
    this.rowBatch.stop();
    this.harnessBatch.stop();
    this.evaluations.stop();
    await this.activity?.stop();
  }

  runRows(): RunRow[] {
    return [...this.rows.values()];
  }

  row(key: string): RunRow | undefined {
    return this.rows.get(key);
  }

  harnessRows(): HarnessRow[] {
    const configs = this.sources.configs.list();
    const holds = this.sources.throttles?.list() ?? [];
    return this.sources.harnesses.list().map((h) => harnessRow(h, configs, this.tally.get(h.slug), this.sources.harnesses, holds));
  }

  onRows(listener: RowsListener): Unsubscribe {
    this.rowListeners.add(listener);
    return () => this.rowListeners.delete(listener);
  }

  onHarnesses(listener: HarnessListener): Unsubscribe {
    this.harnessListeners.add(listener);
    return () => this.harnessListeners.delete(listener);
  }

  private emitHarnesses(slugs: string[]): void {
    const wanted = new Set(slugs);
    const rows = this.harnessRows().filter((r) => wanted.has(r.slug));
    if (rows.length > 0) this.harnessListeners.forEach((l) => l.onHarnesses(rows));
  }

  private onRunChange(change: RunChange): void {
    const base = rowOf(change.run);
    const before = this.rows.get(base.key);
    const runId = clusterRunIdOf(base.namespace, base.name);
    if (change.type === 'delete') {
      if (!before) return;
      this.rows.delete(base.key);
      if (runId) {
        this.keyByRunId.delete(runId);
        this.activities.delete(runId);
      }
      this.rowBatch.remove(base.key);
      this.touchHarnesses(this.tally.change(before, undefined));
      return;
    }
    // A Run deleted and created again under its name (same run id) starts without the earlier one's activity.
    if (runId && before && before.uid !== base.uid) this.activities.delete(runId);
    if (runId && !this.keyByRunId.has(runId)) {
      this.keyByRunId.set(runId, base.key);
      const orphan = this.orphans.get(runId);
      if (orphan) {
        this.orphans.delete(runId);
        this.activities.set(runId, orphan);
      }
    }
    const row = withActivity(base, runId ? this.activities.get(runId) : undefined);
    if (before && sameRow(before, row)) return;
    this.rows.set(row.key, row);
    this.rowBatch.upsert(row.key, row);
    this.touchHarnesses(this.tally.change(before, row));
  }

  private touchHarnesses(slugs: string[]): void {
    for (const slug of slugs) this.harnessBatch.upsert(slug, slug);
  }

  /** Keeps each run's latest event (highest stream sequence) as its activity. */
  onEvents(events: StreamedEvent[]): void {
    for (const e of events) {
      const last: LastEvent = { seq: e.seq, activity: activityOf(e.event), at: e.at };
      const key = this.keyByRunId.get(e.runId);
      if (!key) {
        const held = this.orphans.get(e.runId);
        if (held && held.seq > e.seq) continue;
        this.orphans.delete(e.runId);
        this.orphans.set(e.runId, last);
        if (this.orphans.size > MAX_ORPHAN_ACTIVITIES) this.orphans.delete(this.orphans.keys().next().value!);
        continue;
      }
      const held = this.activities.get(e.runId);
      if (held && held.seq > e.seq) continue;
      this.activities.set(e.runId, last);
      const row = { ...this.rows.get(key)!, activity: last.activity, lastEventAt: last.at };
      this.rows.set(key, row);
      this.rowBatch.upsert(key, row);
    }
  }
}
