// Judges one verify scenario's translated run against what the scenario expects. Pure: events and result in,
// a report out. Drift in a new CLI release shows up here as unknown events, missing event types, optional
// fields never filled, a wrong outcome, or missing usage.
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import type { Scenario } from '../../shared/scenario.ts';

export interface ScenarioReport {
  scenario: string;
  description: string;
  verdict: 'pass' | 'fail';
  outcome: RunResult['outcome'];
  harness_version: string | null;
  counts: Record<string, number>;
  unknown: { count: number; samples: unknown[] };
  missing_events: Record<string, { expected: number; seen: number }>;
  unfilled_fields: Record<string, string[]>;
  problems: string[];
}

export function evaluateScenario(name: string, scenario: Scenario, events: HarnessEvent[], result: RunResult): ScenarioReport {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  const unknown = events.filter((e) => e.type === 'unknown');
  const problems: string[] = [];

  const missing_events: ScenarioReport['missing_events'] = {};
  for (const [type, expected] of Object.entries(scenario.expect.events)) {
    const seen = counts[type] ?? 0;
    if (expected !== undefined && seen < expected) missing_events[type] = { expected, seen };
  }
  const unfilled_fields: ScenarioReport['unfilled_fields'] = {};
  for (const [type, fields] of Object.entries(scenario.expect.fields)) {
    const ofType = events.filter((e) => e.type === type) as unknown as Record<string, unknown>[];
    const never = (fields ?? []).filter((f) => !ofType.some((e) => e[f] !== undefined));
    if (never.length > 0) unfilled_fields[type] = never;
  }
  if (unknown.length > scenario.expect.max_unknown) problems.push(`${unknown.length} unknown event(s) (allowed: ${scenario.expect.max_unknown})`);
  if (Object.keys(missing_events).length > 0) problems.push(`missing events: ${Object.entries(missing_events).map(([t, m]) => `${t} ${m.seen}/${m.expected}`).join(', ')}`);
  if (Object.keys(unfilled_fields).length > 0) problems.push(`fields never filled: ${Object.entries(unfilled_fields).map(([t, f]) => `${t}.${f.join(`, ${t}.`)}`).join(', ')}`);
  if (result.outcome !== scenario.expect.outcome) problems.push(`outcome ${result.outcome} (expected ${scenario.expect.outcome}): ${result.message}`);
  if (scenario.expect.usage && result.tokens === null) problems.push('no usage reported');
  if (scenario.expect.session_id && result.session_ids.length === 0 && result.sessions.length > 0) problems.push('no session id reported');

  return {
    scenario: name,
    description: scenario.description,
    verdict: problems.length === 0 ? 'pass' : 'fail',
    outcome: result.outcome,
    harness_version: result.harness_version,
    counts,
    unknown: { count: unknown.length, samples: unknown.slice(0, 3).map((e) => (e.type === 'unknown' ? e.raw : null)) },
    missing_events,
    unfilled_fields,
    problems,
  };
}
