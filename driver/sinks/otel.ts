// Exports a run live as OpenTelemetry GenAI spans over OTLP (README "Exporting runs: OpenTelemetry"). This sink is
// the thin part on the driver's thread: it decides per event whether the event becomes trace data or is left out
// over a budget (otel-budget.ts), batches the sequenced, already-scrubbed events once per turn of the event loop
// as the JSON text the NATS sink made of them (a run of left-out events as one small record), and posts the batch
// to a worker thread (otel-worker.ts), which builds the spans with the OpenTelemetry SDK (otel-spans.ts) and exports
// them. So export costs the live path a token-bucket check and one array push per event, and a collector that is
// down or slow never slows or fails the run: the worker's queue is bounded and counts its drops, `close` waits a
// bounded time for the last flush and then ends the worker (and with it any export still in flight), and the
// summary says how many spans were exported and dropped and how many messages were left out.
import { Worker } from 'node:worker_threads';
import { RunAttemptNumber } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import type { LeftOut, RunIdentity } from '../../export/otel/fold.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { OtelSpanWriter } from './otel-spans.ts';
import type { OtelStats } from './otel-spans.ts';
import type { Env } from './otel-budget.ts';
import type { ExportItem, FromWorker, ToWorker } from './otel-worker.ts';
import { ExportAdmission } from './otel-budget.ts';
import type { Admission } from './otel-budget.ts';
import { eventJson } from './sink.ts';
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

/** The closing summary in words, for the driver's log and `tcab run`'s stderr. */
export function describeOtelStats(stats: OtelStats): string {
  const messages = stats.messagesLeftOut > 0 ? `, ${stats.messagesLeftOut} message(s) left out over the budget` : '';
  return `OpenTelemetry: ${stats.exported} span(s) exported, ${stats.dropped} dropped${messages}${stats.lastError ? ` (last error: ${stats.lastError})` : ''}`;
}

export interface OtelSinkOptions extends RunIdentity {
  /** The OTEL_* variables the exporter reads (the worker's process.env is this over the driver's). */
  env: Env;
  /** Write the spans on this thread to this exporter instead (tests of the SDK shell; no worker). */
  exporter?: ConstructorParameters<typeof OtelSpanWriter>[0]['exporter'];
  /** Longest the last flush may take at close (default 2 s). */
  closeTimeoutMs?: number;
  /** Where the closing summary goes (exported/dropped/left-out counts). */
  report?: (stats: OtelStats) => void;
  /**
   * Which attempt of a cluster Run this is, of how many (driver/main.ts: TCAB_RUN_ATTEMPT_NUMBER, TCAB_RUN_ATTEMPTS,
   * as the driver env schema decoded them): `tcab.run.attempt` and `tcab.run.attempts` on every span. Unset (a
   * workstation run) or not a valid attempt (the result's own schema): the attributes are left out, never guessed.
   */
  attempt?: RunAttemptNumber;
}

/** The attempt if the result could carry it (its schema: whole numbers, 1 <= number <= of <= MAX_RETRIES + 1), else unknown. */
function checkedAttempt(attempt: unknown): RunAttemptNumber | undefined {
  try {
    const parsed = RunAttemptNumber.safeParse(attempt);
    return parsed.success ? parsed.data : undefined;
  } catch {
    // A value whose reading throws: unknown too. The export never fails the run.
    return undefined;
  }
}

/** The harness session an event names (stage events name none). */
const sessionOf = (event: HarnessEvent) => ('session_id' in event ? event.session_id : undefined);

function leftOutOf(event: HarnessEvent, admission: Exclude<Admission, 'trace'>): LeftOut {
  return { at: Date.parse(event.timestamp), sessionId: sessionOf(event), tools: admission === 'tool-left-out' ? 1 : 0, messages: admission === 'message-left-out' ? 1 : 0 };
}

function mergeLeftOut(into: LeftOut, event: HarnessEvent, admission: Exclude<Admission, 'trace'>): void {
  const at = Date.parse(event.timestamp);
  if (!(at <= into.at)) into.at = at;
  if (admission === 'tool-left-out') into.tools += 1;
  else if (admission === 'message-left-out') into.messages += 1;
}

export class OtelSink implements EventSink {
  private readonly options: OtelSinkOptions;
  private readonly worker: Worker | undefined;
  private readonly local: OtelSpanWriter | undefined;
  private readonly admission: ExportAdmission;
  /** This turn's events for the worker, in order: trace data as JSON text, runs of left-out events in one piece each. */
  private batch: ExportItem[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private failure: string | undefined;
  private stats: ((stats: OtelStats | undefined) => void) | undefined;
  /** Resolves when the worker has loaded the SDK and warmed it up (about 0.25 s of CPU, spent while the driver installs the harness). */
  readonly ready: Promise<void>;

  constructor(options: OtelSinkOptions) {
    // The run begins now (its sinks are made first): the run span covers the setup before the first event too.
    this.options = { startedAt: Date.now(), ...options };
    options = this.options;
    const env = Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter((e): e is [string, string] => e[1] !== undefined));
    this.admission = new ExportAdmission(env, performance.now());
    const attempt = checkedAttempt(options.attempt);
    let ready = () => {};
    this.ready = new Promise((resolve) => (ready = resolve));
    if (options.exporter) {
      ready();
      this.local = new OtelSpanWriter({ runId: options.runId, harness: options.harness, model: options.model, startedAt: options.startedAt, attempt, env: options.env, exporter: options.exporter, closeTimeoutMs: options.closeTimeoutMs });
      return;
    }
    // Its heap is capped: a worker that outgrows it dies alone (the summary says so), never the driver.
    this.worker = new Worker(new URL('./otel-worker.ts', import.meta.url), { workerData: { identity: { runId: options.runId, harness: options.harness, model: options.model, startedAt: options.startedAt }, attempt, closeTimeoutMs: options.closeTimeoutMs }, env, resourceLimits: { maxOldGenerationSizeMb: 128 } });
    // Never the run's failure: the export stops and the summary says why.
    this.worker.on('error', (error) => (this.failure = `export worker failed: ${error.message}`));
    this.worker.on('message', (message: FromWorker) => (message.kind === 'ready' ? ready() : this.stats?.(message.stats)));
    this.worker.on('exit', () => {
      ready();
      this.stats?.(undefined);
    });
  }

  event(record: SequencedEvent): void {
    const { event } = record;
    const admission = this.admission.admit(event.type, performance.now());
    if (this.local) {
      if (admission === 'trace') this.local.event(record.seq, event);
      else this.local.leftOut(leftOutOf(event, admission));
      return;
    }
    if (admission === 'trace') this.batch.push({ seq: record.seq, json: eventJson(record) });
    else {
      // A run of left-out events in one session is told as one piece: what the worker needs is the latest time.
      const previous = this.batch.at(-1);
      if (previous && 'leftOut' in previous && previous.leftOut.sessionId === sessionOf(event)) mergeLeftOut(previous.leftOut, event, admission);
      else this.batch.push({ leftOut: leftOutOf(event, admission) });
    }
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
    return stats ?? { ended: 0, exported: 0, dropped: 0, messagesLeftOut: 0, lastError: this.failure ?? 'the export worker did not report' };
  }

  private flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.batch.length === 0) return;
    const items = this.batch;
    this.batch = [];
    this.post({ kind: 'events', items });
  }

  private post(message: ToWorker): void {
    try {
      this.worker?.postMessage(message);
    } catch (error) {
      this.failure ??= `export worker unreachable: ${(error as Error).message}`;
    }
  }
}
