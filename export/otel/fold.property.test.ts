// Any event sequence, in any order of sessions, stages and subagents, with clocks that may step back: the fold's
// operations are a valid SDK call sequence (replay refuses anything else), every span ends once the result is in,
// the tree has one root, each tool event is one execute_tool span, each message one span event, and every time
// on a span is one we observed.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { RunSpanFold } from './fold.ts';
import { replay } from './span-records.ts';

const T0 = Date.UTC(2026, 11, 5);
const sessionId = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined });
const text = fc.string({ maxLength: 20 });
const when = fc.integer({ min: 0, max: 600_000 });

const eventArb: fc.Arbitrary<HarnessEvent> = fc.tuple(when, sessionId).chain(([ms, session_id]) => {
  const timestamp = new Date(T0 + ms).toISOString();
  const base = { timestamp, ...(session_id ? { session_id } : {}) };
  return fc.oneof(
    text.map((message) => ({ type: 'agent' as const, ...base, message })),
    text.map((message) => ({ type: 'reasoning' as const, ...base, message })),
    text.map((message) => ({ type: 'warning' as const, ...base, message })),
    text.map((message) => ({ type: 'error' as const, ...base, message })),
    fc.record({ command: text, is_success: fc.option(fc.boolean(), { nil: undefined }) }).map((r) => ({ type: 'command' as const, ...base, command: r.command, ...(r.is_success === undefined ? {} : { is_success: r.is_success }) })),
    fc.constantFrom('read' as const, 'write' as const, 'skill' as const).map((type) => ({ type, ...base, path: '/w/f' })),
    text.map((query) => ({ type: 'search' as const, ...base, query })),
    fc.constant({ type: 'list' as const, ...base }),
    fc.record({ action: fc.constantFrom('subagent_started' as const, 'subagent_completed' as const, 'subagent_failed' as const), id: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }) }).map((r) => ({ type: 'orchestration' as const, ...base, action: r.action, ...(r.id ? { subagent_id: r.id } : {}) })),
    fc.record({ stage: fc.constantFrom('install_harness' as const, 'probe_harness' as const, 'teardown' as const), status: fc.constantFrom('started' as const, 'completed' as const, 'failed' as const) }).map((r) => ({ type: 'system' as const, timestamp, stage: r.stage, status: r.status, message: 'm' })),
    fc.constant({ type: 'unknown' as const, ...base, raw: 'x' }),
  );
});

function resultAt(ms: number, sessionIds: string[]): RunResult {
  return {
    run_id: 'r', harness_slug: 'h', harness_version: null, model: 'm', canonical_model: null, outcome: 'succeeded', message: '', auth_mode: null,
    sessions: sessionIds.map((id, index) => ({ index, session_id: id, exit_code: 0, signal: null, tokens: { input: 1, output: 1, cache_read: null, cache_write: null, reasoning: null }, reported_cost_usd: null, is_error: null, duration_ms: 1, counts: {} })),
    session_ids: sessionIds, exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
    started_at: new Date(T0).toISOString(), finished_at: new Date(T0 + ms).toISOString(), event_count: 0,
  };
}

test.prop([fc.array(eventArb, { maxLength: 60 }), when, fc.subarray(['a', 'b', 'c']), when], { numRuns: 300 })('a valid, closed span tree from any event sequence', (events, endMs, ids, startMs) => {
  const fold = new RunSpanFold({ runId: 'r', harness: 'h', model: 'm', startedAt: T0 + startMs });
  const result = resultAt(endMs, ids);
  const ops = [...events.flatMap((e, i) => fold.event(i + 1, e)), ...fold.result(result)];
  const spans = [...replay(ops).values()];
  expect(spans.filter((s) => s.parent === null)).toHaveLength(1);
  expect(spans.every((s) => s.end !== undefined && s.end >= s.start)).toBe(true);
  const tools = events.filter((e) => ['command', 'read', 'write', 'search', 'list', 'skill'].includes(e.type));
  expect(spans.filter((s) => s.name.startsWith('execute_tool '))).toHaveLength(tools.length);
  const messages = events.filter((e) => ['agent', 'reasoning', 'warning', 'error'].includes(e.type));
  expect(spans.flatMap((s) => s.events)).toHaveLength(messages.length);
  // Starts and event times are observed times: an event's, the run's start, or the result's when it came first.
  const observed = new Set([...events.map((e) => Date.parse(e.timestamp)), Date.parse(result.started_at), T0 + startMs]);
  expect(spans.every((s) => observed.has(s.start) && s.events.every((e) => observed.has(e.at)))).toBe(true);
  // Nothing more once the run is over.
  expect(fold.event(events.length + 1, { type: 'agent', timestamp: new Date(T0).toISOString(), message: 'late' })).toEqual([]);
});

const TOOLS = ['command', 'read', 'write', 'search', 'list', 'skill'];
const MESSAGES = ['agent', 'reasoning'];

test.prop([fc.array(fc.tuple(eventArb, fc.boolean()), { maxLength: 60 }), when, fc.subarray(['a', 'b', 'c'])], { numRuns: 300 })('leaving any tool calls, messages and raw output out changes no session, only what they alone made', (marked, endMs, ids) => {
  const events = marked.map(([e]) => e);
  const canLeaveOut = (e: HarnessEvent) => TOOLS.includes(e.type) || MESSAGES.includes(e.type) || e.type === 'unknown';
  const whole = new RunSpanFold({ runId: 'r', harness: 'h', model: 'm', startedAt: T0 });
  const thinned = new RunSpanFold({ runId: 'r', harness: 'h', model: 'm', startedAt: T0 });
  const result = resultAt(endMs, ids);
  const all = [...replay([...events.flatMap((e, i) => whole.event(i + 1, e)), ...whole.result(result)]).values()];
  const ops = marked.flatMap(([e, leave], i) =>
    leave && canLeaveOut(e) ? thinned.leftOut({ at: Date.parse(e.timestamp), sessionId: 'session_id' in e ? e.session_id : undefined, tools: TOOLS.includes(e.type) ? 1 : 0, messages: MESSAGES.includes(e.type) ? 1 : 0 }) : thinned.event(i + 1, e),
  );
  const kept = [...replay([...ops, ...thinned.result(result)]).values()];
  const shape = (s: (typeof all)[number]) => `${s.name} ${s.start} ${s.end}`;
  const notTools = (spans: typeof all) => spans.filter((s) => !s.name.startsWith('execute_tool ')).map(shape).sort();
  expect(notTools(kept)).toEqual(notTools(all));
  const leftOut = marked.filter(([e, leave]) => leave && canLeaveOut(e)).map(([e]) => e);
  expect(kept.filter((s) => s.name.startsWith('execute_tool '))).toHaveLength(all.filter((s) => s.name.startsWith('execute_tool ')).length - leftOut.filter((e) => TOOLS.includes(e.type)).length);
  const sum = (key: string) => kept.reduce((n, s) => n + Number(s.attributes[key] ?? 0), 0);
  expect(sum('tcab.trace.tool_spans_left_out')).toBe(leftOut.filter((e) => TOOLS.includes(e.type)).length);
  expect(sum('tcab.trace.messages_left_out')).toBe(leftOut.filter((e) => MESSAGES.includes(e.type)).length);
});
