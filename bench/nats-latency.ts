// Harness line -> NATS subscriber latency through the driver's real pipeline (split, translate, scrub, sequence,
// JetStream publish), next to raw NATS JetStream publish -> receive on the same server in the same run, plus
// events/s through one driver and through the sink alone, each with this process's CPU time per event (steadier
// than wall time on a shared machine). Loopback only; bounded counts.
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { NatsServer } from '../test/support/nats-server.ts';
import { NatsSink } from '../driver/sinks/nats.ts';
import { SecretScrubber } from '../driver/scrub.ts';
import { LineSplitter } from '../shared/translate/lines.ts';
import { TranslationSession } from '../shared/translate/session.ts';
import { loadAdapter } from '../harnesses/registry.ts';
import { STREAM_NAME } from '../nats/stream.ts';
import { natsSettings } from '../nats/settings.ts';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OtelSink } from '../driver/sinks/otel.ts';
import type { OtelStats } from '../driver/sinks/otel.ts';
import type { EventSink } from '../driver/sinks/sink.ts';

function percentiles(samples: number[]): { p50_ms: number; p99_ms: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
  return { p50_ms: at(0.5), p99_ms: at(0.99), n: sorted.length };
}

const text = (i: number) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `message ${i} ${'x'.repeat(200)}` }] }, session_id: 'bench' });
/** A tool call and its result on alternate lines: one agent event, then one command event (a span to export). */
const toolPair = (i: number) =>
  i % 2 === 0
    ? JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `message ${i} ${'x'.repeat(200)}` }, { type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: `echo ${i}` } }] }, session_id: 'bench' })
    : JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: `t${i - 1}`, content: 'ok', is_error: false }] }, session_id: 'bench' });

export interface NatsBenchOptions {
  /** Also export OpenTelemetry spans (driver/sinks/otel.ts, as `tcab-driver` does) to this OTLP/HTTP endpoint. */
  otlpEndpoint?: string;
  /** Every other line a tool result (one execute_tool span per pair), instead of agent messages only. */
  tools?: boolean;
  /** Build and export the spans on the driver's thread instead of the export worker (to compare the two). */
  otelInThread?: boolean;
}

export async function benchNatsLatency(count = 2000, options: NatsBenchOptions = {}) {
  const line = options.tools ? toolPair : text;
  const otelStats: OtelStats[] = [];
  // The sinks of one driver: NATS, plus the OpenTelemetry sink when export is on (each event goes to both, in turn).
  const sinksFor = (natsSink: NatsSink, runId: string): EventSink[] => [
    natsSink,
    ...(options.otlpEndpoint ? [new OtelSink({ runId, harness: 'claude', model: 'bench', env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${options.otlpEndpoint}/v1/traces` }, ...(options.otelInThread ? { exporter: new OTLPTraceExporter({ url: `${options.otlpEndpoint}/v1/traces`, timeoutMillis: 2000 }) } : {}), report: (s) => otelStats.push(s) })] : []),
  ];
  const server = await NatsServer.start();
  const nc = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: STREAM_NAME, subjects: ['tcab.run.>'], storage: StorageType.File });
    await jsm.streams.add({ name: 'RAW_BENCH', subjects: ['raw.bench'], storage: StorageType.File });
    const js = jetstream(nc);

    // Both paths get one message per tick (~1 ms apart): far faster than a harness prints, and the same arrival
    // process for both, so the difference is the driver's own cost.
    const tick = () => new Promise((r) => setTimeout(r, 1));

    // Raw: JetStream publish -> subscriber receipt.
    const raw: number[] = [];
    {
      const sent = new Map<string, number>();
      const sub = nc.subscribe('raw.bench');
      const done = (async () => {
        for await (const m of sub) {
          raw.push(performance.now() - sent.get(m.string())!);
          if (raw.length === count) break;
        }
      })();
      for (let i = 0; i < count; i++) {
        const id = String(i);
        sent.set(id, performance.now());
        void js.publish('raw.bench', id).catch(() => undefined);
        await tick();
      }
      await done;
    }

    // Driver pipeline: harness stdout line in -> event out of a subscriber on the run's subjects.
    const adapter = await loadAdapter('claude');
    const runId = 'bench-run';
    const sink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 300_000 });
    const sinks = sinksFor(sink, runId);
    await Promise.all(sinks.map((s) => (s instanceof OtelSink ? s.ready : undefined)));
    const scrubber = new SecretScrubber();
    scrubber.add('sk-ant-fake-bench-secret-000000');
    const session = new TranslationSession(adapter);
    const splitter = new LineSplitter();
    const seenAt: number[] = [];
    const sentAt: number[] = [];
    const sub = nc.subscribe(`tcab.run.${runId}.>`);
    const received = (async () => {
      for await (const m of sub) {
        const seq = Number(m.headers?.get('Tcab-Seq'));
        seenAt[seq] = performance.now();
        if (seenAt.filter(Boolean).length === count) break;
      }
    })();
    let seq = 0;
    for (let i = 0; i < count; i++) {
      sentAt[i + 1] = performance.now();
      for (const l of splitter.push(`${line(i)}\n`)) {
        for (const event of session.stdout(l)) {
          const record = { runId, seq: ++seq, event: scrubber.value(event) };
          for (const s of sinks) s.event(record);
        }
      }
      await tick();
    }
    await received;
    await Promise.all(sinks.map((s) => s.close()));
    const driver = sentAt.slice(1).map((t, i) => seenAt[i + 1]! - t);

    // Throughput: a burst of lines through one driver pipeline until the last is acknowledged.
    const burstSink = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 300_000 });
    const burstSinks = sinksFor(burstSink, 'bench-burst');
    // A driver makes its sinks before it installs the harness: the export worker is up before the first line.
    await Promise.all(burstSinks.map((s) => (s instanceof OtelSink ? s.ready : undefined)));
    const burstSession = new TranslationSession(adapter);
    const burstSplitter = new LineSplitter();
    const burst = 20_000;
    const start = performance.now();
    // CPU time of this process (translation, sink, client) per event: steadier than wall time on a busy machine.
    const cpuBefore = process.cpuUsage();
    // And of the driver's own thread alone (the live path), without the export worker's.
    const threadBefore = process.threadCpuUsage();
    let burstSeq = 0;
    for (let i = 0; i < burst; i++) {
      for (const l of burstSplitter.push(`${line(i)}\n`)) {
        for (const event of burstSession.stdout(l)) {
          const record = { runId: 'bench-burst', seq: ++burstSeq, event };
          for (const s of burstSinks) s.event(record);
        }
      }
    }
    // The live path ends when NATS has every event; the export's last flush (in parallel) is reported on its own.
    let natsDoneAt = 0;
    await Promise.all(burstSinks.map((s) => s.close().then(() => (s === burstSink ? (natsDoneAt = performance.now()) : undefined))));
    const seconds = (natsDoneAt - start) / 1000;
    const closeWaitMs = performance.now() - natsDoneAt;
    const cpu = process.cpuUsage(cpuBefore);
    const thread = process.threadCpuUsage(threadBefore);

    // The sink alone (events already translated): its own CPU per event (envelope, serialization, publish, acks).
    const events = Array.from({ length: burst }, (_, i) => ({ type: 'agent' as const, timestamp: new Date(Date.UTC(2026, 11, 4, 0, 0, 0, i)).toISOString(), message: `message ${i} ${'x'.repeat(200)}` }));
    const sinkOnly = new NatsSink({ settings: natsSettings(server.url), deliverBy: Date.now() + 300_000 });
    const sinkStart = performance.now();
    const sinkCpuBefore = process.cpuUsage();
    events.forEach((event, i) => sinkOnly.event({ runId: 'bench-sink', seq: i + 1, event }));
    await sinkOnly.close();
    const sinkCpu = process.cpuUsage(sinkCpuBefore);
    const sinkSeconds = (performance.now() - sinkStart) / 1000;

    const rawP = percentiles(raw);
    const driverP = percentiles(driver);
    return {
      raw_publish_to_receive: rawP,
      driver_line_to_subscriber: driverP,
      target: 'driver p99 <= 2 x raw p99 + 5 ms',
      target_p99_ms: +(2 * rawP.p99_ms + 5).toFixed(3),
      meets_target: driverP.p99_ms <= 2 * rawP.p99_ms + 5,
      events_per_s_one_driver: Math.round(burst / seconds),
      driver_cpu_us_per_event: +((cpu.user + cpu.system) / burst).toFixed(2),
      driver_thread_cpu_us_per_event: +((thread.user + thread.system) / burst).toFixed(2),
      burst_events: burst,
      sink_only_events_per_s: Math.round(burst / sinkSeconds),
      sink_only_cpu_us_per_event: +((sinkCpu.user + sinkCpu.system) / burst).toFixed(2),
      ...(options.otlpEndpoint ? { otel_export: otelStats, otel_close_after_nats_ms: Math.round(closeWaitMs) } : {}),
    };
  } finally {
    await nc.close();
    await server.dispose();
  }
}
