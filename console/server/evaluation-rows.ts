// The console's Evaluation rows, live: one row per Evaluation from the Evaluations source (its status changes as its
// Runs end), and the listeners of the evaluations stream, fed in coalesced batches (batcher.ts) like the runs'.
import type { EvaluationRow } from '../../shared/console.ts';
import { KeyedBatcher } from './batcher.ts';
import { evaluationRowOf } from './evaluation-row.ts';
import type { EvaluationChange, EvaluationsSource, Unsubscribe } from './sources.ts';

export interface EvaluationsListener {
  onEvaluations(upserts: EvaluationRow[], removes: string[]): void;
}

export class EvaluationRows {
  private readonly rows = new Map<string, EvaluationRow>();
  private readonly listeners = new Set<EvaluationsListener>();
  private readonly batch: KeyedBatcher<EvaluationRow>;
  private unsubscribe: Unsubscribe | undefined;
  /** Whether a source is read at all (absent: the page says Evaluations are not available). */
  readonly available: boolean;
  private readonly source: EvaluationsSource | undefined;

  constructor(source: EvaluationsSource | undefined, batchMs: number) {
    this.source = source;
    this.available = source !== undefined;
    this.batch = new KeyedBatcher(batchMs, (up, rm) => this.listeners.forEach((l) => l.onEvaluations(up, rm)));
  }

  start(): void {
    if (!this.source) return;
    this.unsubscribe = this.source.subscribe((change) => this.onChange(change));
    // The state at start: every stream opened from now on gets it in its snapshot, so it is not batched as upserts
    // too (a client connected before the batch flushed would get the rows twice, the second time as a change).
    for (const evaluation of this.source.list()) {
      const row = evaluationRowOf(evaluation);
      this.rows.set(row.key, row);
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.batch.stop();
  }

  list(): EvaluationRow[] {
    return [...this.rows.values()];
  }

  listen(listener: EvaluationsListener): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private onChange(change: EvaluationChange): void {
    const row = evaluationRowOf(change.evaluation);
    const before = this.rows.get(row.key);
    if (change.type === 'delete') {
      if (!before) return;
      this.rows.delete(row.key);
      this.batch.remove(row.key);
      return;
    }
    // A status write that changed nothing the row shows is not sent again.
    if (before && JSON.stringify(before) === JSON.stringify(row)) return;
    this.rows.set(row.key, row);
    this.batch.upsert(row.key, row);
  }
}
