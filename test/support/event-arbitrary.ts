// fast-check arbitraries of the normalized event contract (shared/events.ts) and of run results: any value the
// contract allows, in any order, for properties of code that consumes events (export/atif).
import fc from 'fast-check';
import { ORCHESTRATION_ACTIONS, SYSTEM_STAGES, SYSTEM_STATUSES } from '../../shared/events.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { OUTCOMES } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import type { TokenUsage } from '../../shared/usage.ts';

/** Strings a harness may print: any text, including the empty one and lone surrogates. */
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', 'tcab-event-1', '\u0000', '{"a":1}'));
const timestamp = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
/** A few ids, so sessions and subagents repeat the way they do in a real stream. */
const id = fc.constantFrom('s-1', 's-2', 'a', 'b', 'x'.repeat(40));
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const line = fc.nat({ max: 100_000 });

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

const base = { timestamp, session_id: opt(id) };
const toolName = opt(fc.string({ minLength: 1 }));

export const eventArb: fc.Arbitrary<HarnessEvent> = fc
  .oneof(
    fc.record({ type: fc.constant('agent' as const), ...base, message: text }),
    fc.record({ type: fc.constant('reasoning' as const), ...base, message: text }),
    fc.record({ type: fc.constant('command' as const), ...base, command: text, working_directory: opt(text), exit_code: opt(fc.integer()), is_success: opt(fc.boolean()), tool_name: toolName }),
    fc.record({ type: fc.constantFrom('read' as const, 'write' as const), ...base, path: text, start_line: opt(line), end_line: opt(line), is_success: opt(fc.boolean()), tool_name: toolName }),
    fc.record({ type: fc.constant('skill' as const), ...base, path: text, start_line: opt(line), end_line: opt(line), is_success: opt(fc.boolean()), tool_name: toolName, skill_name: opt(text) }),
    fc.record({ type: fc.constant('search' as const), ...base, query: text, path: opt(text), is_success: opt(fc.boolean()), tool_name: toolName }),
    fc.record({ type: fc.constant('list' as const), ...base, path: opt(text), is_success: opt(fc.boolean()), tool_name: toolName }),
    fc.record({ type: fc.constant('orchestration' as const), ...base, action: fc.constantFrom(...ORCHESTRATION_ACTIONS), subagent_id: opt(id), subagent_name: opt(text), is_success: opt(fc.boolean()) }),
    fc.record({ type: fc.constantFrom('error' as const, 'warning' as const), ...base, message: text, code: opt(text) }),
    fc.record({ type: fc.constant('system' as const), timestamp, stage: fc.constantFrom(...SYSTEM_STAGES), status: fc.constantFrom(...SYSTEM_STATUSES), message: text }),
    fc.record({ type: fc.constant('unknown' as const), ...base, raw: fc.jsonValue(), original_bytes: opt(fc.nat()) }),
  )
  .map((event) => compact(event) as HarnessEvent);

const count = fc.option(fc.nat({ max: 10_000_000 }), { nil: null });
const tokensArb: fc.Arbitrary<TokenUsage> = fc.record({ input: count, output: count, cache_read: count, cache_write: count, reasoning: count });
const usd = fc.option(fc.double({ min: 0, max: 1000, noNaN: true }), { nil: null });

export const runResultArb: fc.Arbitrary<RunResult> = fc.record({
  run_id: fc.constant('run-prop'),
  harness_slug: fc.constantFrom('claude', 'codex', ''),
  harness_version: fc.option(text, { nil: null }),
  model: text,
  canonical_model: fc.option(text, { nil: null }),
  outcome: fc.constantFrom(...OUTCOMES),
  message: text,
  auth_mode: fc.constantFrom('api-key' as const, 'subscription' as const, null),
  sessions: fc.array(
    fc.record({ index: fc.nat(), session_id: fc.option(id, { nil: null }), exit_code: fc.option(fc.integer(), { nil: null }), signal: fc.option(text, { nil: null }), tokens: fc.option(tokensArb, { nil: null }), reported_cost_usd: usd, is_error: fc.option(fc.boolean(), { nil: null }), duration_ms: fc.nat(), counts: fc.dictionary(fc.string(), fc.nat()) }),
    { maxLength: 3 },
  ),
  session_ids: fc.array(id, { maxLength: 3 }),
  exit_code: fc.option(fc.integer(), { nil: null }),
  stages: fc.array(fc.record({ stage: text, status: fc.constantFrom('completed' as const, 'failed' as const), duration_ms: fc.nat() }), { maxLength: 3 }),
  tokens: fc.option(tokensArb, { nil: null }),
  raw_usage: fc.option(fc.jsonValue(), { nil: null }),
  reported_cost_usd: usd,
  actual_cost_usd: usd,
  comparable_cost_usd: usd,
  catalog_version: fc.option(text, { nil: null }),
  cost_warnings: fc.array(text, { maxLength: 2 }),
  started_at: timestamp,
  finished_at: timestamp,
  event_count: fc.nat(),
}) as fc.Arbitrary<RunResult>;

export const atifInputArb = fc.record({
  runId: opt(fc.string({ minLength: 1 })),
  events: fc.array(eventArb, { maxLength: 60 }),
  result: opt(runResultArb),
  spec: opt(fc.record({ harness: fc.string(), model: fc.string(), prompt: opt(text) })),
  usage: opt(fc.record({ tokens: fc.option(tokensArb, { nil: null }), cost_usd: usd, harness_version: fc.option(text, { nil: null }) })),
});
