// A real tracing backend for the OpenTelemetry export tests: Jaeger v2 (an OpenTelemetry Collector distribution)
// built from the Go module proxy by scripts/ensure-jaeger.sh and cached by version, started with an OTLP/HTTP
// receiver, in-memory trace storage and its query API, each on a free 127.0.0.1 port and nothing else (no
// internal metrics listener). Traces are read back with the query API the Jaeger UI uses.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './nats-server.ts';
import { pollUntil } from './poll.ts';
import type { PollOptions } from './poll.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export function jaegerBinary(): string {
  return execFileSync(join(ROOT, 'scripts', 'ensure-jaeger.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** A span as the query API returns it (Jaeger's JSON model: tags and logs as key/value lists, times in µs). */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  startTime: number;
  duration: number;
  tags: { key: string; type: string; value: unknown }[];
  logs: { timestamp: number; fields: { key: string; type: string; value: unknown }[] }[];
  processID: string;
}
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }>;
}

/** A span's tags as an object. */
export function tagsOf(span: Pick<JaegerSpan, 'tags'>): Record<string, unknown> {
  return Object.fromEntries(span.tags.map((t) => [t.key, t.value]));
}

const config = (otlp: number, query: number, grpc: number) => `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics: { level: none }
    logs: { level: warn }
extensions:
  jaeger_storage:
    backends:
      memstore: { memory: { max_traces: 10000 } }
  jaeger_query:
    storage: { traces: memstore }
    http: { endpoint: "127.0.0.1:${query}" }
    grpc: { endpoint: "127.0.0.1:${grpc}" }
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:${otlp}" }
exporters:
  jaeger_storage_exporter: { trace_storage: memstore }
`;

export class Jaeger {
  /** What the OTLP exporter is given as OTEL_EXPORTER_OTLP_ENDPOINT (it appends /v1/traces). */
  readonly otlpEndpoint: string;
  readonly queryUrl: string;
  private readonly child: ChildProcess;
  private readonly dir: string;
  private log = '';

  private constructor(child: ChildProcess, dir: string, otlp: number, query: number) {
    this.child = child;
    this.dir = dir;
    this.otlpEndpoint = `http://127.0.0.1:${otlp}`;
    this.queryUrl = `http://127.0.0.1:${query}`;
    child.stdout?.setEncoding('utf8').on('data', (t: string) => (this.log += t));
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (this.log += t));
  }

  /**
   * @param background run it at the lowest CPU priority on one core (the bench: a collector on the same two cores
   *   as the driver it measures would otherwise be measured too; in a cluster it runs elsewhere).
   */
  static async start(options: { background?: boolean } = {}): Promise<Jaeger> {
    const binary = jaegerBinary();
    const dir = mkdtempSync(join(tmpdir(), 'tcab-jaeger-'));
    const [otlp, query, grpc] = [await freePort(), await freePort(), await freePort()];
    writeFileSync(join(dir, 'config.yaml'), config(otlp, query, grpc));
    const argv = [binary, '--config', join(dir, 'config.yaml')];
    const [command, ...args] = options.background ? ['nice', '-n', '19', ...argv] : argv;
    const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(options.background ? { GOMAXPROCS: '1' } : {}) } });
    const jaeger = new Jaeger(child, dir, otlp, query);
    await pollUntil('Jaeger to answer queries', async () => (await fetch(`${jaeger.queryUrl}/api/services`)).ok, { timeoutMs: 60_000, ...jaeger.whileRunning() });
    return jaeger;
  }

  /** pollUntil options for a wait on this Jaeger: over when it exits, its log in the failure. */
  private whileRunning(): Pick<PollOptions, 'giveUp' | 'detail'> {
    return {
      giveUp: () => (this.child.exitCode !== null ? `jaeger exited (${this.child.exitCode})` : undefined),
      detail: () => `jaeger's log:\n${this.log}`,
    };
  }

  /** Traces of a service whose spans carry these tags (the query API's own search), raw JSON text and parsed. */
  async traces(service: string, tags: Record<string, string>): Promise<{ text: string; traces: JaegerTrace[] }> {
    const url = `${this.queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=20&tags=${encodeURIComponent(JSON.stringify(tags))}`;
    const response = await fetch(url);
    const text = await response.text();
    if (!response.ok) return { text, traces: [] };
    return { text, traces: (JSON.parse(text) as { data: JaegerTrace[] | null }).data ?? [] };
  }

  /** The one trace whose run span says the run is over (the run span is exported last), waiting until it is stored. */
  async runTrace(runId: string, minSpans: number): Promise<{ text: string; trace: JaegerTrace }> {
    return pollUntil(`the trace of run ${runId}`, async () => {
      const { traces } = await this.traces('tcab', { 'tcab.run.id': runId });
      const trace = traces.find((t) => t.spans.some((s) => s.operationName === 'invoke_workflow tcab.run' && 'tcab.outcome' in tagsOf(s)));
      if (!trace) return undefined;
      // The run span is matched by its tag; fetch the whole trace (every span), until all have been stored.
      const full = await fetch(`${this.queryUrl}/api/traces/${trace.traceID}`);
      const fullText = await full.text();
      const whole = (JSON.parse(fullText) as { data: JaegerTrace[] }).data[0];
      return whole && whole.spans.length >= minSpans ? { text: fullText, trace: whole } : undefined;
    }, { timeoutMs: 60_000, ...this.whileRunning() });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
