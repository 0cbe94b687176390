// Which events the export turns into trace data, decided on the driver's thread before anything is handed to the
// export worker. A harness makes a few tool calls and messages a second; a burst of thousands (replayed output, a
// runaway loop) would overflow the SDK's bounded queue and a session span's event limit anyway, and handing them to
// the worker only for it to drop them cost the live path (measured: 20,000 events in a burst, 0.80 x of the events/s
// without export). So tool spans and message events each have a token bucket, then a steady rate
// (TCAB_OTEL_TOOL_SPANS_PER_SECOND, TCAB_OTEL_MESSAGES_PER_SECOND, default 500 each: far above any harness). Tool
// spans get a burst of one export batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512): a burst never fills the SDK's queue
// (OTEL_BSP_MAX_QUEUE_SIZE, 2048), so the run's, sessions' and stages' spans that end after it always find room.
// Messages get as many as a span keeps (OTEL_SPAN_EVENT_COUNT_LIMIT, 1024). What
// is over budget is "left out": the worker only learns that the run and its session were alive then and how many
// were left out (the trace's tree stays whole; the session span says what it is missing, the summary counts it).
// Stages, sessions, subagents, warnings and errors are never left out. Raw output (`unknown`) never makes trace
// data, so it is always only a sign of life.
import type { HarnessEvent } from '../../shared/events.ts';
import { TOOL_EVENT_TYPES } from '../../export/otel/fold.ts';

/** The environment the OTEL_* variables are read from. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A token bucket: a burst of up to `capacity` at once, then `perSecond`. */
export class TokenBucket {
  private readonly capacity: number;
  private readonly perMs: number;
  private tokens: number;
  private last: number;

  constructor(options: { capacity: number; perSecond: number; now: number }) {
    this.capacity = Math.max(1, options.capacity);
    this.perMs = Math.max(0, options.perSecond) / 1000;
    this.tokens = this.capacity;
    this.last = options.now;
  }

  /** Whether one more fits at `now` (ms, monotonic); takes its token when it does. */
  take(now: number): boolean {
    if (now > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.perMs);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** What becomes of one event: trace data, or left out (a tool span, a message event) or never trace data (raw output). */
export type Admission = 'trace' | 'tool-left-out' | 'message-left-out' | 'raw';

/** A non-negative number from a variable, else the default. */
export function numberOr(value: string | undefined, fallback: number): number {
  const n = value === undefined || value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** How many spans the SDK queues and exports at once, and how many events a span keeps: the OTEL_* value, else tcab's default. */
export const queueSize = (env: Env) => numberOr(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048);
export const exportBatchSize = (env: Env) => Math.min(numberOr(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512), queueSize(env));
export const eventCountLimit = (env: Env) => numberOr(env.OTEL_SPAN_EVENT_COUNT_LIMIT, 1024);

export class ExportAdmission {
  private readonly tools: TokenBucket;
  private readonly messages: TokenBucket;

  constructor(env: Env, now: number) {
    this.tools = new TokenBucket({ capacity: exportBatchSize(env), perSecond: numberOr(env.TCAB_OTEL_TOOL_SPANS_PER_SECOND, 500), now });
    this.messages = new TokenBucket({ capacity: eventCountLimit(env), perSecond: numberOr(env.TCAB_OTEL_MESSAGES_PER_SECOND, 500), now });
  }

  /** The event's fate at `now` (ms, monotonic); takes a token when it is trace data. */
  admit(type: HarnessEvent['type'], now: number): Admission {
    if (type === 'agent' || type === 'reasoning') return this.messages.take(now) ? 'trace' : 'message-left-out';
    if (TOOL_EVENT_TYPES.has(type)) return this.tools.take(now) ? 'trace' : 'tool-left-out';
    return type === 'unknown' ? 'raw' : 'trace';
  }
}
