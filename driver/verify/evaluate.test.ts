import { describe, expect, it } from 'vitest';
import { evaluateScenario } from './evaluate.ts';
import { Scenario } from '../../shared/scenario.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';

const t = '2026-12-02T12:00:00.000Z';
const scenario = Scenario.parse({
  description: 'd',
  script: { steps: [{ text: 'x' }] },
  expect: { events: { command: 2, agent: 1 }, fields: { command: ['exit_code', 'is_success'] } },
});
const result = (over: Partial<RunResult> = {}): RunResult => ({
  run_id: 'r', harness_slug: 'h', harness_version: '1.0.0', model: 'm', canonical_model: null, outcome: 'succeeded', message: '', auth_mode: 'api-key',
  sessions: [{ index: 0, session_id: 's', exit_code: 0, signal: null, tokens: null, reported_cost_usd: null, is_error: false, duration_ms: 1, counts: {} }],
  session_ids: ['s'], exit_code: 0, stages: [], tokens: { input: 1, output: 1, cache_read: null, cache_write: null, reasoning: null }, raw_usage: null,
  reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: t, finished_at: t, event_count: 0, ...over,
});

describe('evaluateScenario', () => {
  it('passes when every expectation holds', () => {
    const events: HarnessEvent[] = [
      { type: 'command', timestamp: t, command: 'a', is_success: true },
      { type: 'command', timestamp: t, command: 'b', is_success: false, exit_code: 3 },
      { type: 'agent', timestamp: t, message: 'm' },
    ];
    expect(evaluateScenario('s', scenario, events, result())).toMatchObject({ verdict: 'pass', problems: [], counts: { command: 2, agent: 1 } });
  });

  it('reports every kind of drift: unknowns with samples, missing events, unfilled fields, outcome, usage, session id', () => {
    const events: HarnessEvent[] = [
      { type: 'command', timestamp: t, command: 'a' },
      { type: 'unknown', timestamp: t, raw: { type: 'new_record' } },
    ];
    const report = evaluateScenario('s', scenario, events, result({ outcome: 'harness_failed', message: 'boom', tokens: null, session_ids: [] }));
    expect(report.verdict).toBe('fail');
    expect(report.unknown).toEqual({ count: 1, samples: [{ type: 'new_record' }] });
    expect(report.missing_events).toEqual({ command: { expected: 2, seen: 1 }, agent: { expected: 1, seen: 0 } });
    expect(report.unfilled_fields).toEqual({ command: ['exit_code', 'is_success'] });
    expect(report.problems).toEqual([
      '1 unknown event(s) (allowed: 0)',
      'missing events: command 1/2, agent 0/1',
      'fields never filled: command.exit_code, command.is_success',
      'outcome harness_failed (expected succeeded): boom',
      'no usage reported',
      'no session id reported',
    ]);
  });

  it('a scenario for a CLI that has no session id (aider) does not ask for one', () => {
    const none = Scenario.parse({ description: 'd', script: { steps: [{ text: 'x' }] }, expect: { session_id: false } });
    const noId = result({ session_ids: [], sessions: [{ ...result().sessions[0]!, session_id: null }] });
    expect(evaluateScenario('s', none, [], noId)).toMatchObject({ verdict: 'pass', problems: [] });
    expect(evaluateScenario('s', Scenario.parse({ description: 'd', script: { steps: [{ text: 'x' }] }, expect: {} }), [], noId).problems).toEqual(['no session id reported']);
  });
});
