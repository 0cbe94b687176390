// Property: toAtif is total. Any event sequence the contract allows, in any order, with or without a result,
// spec or usage, converts without throwing into a document the ATIF schema accepts, whose steps count matches
// final_metrics and whose events are all accounted for (a step, a call, a subagent result or a left-out count).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toAtif } from './convert.ts';
import { AtifTrajectory } from './schema.ts';
import { HarnessEvent } from '../../shared/events.ts';
import { atifInputArb, eventArb } from '../../test/support/event-arbitrary.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? 24);

describe('toAtif on arbitrary input', () => {
  it('the generator makes only events the contract accepts', () => {
    fc.assert(fc.property(eventArb, (event) => HarnessEvent.safeParse(event).success), { numRuns: RUNS, seed: SEED });
  });

  it('never throws and always gives a trajectory the ATIF schema accepts, with sequential steps', () => {
    fc.assert(
      fc.property(atifInputArb, (input) => {
        const trajectory = toAtif(input);
        const parsed = AtifTrajectory.safeParse(trajectory);
        if (!parsed.success) throw new Error(parsed.error.message);
        expect(trajectory.steps.map((s) => s.step_id)).toEqual(trajectory.steps.map((_, i) => i + 1));
        expect(trajectory.final_metrics?.total_steps).toBe(trajectory.steps.length);
        // JSON-clean: what we return is what a file or an HTTP body carries.
        expect(JSON.parse(JSON.stringify(trajectory))).toEqual(trajectory);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('every tool call and every message of the stream is in the trajectory; nothing is lost silently', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const t = toAtif({ runId: 'r', events });
        const calls = t.steps.flatMap((s) => s.tool_calls ?? []).map((c) => c.tool_call_id);
        const expected = events.flatMap((e, i) => (['command', 'read', 'write', 'search', 'list', 'skill'].includes(e.type) || (e.type === 'orchestration' && e.action === 'subagent_started') ? [`tcab-event-${i + 1}`] : []));
        expect(calls).toEqual(expected);
        const agentMessages = t.steps.filter((s) => s.source === 'agent').map((s) => s.message).filter((m) => m !== '');
        expect(agentMessages).toEqual(events.flatMap((e) => (e.type === 'agent' && e.message !== '' ? [e.message] : [])));
        const extra = t.extra as { tcab: { left_out: { unknown: number; system: number } } };
        expect(extra.tcab.left_out.unknown).toBe(events.filter((e) => e.type === 'unknown').length);
        expect(t.steps.filter((s) => s.source === 'system' && (s.extra?.tcab_type === 'error' || s.extra?.tcab_type === 'warning')).length).toBe(events.filter((e) => e.type === 'error' || e.type === 'warning').length);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
