import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { HarnessEvent } from '../../shared/events.ts';
import { RunAttemptNumber } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import { parseDriverEnvFields } from '../../shared/driver-env.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { freePort } from '../../test/support/nats-server.ts';
import { OtelSink, otelExportEnabled, otelSecrets } from './otel.ts';
import type { OtelStats } from './otel.ts';

const T0 = Date.UTC(2026, 11, 5, 4);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const identity = { runId: 'run-otel', harness: 'claude', model: 'claude-sonnet-4-5' };
const events: HarnessEvent[] = [
  { type: 'system', timestamp: at(0), stage: 'probe_harness', status: 'started', message: 'probing' },
  { type: 'system', timestamp: at(1), stage: 'probe_harness', status: 'completed', message: '2.1.332' },
  { type: 'agent', timestamp: at(2), session_id: 's-1', message: 'hello' },
  { type: 'command', timestamp: at(3), session_id: 's-1', command: 'exit 3', exit_code: 3, is_success: false, tool_name: 'Bash' },
];
const result: RunResult = {
  run_id: 'run-otel', harness_slug: 'claude', harness_version: '2.1.332', model: 'claude-sonnet-4-5', canonical_model: null, outcome: 'succeeded', message: 'ok', auth_mode: 'api-key',
  sessions: [{ index: 0, session_id: 's-1', exit_code: 0, signal: null, tokens: { input: 5, output: 7, cache_read: 0, cache_write: null, reasoning: null }, reported_cost_usd: 0.01, is_error: null, duration_ms: 3000, counts: {} }],
  session_ids: ['s-1'], exit_code: 0, stages: [], tokens: { input: 5, output: 7, cache_read: 0, cache_write: null, reasoning: null }, raw_usage: null, reported_cost_usd: 0.01, actual_cost_usd: 0.01, comparable_cost_usd: 0.02, catalog_version: null, cost_warnings: [],
  started_at: at(0), finished_at: at(5), event_count: 4,
};

/** The SDK's in-memory exporter, except that its spans outlive shutdown (the SDK's forgets them then). */
class KeepingExporter extends InMemorySpanExporter {
  private kept: ReadableSpan[] = [];
  override getFinishedSpans(): ReadableSpan[] {
    return this.kept;
  }
  override export(spans: ReadableSpan[], done: Parameters<InMemorySpanExporter['export']>[1]): void {
    this.kept.push(...spans);
    super.export(spans, done);
  }
}

function feed(sink: OtelSink, withResult = true) {
  events.forEach((event, i) => sink.event({ runId: identity.runId, seq: i + 1, event }));
  if (withResult) sink.result(result);
}

describe('OtelSink', () => {
  it('replays the fold on SDK spans: one trace, parents, times, status, attributes and events', async () => {
    const memory = new KeepingExporter();
    let report: OtelStats | undefined;
    const sink = new OtelSink({ ...identity, env: {}, exporter: memory, report: (s) => (report = s) });
    feed(sink);
    await sink.close();
    const spans = memory.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual(['execute_tool Bash', 'invoke_agent claude', 'invoke_workflow tcab.run', 'tcab.stage probe_harness']);
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    const root = byName['invoke_workflow tcab.run']!;
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(root.parentSpanContext).toBeUndefined();
    expect(byName['invoke_agent claude']!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(byName['execute_tool Bash']!.parentSpanContext?.spanId).toBe(byName['invoke_agent claude']!.spanContext().spanId);
    expect(byName['execute_tool Bash']!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'command failed' });
    expect(root.startTime).toEqual([T0 / 1000, 0]);
    expect(root.endTime).toEqual([T0 / 1000 + 5, 0]);
    expect(root.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 7, 'tcab.cost.comparable_usd': 0.02, 'tcab.outcome': 'succeeded' });
    expect(byName['invoke_agent claude']!.events.map((e) => [e.name, e.attributes])).toEqual([['tcab.agent', { 'tcab.message': 'hello' }]]);
    expect(root.resource.attributes['service.name']).toBe('tcab');
    expect(report).toEqual({ ended: 4, exported: 4, dropped: 0, messagesLeftOut: 0 });
  });

  it('ends every span as failed when the run stops without a result', async () => {
    const memory = new KeepingExporter();
    const sink = new OtelSink({ ...identity, env: {}, exporter: memory });
    feed(sink, false);
    await sink.close();
    const root = memory.getFinishedSpans().find((s) => s.name === 'invoke_workflow tcab.run')!;
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the driver stopped before the run had a result' });
    expect(memory.getFinishedSpans()).toHaveLength(4);
  });

  it('leaves tool spans and messages over their budgets out before the SDK sees them, counts them, and keeps the tree whole', async () => {
    const memory = new KeepingExporter();
    let report: OtelStats | undefined;
    // Room for 3 tool spans and 2 messages, no refill. A burst of 6 tool calls and 3 messages: 3 tool spans and
    // 1 message left out; a left-out message with a new session id still opens that session's span.
    const sink = new OtelSink({ ...identity, env: { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3', TCAB_OTEL_TOOL_SPANS_PER_SECOND: '0', OTEL_SPAN_EVENT_COUNT_LIMIT: '2', TCAB_OTEL_MESSAGES_PER_SECOND: '0' }, exporter: memory, report: (s) => (report = s) });
    const tools: HarnessEvent[] = [0, 1, 2, 3, 4, 5].map((i) => ({ type: 'command', timestamp: at(3 + i / 10), session_id: 's-1', command: `echo ${i}`, exit_code: 0, is_success: true }));
    const later: HarnessEvent[] = [
      { type: 'reasoning', timestamp: at(3.6), session_id: 's-1', message: 'kept' },
      { type: 'agent', timestamp: at(4), session_id: 's-2', message: 'left out, in a new session' },
      { type: 'warning', timestamp: at(4.2), session_id: 's-2', message: 'warnings are never left out' },
    ];
    [...events.slice(0, 3), ...tools, ...later].forEach((event, i) => sink.event({ runId: identity.runId, seq: i + 1, event }));
    sink.result({ ...result, sessions: [] });
    await sink.close();
    const spans = memory.getFinishedSpans();
    const names = spans.map((s) => s.name);
    expect(spans.filter((s) => s.name.startsWith('execute_tool')).map((s) => s.attributes['tcab.command'])).toEqual(['echo 0', 'echo 1', 'echo 2']);
    expect(names.filter((n) => !n.startsWith('execute_tool')).sort()).toEqual(['invoke_agent claude', 'invoke_agent claude', 'invoke_workflow tcab.run', 'tcab.stage probe_harness']);
    const [first, second] = spans.filter((s) => s.name === 'invoke_agent claude').sort((a, b) => Number(a.attributes['tcab.session.index']) - Number(b.attributes['tcab.session.index']));
    expect(first!.events.map((e) => e.attributes?.['tcab.message'])).toEqual(['hello', 'kept']);
    expect(first!.attributes).toMatchObject({ 'gen_ai.conversation.id': 's-1', 'tcab.trace.tool_spans_left_out': 3 });
    expect(first!.attributes['tcab.trace.messages_left_out']).toBeUndefined();
    // The second session began at its left-out message and lasted to its warning.
    expect(second!.attributes).toMatchObject({ 'gen_ai.conversation.id': 's-2', 'tcab.trace.messages_left_out': 1 });
    expect(second!.startTime).toEqual([T0 / 1000 + 4, 0]);
    expect(second!.endTime).toEqual([T0 / 1000 + 4, 200_000_000]);
    expect(second!.events.map((e) => e.name)).toEqual(['tcab.warning']);
    expect(report).toEqual({ ended: 7, exported: 7, dropped: 3, messagesLeftOut: 1 });
  });

  it('counts every span as dropped when the collector refuses connections, and closes without waiting out its limit', async () => {
    const port = await freePort(); // nothing listens on it: a collector refusing connections
    let report: OtelStats | undefined;
    // Nothing but giving up on a collector seen down ends this close before the test's own timeout.
    const sink = new OtelSink({ ...identity, env: {}, exporter: new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces`, timeoutMillis: 2000 }), closeTimeoutMs: 3_600_000, report: (s) => (report = s) });
    feed(sink);
    await sink.close();
    expect(report).toMatchObject({ ended: 4, exported: 0, dropped: 4 });
  });

  it('does not wait for a collector that never answers past its close timeout', async () => {
    const requests: string[] = [];
    const silent = createServer((req) => requests.push(req.url ?? '')); // takes the request, never responds
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      let report: OtelStats | undefined;
      const sink = new OtelSink({ ...identity, env: {}, exporter: new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces`, timeoutMillis: 60_000 }), closeTimeoutMs: 300, report: (s) => (report = s) });
      feed(sink);
      await sink.close();
      expect(requests).toEqual(['/v1/traces']);
      expect(report).toMatchObject({ ended: 4, exported: 0, dropped: 4 });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('OtelSink in its worker thread (how tcab-driver and tcab run export)', () => {
  it('exports through the OTLP exporter the OTEL_* variables configure, and counts refused spans as dropped', async () => {
    const port = await freePort(); // nothing listens on it: a collector refusing connections
    let report: OtelStats | undefined;
    const sink = new OtelSink({ ...identity, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces` }, closeTimeoutMs: 3_600_000, report: (s) => (report = s) });
    feed(sink);
    await sink.close();
    expect(report).toMatchObject({ ended: 4, exported: 0, dropped: 4 });
  });

  it('hands the worker only what fits the budgets; left-out events still open their session and are counted', async () => {
    const port = await freePort(); // nothing listens on it: a collector refusing connections
    let report: OtelStats | undefined;
    const sink = new OtelSink({ ...identity, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3', TCAB_OTEL_TOOL_SPANS_PER_SECOND: '0', OTEL_SPAN_EVENT_COUNT_LIMIT: '2', TCAB_OTEL_MESSAGES_PER_SECOND: '0' }, closeTimeoutMs: 3_600_000, report: (s) => (report = s) });
    const burst: HarnessEvent[] = [
      ...events.slice(0, 2),
      ...Array.from({ length: 10 }, (_, i): HarnessEvent => ({ type: 'command', timestamp: at(3 + i / 100), session_id: 's-1', command: `echo ${i}`, exit_code: 0, is_success: true })),
      ...['s-1', 's-1', 's-2', 's-2'].map((session_id, i): HarnessEvent => ({ type: 'agent', timestamp: at(4 + i), session_id, message: `m${i}` })),
    ];
    burst.forEach((event, i) => sink.event({ runId: identity.runId, seq: i + 1, event }));
    sink.result(result);
    await sink.close();
    // Spans ended: the stage, 3 tool calls, sessions s-1 and s-2 (opened by a left-out message), the run. None reached
    // the refused collector; the 7 tool spans over the budget were never built and count as dropped too.
    expect(report).toMatchObject({ ended: 7, exported: 0, dropped: 14, messagesLeftOut: 2 });
  });

  it('sends the batches to the collector the variables name (the warm-up\'s spans never), and ends the worker when it does not answer', async () => {
    const bodies: Buffer[] = [];
    const silent = createServer((req) => req.on('data', (chunk: Buffer) => bodies.push(chunk)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      let report: OtelStats | undefined;
      const sink = new OtelSink({ ...identity, env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '600000' }, closeTimeoutMs: 300, report: (s) => (report = s) });
      feed(sink);
      await sink.close();
      const sent = Buffer.concat(bodies);
      // Protobuf carries strings as they are: the run's id is in the request, the worker's warm-up run is not.
      expect(sent.includes('run-otel')).toBe(true);
      expect(sent.includes('warm-up')).toBe(false);
      expect(report).toMatchObject({ ended: 4, exported: 0, dropped: 4 });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

/** The spans one sink exported for the run above, with its result. */
async function spansOf(options: Partial<ConstructorParameters<typeof OtelSink>[0]>): Promise<{ spans: ReadableSpan[]; report: OtelStats | undefined }> {
  const memory = new KeepingExporter();
  let report: OtelStats | undefined;
  const sink = new OtelSink({ ...identity, env: {}, exporter: memory, report: (s) => (report = s), ...options });
  feed(sink);
  await sink.close();
  return { spans: memory.getFinishedSpans(), report };
}

/** The protobuf bytes of an int attribute (KeyValue{key, AnyValue{int_value}}), as the OTLP exporter writes it. */
const intAttribute = (key: string, value: number) => Buffer.concat([Buffer.from([0x0a, key.length]), Buffer.from(key), Buffer.from([0x12, 0x02, 0x18, value])]);

describe('OtelSink: which attempt of a Run (issue 35)', () => {
  it('puts the attempt on every span, beside the run id', async () => {
    const { spans, report } = await spansOf({ attempt: { number: 2, of: 3 } });
    expect(spans).toHaveLength(4);
    for (const span of spans) expect(span.attributes).toMatchObject({ 'tcab.run.attempt': 2, 'tcab.run.attempts': 3 });
    expect(spans.find((s) => s.name === 'invoke_workflow tcab.run')!.attributes).toMatchObject({ 'tcab.run.id': 'run-otel', 'tcab.run.attempt': 2 });
    // The run's attributes are on the run span, not the resource: so is the attempt.
    expect(spans[0]!.resource.attributes['tcab.run.attempt']).toBeUndefined();
    expect(report).toEqual({ ended: 4, exported: 4, dropped: 0, messagesLeftOut: 0 });
  });

  it('makes each attempt of one Run its own trace: same run id, distinct trace ids', async () => {
    const first = await spansOf({ attempt: { number: 1, of: 2 } });
    const second = await spansOf({ attempt: { number: 2, of: 2 } });
    const traces = (spans: ReadableSpan[]) => new Set(spans.map((s) => s.spanContext().traceId));
    expect(traces(first.spans).size).toBe(1);
    expect(traces(second.spans).size).toBe(1);
    expect([...traces(first.spans)][0]).not.toBe([...traces(second.spans)][0]);
    const root = (spans: ReadableSpan[]) => spans.find((s) => s.name === 'invoke_workflow tcab.run')!.attributes;
    expect([root(first.spans)['tcab.run.id'], root(first.spans)['tcab.run.attempt']]).toEqual(['run-otel', 1]);
    expect([root(second.spans)['tcab.run.id'], root(second.spans)['tcab.run.attempt']]).toEqual(['run-otel', 2]);
  });

  it('says nothing of an attempt it was not given (a workstation run)', async () => {
    const { spans } = await spansOf({});
    expect(spans).toHaveLength(4);
    for (const span of spans) {
      expect(span.attributes).not.toHaveProperty('tcab.run.attempt');
      expect(span.attributes).not.toHaveProperty('tcab.run.attempts');
    }
  });

  it('hands the attempt to its worker thread: the OTLP request carries it on the spans', async () => {
    const bodies: Buffer[] = [];
    const silent = createServer((req) => req.on('data', (chunk: Buffer) => bodies.push(chunk)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      const sink = new OtelSink({ ...identity, attempt: { number: 2, of: 3 }, env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '600000' }, closeTimeoutMs: 300 });
      feed(sink);
      await sink.close();
      const sent = Buffer.concat(bodies);
      expect(sent.includes(intAttribute('tcab.run.attempt', 2))).toBe(true);
      expect(sent.includes(intAttribute('tcab.run.attempts', 3))).toBe(true);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('never sees a malformed TCAB_RUN_ATTEMPT_NUMBER: the driver\'s parse refuses it (exit 2, naming it) before any sink exists', () => {
    for (const text of ['0', '-1', '1e3', 'abc', ' 2', '2 ', '+2', '0x2', '2.0', '١', '9999999999', '2\n']) {
      expect(() => parseDriverEnvFields({ TCAB_RUN_ATTEMPT_NUMBER: text }, ['TCAB_RUN_ATTEMPT_NUMBER']), JSON.stringify(text)).toThrow(InvalidInputError);
    }
    expect(() => parseDriverEnvFields({ TCAB_RUN_ATTEMPTS: '0' }, ['TCAB_RUN_ATTEMPTS'])).toThrow(/TCAB_RUN_ATTEMPTS/);
    // Empty is unset, as for every driver variable: no attempt, so no attribute.
    expect(parseDriverEnvFields({ TCAB_RUN_ATTEMPT_NUMBER: '' }, ['TCAB_RUN_ATTEMPT_NUMBER'])).toEqual({});
    expect(parseDriverEnvFields({ TCAB_RUN_ATTEMPT_NUMBER: '2', TCAB_RUN_ATTEMPTS: '3' }, ['TCAB_RUN_ATTEMPT_NUMBER', 'TCAB_RUN_ATTEMPTS'])).toEqual({ TCAB_RUN_ATTEMPT_NUMBER: 2, TCAB_RUN_ATTEMPTS: 3 });
  });

  it('leaves out an attempt no result could carry, and still exports the run', async () => {
    const hostile = [
      { number: 0, of: 1 }, { number: -1, of: 3 }, { number: 1000, of: 1000 }, { number: Number.NaN, of: 1 }, { number: Infinity, of: Infinity },
      { number: 1.5, of: 3 }, { number: 3, of: 2 }, { number: 2 }, { number: '2', of: '3' }, null, 'attempt-2', 2, [],
      new Proxy({}, { get: () => { throw new Error('hostile getter'); } }),
    ];
    for (const [i, attempt] of hostile.entries()) {
      const { spans, report } = await spansOf({ attempt: attempt as RunAttemptNumber });
      expect(spans, `hostile[${i}]`).toHaveLength(4);
      for (const span of spans) expect(span.attributes).not.toHaveProperty('tcab.run.attempt');
      expect(report).toEqual({ ended: 4, exported: 4, dropped: 0, messagesLeftOut: 0 });
    }
  });

  test.prop([fc.oneof(fc.record({ number: fc.oneof(fc.integer(), fc.double()), of: fc.oneof(fc.integer(), fc.double()) }), fc.record({ number: fc.integer({ min: 1, max: 11 }), of: fc.integer({ min: 1, max: 11 }) }), fc.anything())], { numRuns: 60 })(
    'any attempt value: the run is exported whole, with the attempt exactly when it is a valid one',
    async (attempt) => {
      const { spans, report } = await spansOf({ attempt: attempt as RunAttemptNumber });
      expect(report).toEqual({ ended: 4, exported: 4, dropped: 0, messagesLeftOut: 0 });
      const valid = RunAttemptNumber.safeParse(attempt);
      for (const span of spans) {
        if (valid.success) expect(span.attributes).toMatchObject({ 'tcab.run.attempt': valid.data.number, 'tcab.run.attempts': valid.data.of });
        else expect(span.attributes).not.toHaveProperty('tcab.run.attempt');
      }
    },
  );
});

describe('OpenTelemetry settings', () => {
  it('exports when an OTLP endpoint or TCAB_OTEL is set, unless switched off', () => {
    expect(otelExportEnabled({})).toBe(false);
    expect(otelExportEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(otelExportEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(otelExportEnabled({ TCAB_OTEL: '1' })).toBe(true);
    expect(otelExportEnabled({ TCAB_OTEL: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
    expect(otelExportEnabled({ OTEL_SDK_DISABLED: 'true', TCAB_OTEL: '1' })).toBe(false);
    expect(otelExportEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
  });

  it('hands the header values (tokens) to the scrubber', () => {
    expect(otelSecrets({ OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20fake-otel-token-123,x-tenant=acme', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=fake-key-456' })).toEqual(['Bearer fake-otel-token-123', 'acme', 'fake-key-456']);
  });
});
