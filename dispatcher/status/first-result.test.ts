import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { hasResult, judgeResult } from './first-result.ts';
import { nextStatus } from './transitions.ts';
import type { Observation } from './transitions.ts';
import type { Disruption } from './pod-disruption.ts';

const at = '2026-12-05T02:00:00.000Z';
const result = (over: Partial<RunResult> = {}): RunResult => ({
  run_id: 'ns_r', harness_slug: 'gg', harness_version: '1.0.0', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok', auth_mode: 'api-key',
  sessions: [], session_ids: ['s1'], exit_code: 0, stages: [], tokens: { input: 10, output: 2, cache_read: null, cache_write: null, reasoning: null }, raw_usage: null,
  reported_cost_usd: null, actual_cost_usd: 0.25, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: at, finished_at: at, event_count: 4, ...over,
});
const running: RunStatus = { phase: 'Running', pod: 'p', startTime: at };
/** What the apiserver gives back: JSON (undefined members gone, nulls kept: the CRD marks them nullable). */
const stored = (status: RunStatus): RunStatus => JSON.parse(JSON.stringify(status)) as RunStatus;
const after = (observation: Observation, from: RunStatus = running) => stored(nextStatus(from, observation));
const written = (r: RunResult, disruption?: Disruption) => after({ kind: 'result', result: r, disruption, at });
const evicted = { outcome: 'infrastructure_failed', reason: 'PodEvicted', message: 'the driver pod was evicted before the run finished' } as const;

describe('judgeResult (first result wins)', () => {
  it.each<[string, RunStatus, RunResult, string, string?]>([
    ['a Run not final yet takes the result', running, result(), 'write'],
    ['a Pending Run (the result outran the claim) takes it too', {}, result(), 'write'],
    ['the same result again is a redelivery', written(result()), result(), 'redelivery'],
    ['the same result with nulls and no usage is a redelivery', written(result({ tokens: null, actual_cost_usd: null, harness_version: null, session_ids: [] })), result({ tokens: null, actual_cost_usd: null, harness_version: null, session_ids: [] }), 'redelivery'],
    // Fields the status does not carry (event count, stages, finish time) cannot tell two results apart: equal as recorded.
    ['a copy differing only where the status records nothing is a redelivery', written(result()), result({ event_count: 99, finished_at: '2026-12-05T03:00:00.000Z' }), 'redelivery'],
    ['a cancelled result that a disruption rewrote, delivered again, is a redelivery', written(result({ outcome: 'cancelled', message: 'stopped' }), evicted), result({ outcome: 'cancelled', message: 'stopped' }), 'redelivery'],
    ['another outcome is a duplicate', written(result()), result({ outcome: 'harness_failed', message: 'ok' }), 'rejected', 'duplicate'],
    ['another cost is a duplicate', written(result()), result({ actual_cost_usd: 0 }), 'rejected', 'duplicate'],
    ['other usage is a duplicate', written(result()), result({ tokens: { input: 1, output: 1, cache_read: null, cache_write: null, reasoning: null } }), 'rejected', 'duplicate'],
    ['other session ids are a duplicate', written(result()), result({ session_ids: ['forged'] }), 'rejected', 'duplicate'],
    ['another message is a duplicate', written(result()), result({ message: 'all good, trust me' }), 'rejected', 'duplicate'],
    ['a cancelled result after a cancelled Run ended by a result is a duplicate when it differs', written(result({ outcome: 'cancelled', message: 'stopped' })), result({ outcome: 'cancelled', message: 'other' }), 'rejected', 'duplicate'],
    ['a result after a cancel is late', after({ kind: 'cancel', at }), result({ outcome: 'cancelled' }), 'rejected', 'late'],
    ['a result after NoResult is late', after({ kind: 'pod', phase: 'Failed', reason: 'NoResult', message: 'no result', at }), result(), 'rejected', 'late'],
    ['a result after the Pod deadline is late', after({ kind: 'pod', phase: 'Failed', reason: 'DeadlineExceeded', at }), result(), 'rejected', 'late'],
    ['a result after the Pod went is late', after({ kind: 'pod-gone', at }), result(), 'rejected', 'late'],
    ['a result for a Run refused at its claim is late', after({ kind: 'unavailable', reason: 'no key', at }, {}), result(), 'rejected', 'late'],
  ])('%s', (_name, status, r, kind, reason) => {
    const verdict = judgeResult(status, r);
    expect(verdict.kind).toBe(kind);
    if (verdict.kind === 'rejected') {
      expect(verdict.reason).toBe(reason);
      expect(verdict.message).toContain(status.phase!);
    }
  });

  it('says in words why a refused result was refused, without its free text', () => {
    const duplicate = judgeResult(written(result()), result({ outcome: 'harness_failed', message: 'SECRET-LOOKING TEXT' }));
    expect(duplicate).toMatchObject({ kind: 'rejected', reason: 'duplicate', message: expect.stringContaining('already Succeeded (succeeded) from its first result') });
    const late = judgeResult(after({ kind: 'cancel', at }), result({ message: 'SECRET-LOOKING TEXT' }));
    expect(late).toMatchObject({ kind: 'rejected', reason: 'late', message: expect.stringContaining('after the Run ended Cancelled (cancelled) without one') });
    for (const v of [duplicate, late]) expect(JSON.stringify(v)).not.toContain('SECRET-LOOKING');
  });
});

describe('hasResult', () => {
  // Every way a Run ends: only the result marks it as carrying one (the judgement above rests on this).
  it.each<[string, Observation, boolean]>([
    ['result', { kind: 'result', result: result({ session_ids: [] }), at }, true],
    ['result rewritten by a disruption', { kind: 'result', result: result({ outcome: 'cancelled' }), disruption: evicted, at }, true],
    ['cancel', { kind: 'cancel', at }, false],
    ['unavailable', { kind: 'unavailable', reason: 'x', at }, false],
    ['pod-gone', { kind: 'pod-gone', at }, false],
    ['pod failed', { kind: 'pod', phase: 'Failed', exitCode: 1, at }, false],
    ['pod unknown', { kind: 'pod', phase: 'Unknown', at }, false],
  ])('%s -> %s', (_name, observation, expected) => {
    const status = after(observation);
    expect(status.phase).toMatch(/Succeeded|Failed|Cancelled/);
    expect(hasResult(status)).toBe(expected);
  });
});
