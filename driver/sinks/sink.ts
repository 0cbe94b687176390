// Where a run's events go. Every sink gets the same sequenced, already-scrubbed records in order; `event` only
// enqueues (a slow sink never stalls translation), `close` waits until what it accepted is delivered or given up.
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import type { RunProgress } from '../../shared/run-progress.ts';

export interface SequencedEvent {
  runId: string;
  /** 1-based, gap-free per run: consumers detect loss and order by it. */
  seq: number;
  event: HarnessEvent;
  /** The event's JSON text once a sink has made it (eventJson): the other sinks reuse it. */
  json?: string;
}

export interface EventSink {
  event(record: SequencedEvent): void;
  /** Where the run is between events (the check has started): best effort, never holds the run up. */
  progress?(runId: string, progress: RunProgress): void;
  result(result: RunResult): void;
  close(): Promise<void>;
}

/**
 * The event as JSON text, serialized once however many sinks need it as text (the NATS payload, the batches the
 * OpenTelemetry sink hands its worker): every sink gets the same record, so the first one to ask fills its memo.
 */
export function eventJson(record: SequencedEvent): string {
  return (record.json ??= JSON.stringify(record.event));
}

/** Collects everything in memory: tests and the bench use it. */
export class MemorySink implements EventSink {
  readonly events: SequencedEvent[] = [];
  results: RunResult[] = [];
  readonly progresses: RunProgress[] = [];
  closed = false;
  event(record: SequencedEvent): void {
    this.events.push(record);
  }
  progress(_runId: string, progress: RunProgress): void {
    this.progresses.push(progress);
  }
  result(result: RunResult): void {
    this.results.push(result);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}
