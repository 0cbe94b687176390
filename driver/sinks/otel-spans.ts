// The OpenTelemetry SDK shell of the export (driver/sinks/otel.ts runs it in a worker thread): the pure fold
// (export/otel/fold.ts) turns each sequenced, already-scrubbed event into span operations, replayed here on SDK spans.
// Configured by the standard variables (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, OTEL_BSP_*,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), read by the SDK itself; tcab only picks defaults where a run
// differs from a long-lived service (a short export delay, short timeouts) and never overrides a variable that is set.
// Spans enter the SDK's bounded queue (BatchSpanProcessor, OTEL_BSP_MAX_QUEUE_SIZE) and are exported in the
// background; `close` gives the last flush a bounded time. Spans that never reached the collector (queue full,
// export failed, flush cut short) are counted: every span ended minus every span the collector acknowledged.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { RunAttemptNumber, RunResult } from '../../shared/run.ts';
import { RunSpanFold } from '../../export/otel/fold.ts';
import type { LeftOut, RunIdentity, SpanOperation } from '../../export/otel/fold.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { eventCountLimit, exportBatchSize, queueSize } from './otel-budget.ts';
import type { Env } from './otel-budget.ts';

/** Values of OTEL_EXPORTER_OTLP_[TRACES_]HEADERS (`k=v,k2=v2`, often a bearer token): the scrubber must know them. */
export function otelSecrets(env: Env): string[] {
  return [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]
    .flatMap((h) => (h ? h.split(',') : []))
    .map((pair) => decodeURIComponent(pair.slice(pair.indexOf('=') + 1).trim()))
    .filter((v) => v.length >= 4);
}

export interface OtelStats {
  /** Spans ended (handed to the batch processor). */
  ended: number;
  /** Spans the collector acknowledged. */
  exported: number;
  /** Spans that never reached it: left out over the tool span budget, queue full, export failed or the final flush timed out. */
  dropped: number;
  /** Agent and reasoning messages left out over their budget (otel-budget.ts); their session spans say how many. */
  messagesLeftOut: number;
  /** The last export failure, if any (never carries header values). */
  lastError?: string;
}

export interface OtelSpanOptions extends RunIdentity {
  /** The standard OTEL_* variables (the exporter itself reads them from process.env, the worker's copy of this). */
  env: Env;
  /** The exporter to use instead of OTLP over HTTP (tests). */
  exporter?: SpanExporter;
  /** Longest the last flush may take at close (default 2 s): a dead collector must not hold the driver's exit. */
  closeTimeoutMs?: number;
  /** Which attempt of a cluster Run this is, of how many (checked by the sink, otel.ts); unknown: not said. */
  attempt?: RunAttemptNumber;
}

/** The attempt, beside the run id's attribute: `tcab.run.attempt` (from 1) and `tcab.run.attempts` (how many it may make). */
export function attemptAttributes(attempt: RunAttemptNumber | undefined): Attributes {
  return attempt ? { 'tcab.run.attempt': attempt.number, 'tcab.run.attempts': attempt.of } : {};
}

/** Our default where the standard variable is unset: a run is short, so spans go out within a second. */
function unlessSet(env: Env, variable: string, value: number): number | undefined {
  return env[variable] === undefined || env[variable] === '' ? value : undefined;
}

/**
 * Counts what the collector acknowledged (a failed export's spans are gone: the SDK does not retry a batch). Once
 * the sink is closing and an export fails, the collector is taken as down: later batches fail at once instead of
 * each waiting out its timeout, so a dead collector holds the driver's exit for one export timeout at most.
 */
class CountingExporter implements SpanExporter {
  private readonly inner: SpanExporter;
  private readonly stats: OtelStats;
  private readonly secrets: string[];
  private lastFailed = false;
  private closing = false;
  private givenUp = false;
  private onGiveUp: (() => void) | undefined;
  constructor(inner: SpanExporter, stats: OtelStats, secrets: string[]) {
    this.inner = inner;
    this.stats = stats;
    this.secrets = secrets;
  }
  /** Resolves when the collector is taken as down during the close (at once if the last export failed). */
  close(): Promise<void> {
    this.closing = true;
    if (this.lastFailed) this.givenUp = true;
    return this.givenUp ? Promise.resolve() : new Promise((resolve) => (this.onGiveUp = resolve));
  }
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.givenUp) return done({ code: ExportResultCode.FAILED });
    this.inner.export(spans, (result) => {
      this.lastFailed = result.code !== ExportResultCode.SUCCESS;
      if (!this.lastFailed) this.stats.exported += spans.length;
      else if (result.error) this.stats.lastError = this.secrets.reduce((m, s) => m.replaceAll(s, '[REDACTED]'), result.error.message).slice(0, 300);
      if (this.lastFailed && this.closing) {
        this.givenUp = true;
        this.onGiveUp?.();
      }
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** One run's spans on the SDK: events and the result in, stats out at close. */
export class OtelSpanWriter {
  readonly stats: OtelStats = { ended: 0, exported: 0, dropped: 0, messagesLeftOut: 0 };
  private readonly options: OtelSpanOptions;
  private readonly provider: BasicTracerProvider;
  private readonly exporter: CountingExporter;
  private readonly tracer: Tracer;
  private readonly fold: RunSpanFold;
  private readonly spans = new Map<string, Span>();
  /** On every span, so a tool or session span filtered out of its trace still says which attempt it belongs to. */
  private readonly attempt: Attributes;
  /** Tool spans left out over the budget: never built, counted as dropped. */
  private toolsLeftOut = 0;
  private sawResult = false;
  /** Set when the SDK threw: the sink stops, the run goes on. */
  private broken = false;

  constructor(options: OtelSpanOptions) {
    this.options = options;
    this.attempt = attemptAttributes(options.attempt);
    const { env } = options;
    const secrets = otelSecrets(env);
    // The endpoint, headers and protocol details come from the environment (the SDK reads them); the timeout too if set.
    const timeoutSet = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT || env.OTEL_EXPORTER_OTLP_TIMEOUT);
    const exporter = options.exporter ?? new OTLPTraceExporter(timeoutSet ? {} : { timeoutMillis: 2000 });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'tcab' }).merge(detectResources({ detectors: [envDetector] })),
      // A session span holds its messages until the run ends: more than the SDK's default 128, still bounded.
      spanLimits: { eventCountLimit: eventCountLimit(env) },
      spanProcessors: [
        new BatchSpanProcessor((this.exporter = new CountingExporter(exporter, this.stats, secrets)), {
          maxQueueSize: queueSize(env),
          maxExportBatchSize: exportBatchSize(env),
          scheduledDelayMillis: unlessSet(env, 'OTEL_BSP_SCHEDULE_DELAY', 1000),
          exportTimeoutMillis: unlessSet(env, 'OTEL_BSP_EXPORT_TIMEOUT', 5000),
        }),
      ],
    });
    this.tracer = this.provider.getTracer('tcab');
    this.fold = new RunSpanFold({ runId: options.runId, harness: options.harness, model: options.model, startedAt: options.startedAt });
  }

  event(seq: number, event: HarnessEvent): void {
    this.apply(() => this.fold.event(seq, event));
  }

  /** Events the sink left out of the trace (otel-budget.ts): only their time, session and count. */
  leftOut(entry: LeftOut): void {
    this.toolsLeftOut += entry.tools;
    this.stats.messagesLeftOut += entry.messages;
    this.apply(() => this.fold.leftOut(entry));
  }

  result(result: RunResult): void {
    this.sawResult = true;
    this.apply(() => this.fold.result(result));
  }

  async close(): Promise<OtelStats> {
    if (!this.sawResult) this.apply(() => this.fold.abandon(Date.now(), 'the driver stopped before the run had a result'));
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.closeTimeoutMs ?? 2000);
      timer.unref();
    });
    // Shutdown flushes what is queued; past the limit, or once the collector is seen down, the rest is counted as
    // dropped and the driver goes on to exit.
    await Promise.race([this.provider.shutdown().catch(() => undefined), limit, this.exporter.close()]);
    clearTimeout(timer);
    this.stats.dropped = this.stats.ended - this.stats.exported + this.toolsLeftOut;
    return { ...this.stats };
  }

  private apply(fold: () => SpanOperation[]): void {
    if (this.broken) return;
    try {
      for (const op of fold()) this.replay(op);
    } catch {
      // Never the run's failure: what is already ended still goes out, the rest is counted as not exported.
      this.broken = true;
    }
  }

  private replay(op: SpanOperation): void {
    switch (op.op) {
      case 'start': {
        const parent = op.parent === null ? undefined : this.spans.get(op.parent);
        const ctx = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
        // The run span is a new root: its trace id is the SDK's random one, never derived from the run id. Each
        // attempt of a Run is a new driver Pod with its own sink, so each attempt is its own trace and two attempts
        // never share (or collide in) one; `tcab.run.id` groups a Run's attempts, `tcab.run.attempt` tells them apart.
        this.spans.set(op.span, this.tracer.startSpan(op.name, { kind: SpanKind.INTERNAL, startTime: new Date(op.at), attributes: { ...this.attempt, ...op.attributes }, root: parent === undefined }, ctx));
        break;
      }
      case 'event':
        this.spans.get(op.span)?.addEvent(op.name, op.attributes, new Date(op.at));
        break;
      case 'set':
        this.spans.get(op.span)?.setAttributes(op.attributes);
        break;
      case 'end': {
        const span = this.spans.get(op.span);
        if (!span) break;
        if (op.error) span.setStatus({ code: SpanStatusCode.ERROR, message: op.error });
        span.end(new Date(op.at));
        this.spans.delete(op.span);
        // A span the sampler (OTEL_TRACES_SAMPLER) left out was never meant to be exported: not a drop.
        if (span.spanContext().traceFlags & TraceFlags.SAMPLED) this.stats.ended += 1;
        break;
      }
    }
  }
}
