// The export's worker thread: receives a run's sequenced, already-scrubbed events and its result in batches and
// writes them as spans (otel-spans.ts). Span building, protobuf encoding and HTTP happen here, not on the thread
// that translates harness output and publishes it to NATS. Its process.env is the one the sink gave it.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunAttemptNumber, RunResult } from '../../shared/run.ts';
import type { LeftOut, RunIdentity } from '../../export/otel/fold.ts';
import { OtelSpanWriter } from './otel-spans.ts';
import { warmUp } from './otel-warm-up.ts';
import type { OtelStats } from './otel-spans.ts';

/** An event that is trace data (its JSON text: the NATS sink's serialization, reused), or a run of left-out ones. */
export type ExportItem = { seq: number; json: string } | { leftOut: LeftOut };

export type FromWorker = { kind: 'ready' } | { kind: 'stats'; stats: OtelStats };
export type ToWorker =
  | { kind: 'events'; items: ExportItem[] }
  | { kind: 'result'; result: RunResult }
  | { kind: 'close' };

/**
 * The export is background work: this thread runs at the lowest CPU priority (nice 19, Linux applies it to one thread
 * by its id), so where cores are scarce the translation and NATS publish of the same events go first and the export
 * falls behind into its bounded queue (drops counted) instead of taking their CPU. Raising one's own niceness needs
 * no privilege; where it fails (not Linux) the export simply runs at normal priority.
 */
function lowerThisThreadsPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, 19);
  } catch {
    // Not Linux, or /proc not mounted: normal priority.
  }
}
lowerThisThreadsPriority();

const { identity, attempt, closeTimeoutMs } = workerData as { identity: RunIdentity; attempt?: RunAttemptNumber; closeTimeoutMs?: number };
const writer = new OtelSpanWriter({ ...identity, attempt, env: process.env, closeTimeoutMs });
parentPort!.on('message', (message: ToWorker) => {
  if (message.kind === 'events') {
    for (const item of message.items) {
      if ('leftOut' in item) writer.leftOut(item.leftOut);
      else writer.event(item.seq, JSON.parse(item.json) as HarnessEvent);
    }
  }
  else if (message.kind === 'result') writer.result(message.result);
  else void writer.close().then((stats) => parentPort!.postMessage({ kind: 'stats', stats } satisfies FromWorker));
});
// Before the run's events arrive (the driver is installing the harness): see otel-warm-up.ts.
await warmUp();
parentPort!.postMessage({ kind: 'ready' } satisfies FromWorker);
