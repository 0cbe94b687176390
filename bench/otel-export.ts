// What OpenTelemetry export costs the live path (issue 24): the NATS bench (nats-latency.ts) on a workload with a
// tool call on every other line, without export, exporting to a real Jaeger (test/support/jaeger.ts), and exporting
// to a collector that refuses connections. Target: export keeps at least 90% of events/s through one driver and
// adds at most 1 ms to the p99 line -> NATS subscriber latency.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Jaeger } from '../test/support/jaeger.ts';
import { benchNatsLatency } from './nats-latency.ts';

/** A loopback port nothing listens on: the exporter's connections are refused. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

function cost(off: Awaited<ReturnType<typeof benchNatsLatency>>, on: Awaited<ReturnType<typeof benchNatsLatency>>) {
  const ratio = +(on.events_per_s_one_driver / off.events_per_s_one_driver).toFixed(3);
  const addedP99 = +(on.driver_line_to_subscriber.p99_ms - off.driver_line_to_subscriber.p99_ms).toFixed(3);
  const cpu = +(on.driver_cpu_us_per_event - off.driver_cpu_us_per_event).toFixed(2);
  return { events_per_s_ratio: ratio, p99_added_ms: addedP99, cpu_us_per_event_added: cpu, meets_target: ratio >= 0.9 && addedP99 <= 1 };
}

export async function benchOtelExport(log: (msg: string) => void) {
  const jaeger = await Jaeger.start();
  try {
    log('nats with tool calls, export off');
    const off = await benchNatsLatency(2000, { tools: true });
    log('nats with tool calls, exporting to Jaeger');
    const jaegerOn = await benchNatsLatency(2000, { tools: true, otlpEndpoint: jaeger.otlpEndpoint });
    log('nats with tool calls, exporting to a collector that refuses connections');
    const deadOn = await benchNatsLatency(2000, { tools: true, otlpEndpoint: `http://127.0.0.1:${await deadPort()}` });
    const pick = (r: typeof off) => ({ events_per_s_one_driver: r.events_per_s_one_driver, driver_cpu_us_per_event: r.driver_cpu_us_per_event, driver_line_to_subscriber: r.driver_line_to_subscriber, ...('otel_export' in r ? { otel_export: r.otel_export, otel_close_after_nats_ms: r.otel_close_after_nats_ms } : {}) });
    return {
      target: 'export on: events/s >= 0.9 x off, p99 line -> NATS <= off + 1 ms',
      off: pick(off),
      jaeger: { ...pick(jaegerOn), ...cost(off, jaegerOn) },
      dead_collector: { ...pick(deadOn), ...cost(off, deadOn) },
    };
  } finally {
    await jaeger.stop();
  }
}
