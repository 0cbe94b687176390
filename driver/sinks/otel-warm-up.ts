// Warms the export worker up before the run's first event: the same code path (JSON text in, fold, SDK spans,
// protobuf encoding) on a synthetic run whose spans go nowhere. A fresh worker runs that code cold — interpreted at
// first, then compiled by V8 on background threads at normal priority — and did so exactly when a burst of harness
// output arrived, taking CPU from the translation and NATS publish it must never slow (measured in
// `npm run bench -- nats`). Done while the driver installs the harness instead, it costs nothing on the live path.
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { OtelSpanWriter } from './otel-spans.ts';

/** Encodes spans as the OTLP exporter would, then drops them: nothing leaves the process. */
class EncodeOnlyExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    ProtobufTraceSerializer.serializeRequest(spans);
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

function syntheticEvent(i: number, at: string): HarnessEvent {
  const session_id = `warm-up-${Math.floor(i / 500)}`;
  switch (i % 8) {
    case 0: return { type: 'agent', timestamp: at, session_id, message: `message ${i}` };
    case 1: return { type: 'reasoning', timestamp: at, session_id, message: `thought ${i}` };
    case 2: return { type: 'command', timestamp: at, session_id, command: `echo ${i}`, exit_code: i % 3, is_success: i % 3 === 0, tool_name: 'Bash' };
    case 3: return { type: 'read', timestamp: at, session_id, path: `/w/${i}`, start_line: 1, end_line: 9, tool_name: 'Read' };
    case 4: return { type: 'write', timestamp: at, session_id, path: `/w/${i}`, tool_name: 'Write' };
    case 5: return { type: 'search', timestamp: at, session_id, query: `q${i}`, path: '/w', tool_name: 'Grep' };
    case 6: return { type: 'orchestration', timestamp: at, session_id, action: i % 16 === 6 ? 'subagent_started' : 'subagent_completed', subagent_id: `a${i >> 4}`, subagent_name: 'helper' };
    default: return { type: 'warning', timestamp: at, session_id, message: `warning ${i}` };
  }
}

/** Runs `events` synthetic events (as JSON text, the way they arrive) and a result through a throwaway writer. */
export async function warmUp(events = 4000): Promise<void> {
  const start = Date.now();
  const writer = new OtelSpanWriter({ runId: 'warm-up', harness: 'warm-up', model: 'warm-up', startedAt: start, env: { OTEL_BSP_SCHEDULE_DELAY: '0' }, exporter: new EncodeOnlyExporter() });
  const at = new Date(start).toISOString();
  for (let i = 0; i < events; i++) {
    writer.event(i + 1, JSON.parse(JSON.stringify(syntheticEvent(i, at))) as HarnessEvent);
    if (i % 500 === 499) {
      writer.leftOut({ at: start, sessionId: `warm-up-${Math.floor(i / 500)}`, tools: 1, messages: 1 });
      // Let the batch processor export what is queued (and run messages that arrived meanwhile), as a run would.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  const result: RunResult = {
    run_id: 'warm-up', harness_slug: 'warm-up', harness_version: '0', model: 'warm-up', canonical_model: null, outcome: 'succeeded', message: 'warm-up', auth_mode: 'api-key',
    sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: { input: 1, output: 1, cache_read: 0, cache_write: null, reasoning: null }, raw_usage: null,
    reported_cost_usd: null, actual_cost_usd: 0, comparable_cost_usd: 0, catalog_version: null, cost_warnings: [], started_at: at, finished_at: at, event_count: events,
  };
  writer.result(result);
  await writer.close();
  // The OTLP exporter imports these on its first export; importing node:http from ESM also loads Node's fetch.
  await Promise.all([import('node:http'), import('node:https')]);
}
