// What OpenTelemetry export costs the live path (issue 24): the NATS bench (nats-latency.ts) on a workload with a
// tool call on every other line, without export, exporting to a real Jaeger (test/support/jaeger.ts), and exporting
// to a collector that refuses connections. CPU per event is given for the whole process and for the driver's own
// thread (the export worker's share is the difference). Target: export keeps at least 90% of events/s through one driver and
// adds at most 1 ms to the p99 line -> NATS subscriber latency.
import { Jaeger } from '../test/support/jaeger.ts';
import { freePort } from '../test/support/nats-server.ts';
import { benchNatsLatency } from './nats-latency.ts';

function cost(off: Pick<NatsFigures, 'events_per_s_one_driver' | 'driver_line_to_subscriber' | 'driver_cpu_us_per_event' | 'driver_thread_cpu_us_per_event'>, on: typeof off) {
  const ratio = +(on.events_per_s_one_driver / off.events_per_s_one_driver).toFixed(3);
  const addedP99 = +(on.driver_line_to_subscriber.p99_ms - off.driver_line_to_subscriber.p99_ms).toFixed(3);
  const cpu = +(on.driver_cpu_us_per_event - off.driver_cpu_us_per_event).toFixed(2);
  const thread = +(on.driver_thread_cpu_us_per_event - off.driver_thread_cpu_us_per_event).toFixed(2);
  return { events_per_s_ratio: ratio, p99_added_ms: addedP99, cpu_us_per_event_added: cpu, driver_thread_cpu_us_per_event_added: thread, meets_target: ratio >= 0.9 && addedP99 <= 1 };
}

type NatsFigures = Awaited<ReturnType<typeof benchNatsLatency>>;

/** The median round of a variant by events/s, with the medians of its p99 and CPU per event. */
function median(rounds: NatsFigures[]) {
  const mid = <T>(xs: T[], by: (x: T) => number) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;
  const byRate = mid(rounds, (r) => r.events_per_s_one_driver);
  return {
    ...byRate,
    driver_cpu_us_per_event: mid(rounds, (r) => r.driver_cpu_us_per_event).driver_cpu_us_per_event,
    driver_thread_cpu_us_per_event: mid(rounds, (r) => r.driver_thread_cpu_us_per_event).driver_thread_cpu_us_per_event,
    driver_line_to_subscriber: mid(rounds, (r) => r.driver_line_to_subscriber.p99_ms).driver_line_to_subscriber,
    rounds: rounds.map((r) => ({ events_per_s: r.events_per_s_one_driver, p99_ms: r.driver_line_to_subscriber.p99_ms, cpu_us_per_event: r.driver_cpu_us_per_event, thread_cpu_us_per_event: r.driver_thread_cpu_us_per_event })),
  };
}

export async function benchOtelExport(log: (msg: string) => void, rounds = Number(process.env.TCAB_BENCH_OTEL_ROUNDS || 3)) {
  const jaeger = await Jaeger.start({ background: true });
  try {
    // Interleaved rounds (off, Jaeger, dead collector, off, ...): a shared machine's load hits all three alike.
    const off: NatsFigures[] = [];
    const on: NatsFigures[] = [];
    const dead: NatsFigures[] = [];
    for (let round = 1; round <= rounds; round++) {
      log(`nats with tool calls, round ${round}/${rounds}: export off, to Jaeger, to a collector refusing connections`);
      off.push(await benchNatsLatency(2000, { tools: true }));
      on.push(await benchNatsLatency(2000, { tools: true, otlpEndpoint: jaeger.otlpEndpoint }));
      dead.push(await benchNatsLatency(2000, { tools: true, otlpEndpoint: `http://127.0.0.1:${await freePort()}` }));
    }
    const [mOff, mOn, mDead] = [median(off), median(on), median(dead)];
    const pick = (r: ReturnType<typeof median>) => ({ events_per_s_one_driver: r.events_per_s_one_driver, driver_cpu_us_per_event: r.driver_cpu_us_per_event, driver_thread_cpu_us_per_event: r.driver_thread_cpu_us_per_event, driver_line_to_subscriber: r.driver_line_to_subscriber, rounds: r.rounds, ...('otel_export' in r ? { otel_export: r.otel_export, otel_close_after_nats_ms: r.otel_close_after_nats_ms } : {}) });
    return {
      target: 'export on: events/s >= 0.9 x off, p99 line -> NATS <= off + 1 ms (medians of interleaved rounds)',
      off: pick(mOff),
      jaeger: { ...pick(mOn), ...cost(mOff, mOn) },
      dead_collector: { ...pick(mDead), ...cost(mOff, mDead) },
    };
  } finally {
    await jaeger.stop();
  }
}
