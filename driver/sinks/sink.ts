// Where a run's events go. Every sink gets the same sequenced, already-scrubbed records in order; `event` only
// enqueues (a slow sink never stalls translation), `close` waits until what it accepted is delivered or given up.
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';

export interface SequencedEvent {
  runId: string;
  /** 1-based, gap-free per run: consumers detect loss and order by it. */
  seq: number;
  event: HarnessEvent;
}

export interface EventSink {
  event(record: SequencedEvent): void;
  result(result: RunResult): void;
  close(): Promise<void>;
}

/** Collects everything in memory: tests and the bench use it. */
export class MemorySink implements EventSink {
  readonly events: SequencedEvent[] = [];
  results: RunResult[] = [];
  closed = false;
  event(record: SequencedEvent): void {
    this.events.push(record);
  }
  result(result: RunResult): void {
    this.results.push(result);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}
