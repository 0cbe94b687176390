import { describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult, SessionRecord } from '../../shared/run.ts';
import { RunSpanFold } from './fold.ts';
import type { SpanOperation } from './fold.ts';
import { MAX_TEXT } from './attributes.ts';
import { replay } from './span-records.ts';

const T0 = Date.UTC(2026, 11, 5, 4, 0, 0);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const identity = { runId: 'run-1', harness: 'claude', model: 'claude-sonnet-4-5' };

function session(over: Partial<SessionRecord> = {}): SessionRecord {
  return { index: 0, session_id: 's-1', exit_code: 0, signal: null, tokens: null, reported_cost_usd: null, is_error: null, duration_ms: 1000, counts: {}, ...over };
}

function result(over: Partial<RunResult> = {}): RunResult {
  return {
    run_id: 'run-1', harness_slug: 'claude', harness_version: '2.1.332', model: 'claude-sonnet-4-5', canonical_model: 'anthropic/claude-sonnet-4-5', outcome: 'succeeded', message: '1 session(s) completed', auth_mode: 'api-key',
    sessions: [session()], session_ids: ['s-1'], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
    started_at: at(0), finished_at: at(100), event_count: 0, ...over,
  };
}

/** Folds events (seq from 1) then the result, and replays the operations into span records. */
function run(events: HarnessEvent[], end?: RunResult) {
  const fold = new RunSpanFold(identity);
  const ops: SpanOperation[] = events.flatMap((e, i) => fold.event(i + 1, e));
  if (end) ops.push(...fold.result(end));
  const spans = replay(ops);
  const byName = (name: string) => [...spans.values()].filter((s) => s.name === name);
  return { ops, spans, byName, one: (name: string) => { const found = byName(name); expect(found).toHaveLength(1); return found[0]!; } };
}

describe('RunSpanFold: a run as GenAI spans', () => {
  it('builds run -> stages and invoke_agent -> execute_tool / subagent, with events, usage and cost', () => {
    const { spans, one, byName } = run(
      [
        { type: 'system', timestamp: at(1), stage: 'install_harness', status: 'started', message: 'installing' },
        { type: 'system', timestamp: at(5), stage: 'install_harness', status: 'completed', message: 'installed 2.1.332' },
        { type: 'reasoning', timestamp: at(10), session_id: 's-1', message: 'think' },
        { type: 'agent', timestamp: at(11), session_id: 's-1', message: 'Let me list files.' },
        { type: 'command', timestamp: at(12), session_id: 's-1', command: 'ls -la', exit_code: 0, is_success: true, tool_name: 'Bash', working_directory: '/w' },
        { type: 'write', timestamp: at(13), session_id: 's-1', path: '/w/a.txt', start_line: 1, end_line: 2, is_success: false, tool_name: 'Write' },
        { type: 'orchestration', timestamp: at(14), session_id: 's-1', action: 'subagent_started', subagent_id: 'sa-1', subagent_name: 'general-purpose' },
        { type: 'orchestration', timestamp: at(20), session_id: 's-1', action: 'subagent_completed', subagent_id: 'sa-1', subagent_name: 'general-purpose', is_success: true },
        { type: 'warning', timestamp: at(21), session_id: 's-1', message: 'stderr line', code: 'stderr' },
        { type: 'error', timestamp: at(22), session_id: 's-1', message: 'API error 500', code: 'api_error' },
        { type: 'unknown', timestamp: at(23), session_id: 's-1', raw: { odd: true } },
        { type: 'system', timestamp: at(30), stage: 'teardown', status: 'started', message: 'tearing down' },
        { type: 'system', timestamp: at(31), stage: 'teardown', status: 'completed', message: 'done' },
      ],
      result({
        sessions: [session({ tokens: { input: 100, output: 50, cache_read: 1000, cache_write: 10, reasoning: null }, reported_cost_usd: 0.5 })],
        tokens: { input: 100, output: 50, cache_read: 1000, cache_write: 10, reasoning: null },
        reported_cost_usd: 0.5, actual_cost_usd: 0.5, comparable_cost_usd: 0.42, event_count: 13, finished_at: at(32),
      }),
    );
    const root = one('invoke_workflow tcab.run');
    expect(root).toMatchObject({ parent: null, start: T0 + 1000, end: T0 + 32_000, error: undefined });
    expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.agent.name': 'claude', 'gen_ai.request.model': 'claude-sonnet-4-5', 'tcab.run.id': 'run-1', 'tcab.outcome': 'succeeded', 'tcab.harness.version': '2.1.332', 'gen_ai.usage.input_tokens': 1110, 'tcab.usage.input_uncached_tokens': 100, 'gen_ai.usage.output_tokens': 50, 'gen_ai.usage.cache_read.input_tokens': 1000, 'gen_ai.usage.cache_creation.input_tokens': 10, 'tcab.cost.actual_usd': 0.5, 'tcab.cost.comparable_usd': 0.42, 'tcab.cost.reported_usd': 0.5 });
    expect(root.attributes).not.toHaveProperty('gen_ai.usage.reasoning.output_tokens'); // not reported: absent, not 0
    expect(one('tcab.stage install_harness')).toMatchObject({ parent: 'run', start: T0 + 1000, end: T0 + 5000, attributes: { 'tcab.stage.message': 'installed 2.1.332' } });
    expect(one('tcab.stage teardown')).toMatchObject({ parent: 'run', start: T0 + 30_000, end: T0 + 31_000 });

    const agent = byName('invoke_agent claude');
    expect(agent).toHaveLength(1);
    expect(agent[0]).toMatchObject({ parent: 'run', start: T0 + 10_000, end: T0 + 23_000, error: undefined });
    expect(agent[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': 's-1', 'gen_ai.usage.input_tokens': 1110, 'tcab.cost.reported_usd': 0.5, 'tcab.session.exit_code': 0 });
    expect(agent[0]!.events.map((e) => e.name)).toEqual(['tcab.reasoning', 'tcab.agent', 'tcab.warning', 'exception']);
    expect(agent[0]!.events[3]!.attributes).toEqual({ 'exception.type': 'api_error', 'exception.message': 'API error 500' });

    const bash = one('execute_tool Bash');
    expect(bash).toMatchObject({ parent: agent[0]!.span, start: T0 + 12_000, end: T0 + 12_000, error: undefined });
    expect(bash.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'Bash', 'gen_ai.tool.type': 'function', 'tcab.tool.kind': 'command', 'tcab.command': 'ls -la', 'process.exit.code': 0, 'tcab.working_directory': '/w' });
    expect(one('execute_tool Write')).toMatchObject({ error: 'write failed', attributes: { 'file.path': '/w/a.txt', 'tcab.start_line': 1, 'error.type': 'tool_failed', 'tcab.tool.success': false } });
    expect(one('invoke_agent general-purpose')).toMatchObject({ parent: agent[0]!.span, start: T0 + 14_000, end: T0 + 20_000, attributes: { 'gen_ai.agent.id': 'sa-1', 'tcab.subagent': true } });
    expect(spans.size).toBe(7);
  });

  it('opens one invoke_agent span per session id and gives each the usage of its own sessions', () => {
    const { byName } = run(
      [
        { type: 'agent', timestamp: at(10), session_id: 'a', message: 'one' },
        { type: 'agent', timestamp: at(20), session_id: 'b', message: 'two' },
        { type: 'agent', timestamp: at(25), message: 'no id: the current session' },
      ],
      result({
        sessions: [session({ index: 0, session_id: 'a', tokens: { input: 1, output: 2, cache_read: null, cache_write: null, reasoning: null } }), session({ index: 1, session_id: 'b', exit_code: 1, tokens: { input: 3, output: 4, cache_read: null, cache_write: null, reasoning: null } })],
        outcome: 'harness_failed', message: 'session 2 exited with 1',
      }),
    );
    const [a, b] = byName('invoke_agent claude');
    expect(a).toMatchObject({ start: T0 + 10_000, end: T0 + 10_000, error: undefined, attributes: { 'gen_ai.conversation.id': 'a', 'gen_ai.usage.input_tokens': 1, 'gen_ai.usage.output_tokens': 2, 'tcab.session.index': 0 } });
    expect(b).toMatchObject({ start: T0 + 20_000, end: T0 + 25_000, error: 'session 2 exited with 1', attributes: { 'gen_ai.conversation.id': 'b', 'gen_ai.usage.input_tokens': 3, 'tcab.session.index': 1 } });
    expect(b!.events).toHaveLength(2);
    expect(byName('invoke_workflow tcab.run')[0]).toMatchObject({ error: 'harness_failed: session 2 exited with 1' });
  });

  it('names a session by the id its harness reports after its first lines', () => {
    const { ops, byName } = run([
      { type: 'warning', timestamp: at(1), message: 'before any session: on the run' },
      { type: 'agent', timestamp: at(2), message: 'first line, no id yet' },
      { type: 'agent', timestamp: at(3), session_id: 'late', message: 'now with its id' },
    ], result({ sessions: [session({ session_id: 'late' })] }));
    expect(byName('invoke_agent claude')).toHaveLength(1);
    expect(byName('invoke_agent claude')[0]!.attributes['gen_ai.conversation.id']).toBe('late');
    expect(byName('invoke_workflow tcab.run')[0]!.events.map((e) => e.attributes['tcab.message'])).toEqual(['before any session: on the run']);
    expect(ops.filter((o) => o.op === 'set' && o.attributes['gen_ai.conversation.id'] === 'late')).toHaveLength(1);
  });

  it("puts the test case's check verdict on the run span (issue 39); a reward not written is absent, not 0", () => {
    const events: HarnessEvent[] = [{ type: 'agent', timestamp: at(2), session_id: 's-1', message: 'done' }];
    const checked = run(events, result({ check: { passed: true, exit_code: 0, reward: null, duration_ms: 700, output_tail: 'ok' } })).one('invoke_workflow tcab.run');
    expect(checked.attributes).toMatchObject({ 'tcab.check.passed': true, 'tcab.check.exit_code': 0, 'tcab.check.duration_ms': 700 });
    expect(checked.attributes).not.toHaveProperty('tcab.check.reward');
    expect(run(events, result({})).one('invoke_workflow tcab.run').attributes).not.toHaveProperty('tcab.check.passed');
  });

  it('puts a driver failure before any session on the run span and fails the run and the stage', () => {
    const { spans, one } = run(
      [
        { type: 'system', timestamp: at(1), stage: 'install_harness', status: 'started', message: 'installing' },
        { type: 'system', timestamp: at(2), stage: 'install_harness', status: 'failed', message: 'npm ERR! 404' },
        { type: 'error', timestamp: at(3), message: 'install failed: npm ERR! 404', code: 'install_harness_failed' },
      ],
      result({ outcome: 'infrastructure_failed', message: 'install failed: npm ERR! 404', sessions: [], session_ids: [], finished_at: at(4) }),
    );
    expect(spans.size).toBe(2);
    expect(one('tcab.stage install_harness').error).toBe('npm ERR! 404');
    const root = one('invoke_workflow tcab.run');
    expect(root.error).toBe('infrastructure_failed: install failed: npm ERR! 404');
    expect(root.events).toEqual([{ name: 'exception', at: T0 + 3000, attributes: { 'exception.type': 'install_harness_failed', 'exception.message': 'install failed: npm ERR! 404' } }]);
  });

  it('ends what is still open when the run stops without a result, and nothing after', () => {
    const fold = new RunSpanFold(identity);
    const ops = [
      ...fold.event(1, { type: 'system', timestamp: at(1), stage: 'probe_harness', status: 'started', message: 'probing' }),
      ...fold.event(2, { type: 'orchestration', timestamp: at(2), session_id: 's', action: 'subagent_started', subagent_name: 'helper' }),
      ...fold.abandon(T0 + 9000, 'the driver stopped before the run had a result'),
    ];
    const spans = replay(ops);
    expect([...spans.values()].every((s) => s.end !== undefined)).toBe(true);
    expect(spans.get('run')).toMatchObject({ end: T0 + 9000, error: 'the driver stopped before the run had a result' });
    expect(spans.get('stage:probe_harness:1')!.end).toBe(T0 + 9000);
    expect(fold.event(3, { type: 'agent', timestamp: at(10), message: 'late' })).toEqual([]);
    expect(fold.result(result())).toEqual([]);
  });

  it('records a subagent that completes without a start, and a failed one, as spans of their session', () => {
    const { byName } = run([
      { type: 'orchestration', timestamp: at(5), session_id: 's-1', action: 'subagent_completed', subagent_name: 'explorer', is_success: true },
      { type: 'orchestration', timestamp: at(6), session_id: 's-1', action: 'subagent_started', subagent_id: 'x' },
      { type: 'orchestration', timestamp: at(8), session_id: 's-1', action: 'subagent_failed', subagent_id: 'x' },
    ], result());
    expect(byName('invoke_agent explorer')[0]).toMatchObject({ start: T0 + 5000, end: T0 + 5000, error: undefined });
    expect(byName('invoke_agent subagent')[0]).toMatchObject({ start: T0 + 6000, end: T0 + 8000, error: 'subagent failed' });
  });

  it('starts the run span when the run began, when that is known and not after its first event', () => {
    const first: HarnessEvent = { type: 'agent', timestamp: at(5), session_id: 's', message: 'hi' };
    const began = replay(new RunSpanFold({ ...identity, startedAt: T0 + 2000 }).event(1, first));
    expect(began.get('run')!.start).toBe(T0 + 2000);
    expect(began.get('session:1')!.start).toBe(T0 + 5000);
    // A driver clock ahead of the harness's line times must not make the run start after its first event.
    expect(replay(new RunSpanFold({ ...identity, startedAt: T0 + 9000 }).event(1, first)).get('run')!.start).toBe(T0 + 5000);
  });

  it('cuts long text to a readable size and says how long it was', () => {
    const { one } = run([{ type: 'command', timestamp: at(1), session_id: 's', command: 'x'.repeat(MAX_TEXT + 10), is_success: true }], result());
    const command = one('execute_tool command').attributes['tcab.command'] as string;
    expect(command.startsWith('x'.repeat(MAX_TEXT))).toBe(true);
    expect(command.endsWith(`[${MAX_TEXT + 10} characters, cut]`)).toBe(true);
  });
});
