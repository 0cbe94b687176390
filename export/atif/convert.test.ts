// toAtif, case by case: how our events become ATIF steps, and that nothing is invented where the stream is silent.
import { describe, expect, it } from 'vitest';
import { toAtif } from './convert.ts';
import { AtifTrajectory } from './schema.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';

const T = (s: number) => `2026-12-05T10:00:${String(s).padStart(2, '0')}.000Z`;
const S = 'sess-1';

export function runResult(overrides: Partial<RunResult> = {}): RunResult {
  return {
    run_id: 'run-1',
    harness_slug: 'claude',
    harness_version: '2.1.332',
    model: 'claude-sonnet-4-5',
    canonical_model: 'anthropic/claude-sonnet-4.5',
    outcome: 'succeeded',
    message: 'the session exited 0',
    auth_mode: 'api-key',
    sessions: [{ index: 0, session_id: S, exit_code: 0, signal: null, tokens: null, reported_cost_usd: 0.5, is_error: false, duration_ms: 1200, counts: { agent: 1 } }],
    session_ids: [S],
    exit_code: 0,
    stages: [{ stage: 'install_harness', status: 'completed', duration_ms: 300 }],
    tokens: { input: 100, output: 10, cache_read: 40, cache_write: 5, reasoning: null },
    raw_usage: { secret_looking: 'not copied' },
    reported_cost_usd: 0.5,
    actual_cost_usd: 0.5,
    comparable_cost_usd: 0.42,
    catalog_version: '2026-12-01',
    cost_warnings: [],
    started_at: T(0),
    finished_at: T(59),
    event_count: 0,
    ...overrides,
  };
}

function convert(events: HarnessEvent[], extra: Partial<Parameters<typeof toAtif>[0]> = {}) {
  const trajectory = toAtif({ runId: 'run-1', events, ...extra });
  const parsed = AtifTrajectory.safeParse(trajectory);
  if (!parsed.success) throw new Error(`not ATIF: ${parsed.error.message}\n${JSON.stringify(trajectory, null, 2)}`);
  return trajectory;
}

describe('toAtif steps', () => {
  it('one agent turn: reasoning, message and its tool calls, with what tcab saw of each outcome', () => {
    const t = convert([
      { type: 'reasoning', timestamp: T(1), session_id: S, message: 'look first' },
      { type: 'reasoning', timestamp: T(2), session_id: S, message: 'then act' },
      { type: 'agent', timestamp: T(3), session_id: S, message: 'Listing.' },
      { type: 'command', timestamp: T(4), session_id: S, command: 'ls', working_directory: '/w', exit_code: 2, is_success: false, tool_name: 'Bash' },
      { type: 'read', timestamp: T(5), session_id: S, path: '/w/a', start_line: 1, end_line: 3 },
      { type: 'search', timestamp: T(6), session_id: S, query: 'foo', path: '/w', is_success: true, tool_name: 'Grep' },
    ]);
    expect(t.steps).toEqual([
      {
        step_id: 1,
        timestamp: T(1),
        source: 'agent',
        message: 'Listing.',
        reasoning_content: 'look first\n\nthen act',
        tool_calls: [
          { tool_call_id: 'tcab-event-4', function_name: 'Bash', arguments: { command: 'ls', working_directory: '/w' }, extra: { tcab_kind: 'command' } },
          { tool_call_id: 'tcab-event-5', function_name: 'read', arguments: { path: '/w/a', start_line: 1, end_line: 3 }, extra: { tcab_kind: 'read' } },
          { tool_call_id: 'tcab-event-6', function_name: 'Grep', arguments: { query: 'foo', path: '/w' }, extra: { tcab_kind: 'search' } },
        ],
        // The read's outcome was not reported: no result is made up for it.
        observation: {
          results: [
            { source_call_id: 'tcab-event-4', extra: { is_success: false, exit_code: 2 } },
            { source_call_id: 'tcab-event-6', extra: { is_success: true } },
          ],
        },
      },
    ]);
    expect(t.session_id).toBe(S);
    expect(t.trajectory_id).toBe('run-1');
  });

  it('a message or reasoning after tool calls starts the next turn; tool calls before any message get an empty one', () => {
    const t = convert([
      { type: 'write', timestamp: T(1), session_id: S, path: '/w/x', is_success: true, tool_name: 'Write' },
      { type: 'agent', timestamp: T(2), session_id: S, message: 'wrote it' },
      { type: 'agent', timestamp: T(3), session_id: S, message: 'and more' },
      { type: 'list', timestamp: T(4), session_id: S, tool_name: 'LS' },
      { type: 'reasoning', timestamp: T(5), session_id: S, message: 'done?' },
      { type: 'skill', timestamp: T(6), session_id: S, path: '/h/SKILL.md', skill_name: 'demo' },
    ]);
    expect(t.steps.map((s) => [s.step_id, s.timestamp, s.message, s.reasoning_content, s.tool_calls?.map((c) => c.function_name)])).toEqual([
      [1, T(1), '', undefined, ['Write']],
      [2, T(2), 'wrote it', undefined, undefined],
      [3, T(3), 'and more', undefined, ['LS']],
      [4, T(5), '', 'done?', ['skill']],
    ]);
    expect(t.steps[3]!.tool_calls![0]!.arguments).toEqual({ skill_name: 'demo', path: '/h/SKILL.md' });
  });

  it('a subagent is a tool call whose result lands in its own step when it finishes, later or never', () => {
    const t = convert([
      { type: 'agent', timestamp: T(1), session_id: S, message: 'delegating' },
      { type: 'orchestration', timestamp: T(2), session_id: S, action: 'subagent_started', subagent_id: 'a1', subagent_name: 'general-purpose' },
      { type: 'orchestration', timestamp: T(3), session_id: S, action: 'subagent_started', subagent_id: 'a2' },
      { type: 'orchestration', timestamp: T(4), session_id: S, action: 'subagent_started' },
      { type: 'agent', timestamp: T(5), session_id: S, message: 'waiting' },
      { type: 'orchestration', timestamp: T(6), session_id: S, action: 'subagent_completed', subagent_id: 'a1', subagent_name: 'general-purpose', is_success: true },
      { type: 'orchestration', timestamp: T(7), session_id: S, action: 'subagent_failed', is_success: false },
      { type: 'orchestration', timestamp: T(8), session_id: S, action: 'subagent_completed', subagent_id: 'zz' },
    ]);
    expect(t.steps[0]!.tool_calls).toEqual([
      { tool_call_id: 'tcab-event-2', function_name: 'subagent', arguments: { subagent_id: 'a1', subagent_name: 'general-purpose' }, extra: { tcab_kind: 'subagent' } },
      { tool_call_id: 'tcab-event-3', function_name: 'subagent', arguments: { subagent_id: 'a2' }, extra: { tcab_kind: 'subagent' } },
      { tool_call_id: 'tcab-event-4', function_name: 'subagent', arguments: {}, extra: { tcab_kind: 'subagent' } },
    ]);
    // a2 never finished: no result for it.
    expect(t.steps[0]!.observation).toEqual({
      results: [
        { source_call_id: 'tcab-event-2', extra: { status: 'completed', is_success: true, finished_at: T(6) } },
        { source_call_id: 'tcab-event-4', extra: { status: 'failed', is_success: false, finished_at: T(7) } },
      ],
    });
    expect(t.steps[1]).toMatchObject({ step_id: 2, message: 'waiting' });
    // A finish whose start is not in the stream: a system step, not a call we never saw.
    expect(t.steps[2]).toEqual({ step_id: 3, timestamp: T(8), source: 'system', message: 'subagent zz completed', extra: { tcab_type: 'orchestration', subagent_id: 'zz', status: 'completed', finished_at: T(8) } });
  });

  it('errors, warnings and failed driver stages are system steps where they happened; other stages and unknown lines are counted, not shown', () => {
    const t = convert([
      { type: 'system', timestamp: T(1), stage: 'install_harness', status: 'started', message: 'installing' },
      { type: 'system', timestamp: T(2), stage: 'install_harness', status: 'completed', message: 'installed' },
      { type: 'agent', timestamp: T(3), session_id: S, message: 'hi' },
      { type: 'warning', timestamp: T(4), session_id: S, message: 'rate limited', code: 'stderr' },
      { type: 'unknown', timestamp: T(5), session_id: S, raw: { weird: 'x'.repeat(100) } },
      { type: 'error', timestamp: T(6), session_id: 'sess-2', message: 'API error 400' },
      { type: 'system', timestamp: T(7), stage: 'init_test_case', status: 'failed', message: 'exit 1' },
    ]);
    expect(t.steps.slice(1)).toEqual([
      { step_id: 2, timestamp: T(4), source: 'system', message: 'rate limited', extra: { tcab_type: 'warning', code: 'stderr' } },
      { step_id: 3, timestamp: T(6), source: 'system', message: 'API error 400', extra: { tcab_type: 'error', session_id: 'sess-2' } },
      { step_id: 4, timestamp: T(7), source: 'system', message: 'init_test_case failed: exit 1', extra: { tcab_type: 'system', stage: 'init_test_case' } },
    ]);
    expect(t.extra).toEqual({ tcab: { run_id: 'run-1', event_count: 7, left_out: { unknown: 1, system: 2 } } });
    expect(JSON.stringify(t)).not.toContain('weird');
  });

  it('another session starts a new turn and names its session on the step', () => {
    const t = convert([
      { type: 'reasoning', timestamp: T(1), session_id: S, message: 'r1' },
      { type: 'agent', timestamp: T(2), session_id: 'sess-2', message: 'resumed' },
      { type: 'command', timestamp: T(3), session_id: 'sess-2', command: 'true' },
    ]);
    expect(t.steps.map((s) => [s.message, s.extra])).toEqual([
      ['', undefined],
      ['resumed', { session_id: 'sess-2' }],
    ]);
    expect(t.steps[1]!.tool_calls).toHaveLength(1);
  });
});

describe('toAtif run level', () => {
  it('the prompt is the first (undated) user step; agent, metrics and run facts come from the result', () => {
    const t = convert([{ type: 'agent', timestamp: T(3), session_id: S, message: 'All done.' }], {
      spec: { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Create hello.txt' },
      result: runResult({ event_count: 1 }),
    });
    expect(t.steps[0]).toEqual({ step_id: 1, source: 'user', message: 'Create hello.txt' });
    expect(t.agent).toEqual({ name: 'claude', version: '2.1.332', model_name: 'claude-sonnet-4-5', extra: { canonical_model: 'anthropic/claude-sonnet-4.5' } });
    expect(t.final_metrics).toEqual({
      total_prompt_tokens: 145, // input + cache read + cache write: ATIF counts cached prompt tokens in
      total_completion_tokens: 10,
      total_cached_tokens: 40,
      total_cost_usd: 0.5,
      total_steps: 2,
      extra: { tcab_tokens: { input: 100, output: 10, cache_read: 40, cache_write: 5, reasoning: null }, reported_cost_usd: 0.5, comparable_cost_usd: 0.42, catalog_version: '2026-12-01' },
    });
    expect(t.extra).toMatchObject({ tcab: { run_id: 'run-1', outcome: 'succeeded', session_ids: [S], started_at: T(0), finished_at: T(59), stages: [{ stage: 'install_harness', status: 'completed', duration_ms: 300 }] } });
    expect((t.extra as { tcab: { sessions: unknown[] } }).tcab.sessions).toEqual([{ index: 0, session_id: S, exit_code: 0, signal: null, is_error: false, duration_ms: 1200, tokens: null, reported_cost_usd: 0.5 }]);
    expect(t.schema_version).toBe('ATIF-v1.8');
    expect(JSON.stringify(t)).not.toContain('secret_looking');
  });

  it('a run through the model gateway carries what the gateway measured on the wire beside the harness\'s tokens (issue 34)', () => {
    const wire = { requests: 2, tokens: { input: 100, output: 12, cache_read: 40, cache_write: 5, reasoning: null }, cost_usd: 0.51, unmetered: 0, throttled: 0, refused: 0 };
    const t = toAtif({ runId: 'run-w', events: [], result: runResult({ wire }) });
    expect((t.final_metrics!.extra as Record<string, unknown>).tcab_wire).toEqual(wire);
    expect((toAtif({ runId: 'run-n', events: [], result: runResult({ wire: null }) }).final_metrics!.extra as Record<string, unknown>).tcab_wire).toBeUndefined();
  });

  it("the test case's check (issue 39) is among the run facts; a run without one has none", () => {
    const check = { passed: false, exit_code: 1, reward: 0.25, duration_ms: 900, output_tail: '1 failed' };
    expect((toAtif({ runId: 'run-c', events: [], result: runResult({ check }) }).extra as { tcab: Record<string, unknown> }).tcab.check).toEqual(check);
    expect((toAtif({ runId: 'run-d', events: [], result: runResult({}) }).extra as { tcab: Record<string, unknown> }).tcab).not.toHaveProperty('check');
  });

  it('a failed run ends with a system step at its finish time, saying the outcome and why', () => {
    const t = convert([{ type: 'error', timestamp: T(3), session_id: S, message: 'API Error: 401' }], {
      result: runResult({ outcome: 'harness_failed', message: 'the session exited 1', exit_code: 1, harness_version: null, tokens: null, actual_cost_usd: null, reported_cost_usd: null, comparable_cost_usd: null, cost_warnings: ['no usage'] }),
    });
    expect(t.steps.at(-1)).toEqual({ step_id: 2, timestamp: T(59), source: 'system', message: 'run harness_failed: the session exited 1', extra: { tcab_type: 'outcome', outcome: 'harness_failed' } });
    // Nothing reported, nothing claimed: no token totals, no cost, the version ATIF requires is "unknown".
    expect(t.final_metrics).toEqual({ total_steps: 2, extra: { cost_warnings: ['no usage'], catalog_version: '2026-12-01' } });
    expect(t.agent.version).toBe('unknown');
  });

  it('without a result, usage and the spec fill in what they can; with nothing at all there is still one step', () => {
    const t = convert([], { runId: undefined, usage: { tokens: { input: 5, output: null, cache_read: null, cache_write: null, reasoning: null }, cost_usd: null }, spec: { harness: 'gg', model: 'm' } });
    expect(t).toMatchObject({ agent: { name: 'gg', version: 'unknown', model_name: 'm' }, steps: [{ step_id: 1, source: 'system', message: 'tcab: the run recorded no activity' }] });
    expect(t.final_metrics).toEqual({ total_prompt_tokens: 5, total_steps: 1, extra: { tcab_tokens: { input: 5, output: null, cache_read: null, cache_write: null, reasoning: null } } });
    expect(t.steps[0]!.timestamp).toBeUndefined();
    expect(t).not.toHaveProperty('trajectory_id');
    expect(t).not.toHaveProperty('session_id');
  });
});
