// Exports a run live as OpenTelemetry GenAI spans over OTLP (README "Exporting runs: OpenTelemetry"). This sink is
// the thin part on the driver's thread: it batches the sequenced, already-scrubbed events (the same records the
// NATS sink gets) once per turn of the event loop and posts them to a worker thread (otel-worker.ts), which builds
// the spans with the OpenTelemetry SDK (otel-spans.ts) and exports them. So export costs the live path one
// structured clone per event, and a collector that is down or slow never slows or fails the run: the worker's
// queue is bounded and counts its drops, `close` waits a bounded time for the last flush and then ends the worker
// (and with it any export still in flight), and the summary says how many spans were exported and dropped.
import { Worker } from 'node:worker_threads';
import type { RunResult } from '../../shared/run.ts';
import type { RunIdentity } from '../../export/otel/fold.ts';
import { OtelSpanWriter } from './otel-spans.ts';
import type { Env, OtelStats } from './otel-spans.ts';
import type { FromWorker, ToWorker } from './otel-worker.ts';
import type { EventSink, SequencedEvent } from './sink.ts';

export { otelSecrets } from './otel-spans.ts';
export type { OtelStats } from './otel-spans.ts';

/** Whether this run exports: TCAB_OTEL (1/true, 0/false) or, unset, an OTLP endpoint variable; the SDK's off switches win. */
export function otelExportEnabled(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  const flag = env.TCAB_OTEL?.toLowerCase();
  if (flag === '0' || flag === 'false') return false;
  return flag === '1' || flag === 'true' || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export interface OtelSinkOptions extends RunIdentity {
  /** The OTEL_* variables the exporter reads (the worker's process.env is this over the driver's). */
  env: Env;
  /** Write the spans on this thread to this exporter instead (tests of the SDK shell; no worker). */
  exporter?: ConstructorParameters<typeof OtelSpanWriter>[0]['exporter'];
  /** Longest the last flush may take at close (default 2 s). */
  closeTimeoutMs?: number;
  /** Where the closing summary goes (exported/dropped counts). */
  report?: (stats: OtelStats) => void;
}

export class OtelSink implements EventSink {
  private readonly options: OtelSinkOptions;
  private readonly worker: Worker | undefined;
  private readonly local: OtelSpanWriter | undefined;
  private batch: [number, SequencedEvent['event']][] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private failure: string | undefined;
  private stats: ((stats: OtelStats | undefined) => void) | undefined;
  /** Resolves when the worker has loaded the SDK (about 0.2 s of CPU, spent while the driver installs the harness). */
  readonly ready: Promise<void>;

  constructor(options: OtelSinkOptions) {
    // The run begins now (its sinks are made first): the run span covers the setup before the first event too.
    this.options = { startedAt: Date.now(), ...options };
    options = this.options;
    let ready = () => {};
    this.ready = new Promise((resolve) => (ready = resolve));
    if (options.exporter) {
      ready();
      this.local = new OtelSpanWriter({ runId: options.runId, harness: options.harness, model: options.model, startedAt: options.startedAt, env: options.env, exporter: options.exporter, closeTimeoutMs: options.closeTimeoutMs });
      return;
    }
    const env = Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter((e): e is [string, string] => e[1] !== undefined));
    // Its heap is capped: a worker that outgrows it dies alone (the summary says so), never the driver.
    this.worker = new Worker(new URL('./otel-worker.ts', import.meta.url), { workerData: { identity: { runId: options.runId, harness: options.harness, model: options.model, startedAt: options.startedAt }, closeTimeoutMs: options.closeTimeoutMs }, env, resourceLimits: { maxOldGenerationSizeMb: 128 } });
    // Never the run's failure: the export stops and the summary says why.
    this.worker.on('error', (error) => (this.failure = `export worker failed: ${error.message}`));
    this.worker.on('message', (message: FromWorker) => (message.kind === 'ready' ? ready() : this.stats?.(message.stats)));
    this.worker.on('exit', () => {
      ready();
      this.stats?.(undefined);
    });
  }

  event(record: SequencedEvent): void {
    this.batch.push([record.seq, record.event]);
    // One message per turn of the event loop, after the NATS publish of the same events has been issued.
    this.scheduled ??= setImmediate(() => this.flush());
  }

  result(result: RunResult): void {
    this.flush();
    if (this.local) this.local.result(result);
    else this.post({ kind: 'result', result });
  }

  async close(): Promise<void> {
    this.flush();
    const stats = this.local ? await this.local.close() : await this.closeWorker();
    this.options.report?.(this.failure ? { ...stats, lastError: this.failure } : stats);
  }

  private async closeWorker(): Promise<OtelStats> {
    const worker = this.worker!;
    const answered = new Promise<OtelStats | undefined>((resolve) => {
      this.stats = resolve;
      // The worker bounds its own flush; this only guards against one that no longer answers.
      setTimeout(() => resolve(undefined), (this.options.closeTimeoutMs ?? 2000) + 3000).unref();
    });
    this.post({ kind: 'close' });
    const stats = await answered;
    // Ends exports still in flight (a slow collector): nothing of the export outlives the run.
    await worker.terminate();
    return stats ?? { ended: 0, exported: 0, dropped: 0, lastError: this.failure ?? 'the export worker did not report' };
  }

  private flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.batch.length === 0) return;
    const events = this.batch;
    this.batch = [];
    if (this.local) for (const [seq, event] of events) this.local.event(seq, event);
    else this.post({ kind: 'events', events });
  }

  private post(message: ToWorker): void {
    try {
      this.worker?.postMessage(message);
    } catch (error) {
      this.failure ??= `export worker unreachable: ${(error as Error).message}`;
    }
  }
}
